// A SQLite extension for the tests (test/barrier.mjs builds it): barrier(n, ms) returns 1 once
// n calls are inside it at the same time, on n threads (each waits for the others), or 0 when
// ms pass first. Two statements that both get 1 ran at the same time: no timing is measured,
// so the machine's load cannot fail the check; statements that never overlap get 0.
#include <errno.h>
#include <pthread.h>
#include <sqlite3ext.h>
#include <time.h>
SQLITE_EXTENSION_INIT1

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int inside = 0;
static long generation = 0;

static void barrier(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  int n = sqlite3_value_int(argv[0]);
  sqlite3_int64 ms = sqlite3_value_int64(argv[1]);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += ms / 1000;
  deadline.tv_nsec += (ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&mu);
  long mine = generation;
  if (++inside >= n) {
    inside = 0;
    generation++;
    pthread_cond_broadcast(&cv);
  } else {
    while (generation == mine && pthread_cond_timedwait(&cv, &mu, &deadline) != ETIMEDOUT) {
    }
    if (generation == mine) inside--;
  }
  int met = generation != mine;
  pthread_mutex_unlock(&mu);
  sqlite3_result_int(ctx, met);
}

int sqlite3_barrier_init(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  (void)err;
  SQLITE_EXTENSION_INIT2(api);
  return sqlite3_create_function(db, "barrier", 2, SQLITE_UTF8, 0, barrier, 0, 0);
}
