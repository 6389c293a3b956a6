// LD_PRELOAD shim for the power-loss test (test/power-loss.test.mjs): logs, in the order they
// ran, the file calls a process makes on files under $PL_DIR, with the bytes written, to
// $PL_LOG. The parent replays the log to rebuild the files as a power cut at any point would
// leave them. The engine's SQLite calls libc through the PLT, so these definitions see its
// I/O (the set below is what `nm -D native/resqlite.node` lists: open64, pwrite64, write,
// ftruncate64, fsync, unlink, rename, close; the rest are for Node's own writes and safety).
//
// Each call runs and is logged under one lock, so the log's order is the order the calls took
// effect. Record: u8 op, u32 handle, u64 offset (or flags, or length), u32 size, then size bytes.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { OP_OPEN = 1, OP_WRITE, OP_TRUNC, OP_FSYNC, OP_CLOSE, OP_UNLINK, OP_RENAME };
#define MAX_FD 65536

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;
static char dir[4096];
static size_t dir_len;
static uint32_t next_handle = 1;
static uint32_t handles[MAX_FD]; // fd -> handle of a tracked file, 0 when not tracked

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off64_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_close)(int);
static int (*real_unlink)(const char *);
static int (*real_rename)(const char *, const char *);

__attribute__((constructor)) static void init(void) {
  real_open = dlsym(RTLD_NEXT, "open");
  real_open64 = dlsym(RTLD_NEXT, "open64");
  real_openat = dlsym(RTLD_NEXT, "openat");
  real_openat64 = dlsym(RTLD_NEXT, "openat64");
  real_write = dlsym(RTLD_NEXT, "write");
  real_pwrite = dlsym(RTLD_NEXT, "pwrite");
  real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
  real_writev = dlsym(RTLD_NEXT, "writev");
  real_ftruncate = dlsym(RTLD_NEXT, "ftruncate");
  real_ftruncate64 = dlsym(RTLD_NEXT, "ftruncate64");
  real_fsync = dlsym(RTLD_NEXT, "fsync");
  real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
  real_close = dlsym(RTLD_NEXT, "close");
  real_unlink = dlsym(RTLD_NEXT, "unlink");
  real_rename = dlsym(RTLD_NEXT, "rename");
  const char *d = getenv("PL_DIR");
  const char *l = getenv("PL_LOG");
  if (!d || !l || strlen(d) + 2 > sizeof dir) return;
  strcpy(dir, d);
  strcat(dir, "/");
  dir_len = strlen(dir);
  log_fd = (int)syscall(SYS_openat, AT_FDCWD, l, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
}

static void put(const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = syscall(SYS_write, log_fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) abort(); // a log with a hole would be replayed wrong: stop loudly instead
    c += w;
    n -= (size_t)w;
  }
}

static void record(uint8_t op, uint32_t handle, uint64_t offset, const void *data, uint32_t size) {
  unsigned char head[17];
  head[0] = op;
  memcpy(head + 1, &handle, 4);
  memcpy(head + 5, &offset, 8);
  memcpy(head + 13, &size, 4);
  put(head, sizeof head);
  if (size) put(data, size);
}

static int tracked_path(const char *path) { return log_fd >= 0 && path && strncmp(path, dir, dir_len) == 0; }
// The directory itself (opened to fsync it, which makes a rename in it durable).
static int is_dir(const char *path) {
  return log_fd >= 0 && path && strlen(path) == dir_len - 1 && strncmp(path, dir, dir_len - 1) == 0;
}
static uint32_t tracked_fd(int fd) { return fd >= 0 && fd < MAX_FD ? handles[fd] : 0; }

static void opened(int fd, const char *path, int flags) {
  if (fd < 0 || fd >= MAX_FD) return;
  handles[fd] = 0;
  if (!tracked_path(path) && !is_dir(path)) return;
  handles[fd] = next_handle++;
  // the directory is logged as its name with a slash
  record(OP_OPEN, handles[fd], (uint64_t)flags, is_dir(path) ? dir : path, (uint32_t)strlen(is_dir(path) ? dir : path));
}

#define OPEN_BODY(call)                                   \
  mode_t mode = 0;                                        \
  if (flags & (O_CREAT | O_TMPFILE)) {                    \
    va_list ap;                                           \
    va_start(ap, flags);                                  \
    mode = va_arg(ap, mode_t);                            \
    va_end(ap);                                           \
  }                                                       \
  pthread_mutex_lock(&lock);                              \
  int fd = call;                                          \
  int saved = errno;                                      \
  opened(fd, path, flags);                                \
  pthread_mutex_unlock(&lock);                            \
  errno = saved;                                          \
  return fd;

int open(const char *path, int flags, ...) { OPEN_BODY(real_open(path, flags, mode)) }
int open64(const char *path, int flags, ...) { OPEN_BODY(real_open64(path, flags, mode)) }
// Relative paths are not tracked (every file under $PL_DIR is opened by its absolute path).
int openat(int at, const char *path, int flags, ...) { OPEN_BODY(real_openat(at, path, flags, mode)) }
int openat64(int at, const char *path, int flags, ...) { OPEN_BODY(real_openat64(at, path, flags, mode)) }

static ssize_t positioned(int fd, const void *buf, size_t n, int64_t offset,
                          ssize_t (*call)(int, const void *, size_t, int64_t)) {
  pthread_mutex_lock(&lock);
  uint32_t h = tracked_fd(fd);
  // A write without an offset: the file position before it is where its bytes land.
  int64_t at = offset >= 0 ? offset : (h ? lseek64(fd, 0, SEEK_CUR) : 0);
  ssize_t w = call(fd, buf, n, offset);
  int saved = errno;
  if (h && w > 0) record(OP_WRITE, h, (uint64_t)at, buf, (uint32_t)w);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return w;
}
static ssize_t call_write(int fd, const void *b, size_t n, int64_t o) { (void)o; return real_write(fd, b, n); }
static ssize_t call_pwrite(int fd, const void *b, size_t n, int64_t o) { return real_pwrite(fd, b, n, (off_t)o); }
static ssize_t call_pwrite64(int fd, const void *b, size_t n, int64_t o) { return real_pwrite64(fd, b, n, o); }

ssize_t write(int fd, const void *buf, size_t n) { return positioned(fd, buf, n, -1, call_write); }
ssize_t pwrite(int fd, const void *buf, size_t n, off_t o) { return positioned(fd, buf, n, o, call_pwrite); }
ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t o) { return positioned(fd, buf, n, o, call_pwrite64); }

// Node's fs may gather buffers: logged as one write per buffer, at consecutive offsets.
ssize_t writev(int fd, const struct iovec *iov, int count) {
  pthread_mutex_lock(&lock);
  uint32_t h = tracked_fd(fd);
  int64_t at = h ? lseek64(fd, 0, SEEK_CUR) : 0;
  ssize_t w = real_writev(fd, iov, count);
  int saved = errno;
  if (h && w > 0) {
    size_t left = (size_t)w;
    for (int i = 0; i < count && left > 0; i++) {
      size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
      record(OP_WRITE, h, (uint64_t)at, iov[i].iov_base, (uint32_t)n);
      at += (int64_t)n;
      left -= n;
    }
  }
  pthread_mutex_unlock(&lock);
  errno = saved;
  return w;
}

#define FD_CALL(op, call, offset)                         \
  pthread_mutex_lock(&lock);                              \
  uint32_t h = tracked_fd(fd);                            \
  int r = call;                                           \
  int saved = errno;                                      \
  if (h && r == 0) record(op, h, (uint64_t)(offset), 0, 0); \
  pthread_mutex_unlock(&lock);                            \
  errno = saved;                                          \
  return r;

int ftruncate(int fd, off_t len) { FD_CALL(OP_TRUNC, real_ftruncate(fd, len), len) }
int ftruncate64(int fd, off64_t len) { FD_CALL(OP_TRUNC, real_ftruncate64(fd, len), len) }
int fsync(int fd) { FD_CALL(OP_FSYNC, real_fsync(fd), 0) }
int fdatasync(int fd) { FD_CALL(OP_FSYNC, real_fdatasync(fd), 0) }

int close(int fd) {
  pthread_mutex_lock(&lock);
  uint32_t h = tracked_fd(fd);
  if (h) handles[fd] = 0;
  int r = real_close(fd);
  int saved = errno;
  if (h) record(OP_CLOSE, h, 0, 0, 0);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

int unlink(const char *path) {
  pthread_mutex_lock(&lock);
  int r = real_unlink(path);
  int saved = errno;
  if (r == 0 && tracked_path(path)) record(OP_UNLINK, 0, 0, path, (uint32_t)strlen(path));
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

int rename(const char *from, const char *to) {
  pthread_mutex_lock(&lock);
  int r = real_rename(from, to);
  int saved = errno;
  if (r == 0 && (tracked_path(from) || tracked_path(to))) {
    char both[8194];
    size_t a = strlen(from), b = strlen(to);
    if (a + b + 1 < sizeof both) {
      memcpy(both, from, a);
      both[a] = 0;
      memcpy(both + a + 1, to, b);
      record(OP_RENAME, 0, 0, both, (uint32_t)(a + b + 1));
    } else {
      abort();
    }
  }
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}
