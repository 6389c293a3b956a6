//! `db.backup()`: SQLite's online backup API copying the database into a new file, in steps,
//! from a connection of its own; and `db.serialize()`'s image of the database.
//!
//! The source connection holds one read transaction for the whole copy, so the copy is the
//! database as it was when the backup began: in WAL mode the writer goes on committing meanwhile
//! and nothing restarts (SQLite restarts a backup only when its source connection sees another
//! connection's change, which a held snapshot never does). The pages go to a temporary file next
//! to the destination, which takes the destination's name only once complete, and never
//! replaces an existing file.

use std::os::raw::c_int;
use std::path::Path;

use sqlite3mc_sys as ffi;

use super::connection::Connection;
use super::encryption::{self, KeyConfig};
use crate::error::{code, DbError, DbResult};

/// Pages copied per step: 1 MiB of 4 KiB pages between progress reports and abort checks.
const PAGES_PER_STEP: c_int = 256;
/// How long to wait before retrying a step that met a lock.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_millis(5);

/// Where a backup is after a step.
pub struct Progress {
    pub remaining: u32,
    pub total: u32,
}

/// Copies the database open on `source` into a new file at `destination`, encrypted with `key`
/// (the source's: `None` for a plaintext source). After each step `step` hears the progress and
/// answers whether to go on; `false` stops the copy with `ABORT_ERR`. On any failure nothing is
/// left at `destination` or beside it.
pub fn backup(
    source: &Connection,
    destination: &str,
    key: Option<&KeyConfig>,
    mut step: impl FnMut(Progress) -> bool,
) -> DbResult<()> {
    if Path::new(destination).exists() {
        return Err(exists(destination));
    }
    let partial = format!("{destination}.resqlite-backup");
    let result = source.exec("BEGIN; SELECT count(*) FROM sqlite_schema").and_then(|_| {
        let copied = copy(source, &partial, key, &mut step);
        let _ = source.exec("COMMIT");
        copied
    });
    // Linked, not renamed: a file that appeared at `destination` meanwhile is never replaced.
    let result = result.and_then(|_| match std::fs::hard_link(&partial, destination) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists(destination)),
        Err(e) => Err(DbError::new(code::ERR_BACKUP, format!("cannot create '{destination}': {e}"))),
    });
    let _ = std::fs::remove_file(&partial);
    let _ = std::fs::remove_file(format!("{partial}-journal"));
    result
}

pub fn exists(destination: &str) -> DbError {
    DbError::new(
        code::ERR_INVALID_PATH,
        format!("the backup destination '{destination}' exists; backup makes a new file"),
    )
}

/// The backup proper, into `partial`; its connection is closed when this returns.
fn copy(
    source: &Connection,
    partial: &str,
    key: Option<&KeyConfig>,
    step: &mut impl FnMut(Progress) -> bool,
) -> DbResult<()> {
    let destination = partial.trim_end_matches(".resqlite-backup");
    let failed = |e: DbError| DbError { message: format!("backup to '{destination}': {}", e.message), ..e };
    let dest = open_destination(partial, ffi::SQLITE_OPEN_CREATE, key).map_err(failed)?;
    // SAFETY: `source` outlives `steps`, which is finished at the end of this function, and this
    // thread alone uses it meanwhile.
    let mut steps = unsafe { Steps::start(source, dest) }.map_err(failed)?;
    loop {
        let done = steps.step(PAGES_PER_STEP);
        let busy = matches!(done.rc & 0xff, ffi::SQLITE_BUSY | ffi::SQLITE_LOCKED);
        if done.rc != ffi::SQLITE_OK && done.rc != ffi::SQLITE_DONE && !busy {
            return Err(failed(steps.finish().unwrap_or_else(|| step_error(done.rc))));
        }
        let go_on = step(done.progress);
        if done.rc == ffi::SQLITE_DONE {
            return steps.finish().map_or(Ok(()), |e| Err(failed(e))); // complete: an abort now comes too late
        }
        if !go_on {
            return Err(DbError::new("ABORT_ERR", "the backup was aborted"));
        }
        if busy {
            std::thread::sleep(BUSY_WAIT);
        }
    }
}

/// The connection a backup writes into, at `path` (created with `create`, or opened as it is),
/// encrypted with `key`.
pub fn open_destination(path: &str, create: c_int, key: Option<&KeyConfig>) -> DbResult<Connection> {
    let flags = ffi::SQLITE_OPEN_READWRITE | create | ffi::SQLITE_OPEN_NOMUTEX | ffi::SQLITE_OPEN_EXRESCODE;
    let (dest, rc) = Connection::open(path, flags, 0)?;
    if rc != ffi::SQLITE_OK {
        return Err(dest.last_error());
    }
    if let Some(key) = key {
        encryption::key_connection(dest.raw(), key)?;
    }
    Ok(dest)
}

/// What a step of a backup returned: sqlite3_backup_step's result code (`SQLITE_DONE` once the
/// last page is copied and committed) and where the copy then is.
pub struct Stepped {
    pub rc: c_int,
    pub progress: Progress,
}

/// SQLite's backup of a source connection's main database into a destination's, stepped by its
/// owner (`db.backup()` above, and resqlite/sqlite3's Backup: threads/paused_backups.rs). Each
/// step opens a read transaction on the source unless it has one, and ends it; the destination
/// keeps its write transaction from the first step to the one that copies the last page.
/// Dropped unfinished, it is finished: the destination's copy is rolled back.
pub struct Steps {
    handle: *mut ffi::sqlite3_backup,
    dest: Connection,
}

// SAFETY: the handle and both connections are used by one thread at a time (its owner's).
unsafe impl Send for Steps {}

impl Steps {
    /// Starts the backup of `source`'s main database into `dest`'s.
    ///
    /// # Safety
    /// `source` stays open until the `Steps` is finished or dropped, and no other thread uses it
    /// during a step.
    pub unsafe fn start(source: &Connection, dest: Connection) -> DbResult<Steps> {
        let handle = ffi::sqlite3_backup_init(dest.raw(), c"main".as_ptr(), source.raw(), c"main".as_ptr());
        if handle.is_null() {
            return Err(dest.last_error());
        }
        Ok(Steps { handle, dest })
    }

    /// Copies up to `pages` pages (all those left when negative; none with 0, which only
    /// measures). Another connection's commit since the last step starts the copy over.
    pub fn step(&mut self, pages: c_int) -> Stepped {
        // SAFETY: a live backup handle (finished only by `finish` or drop).
        unsafe {
            let rc = ffi::sqlite3_backup_step(self.handle, pages);
            let remaining = ffi::sqlite3_backup_remaining(self.handle) as u32;
            let total = ffi::sqlite3_backup_pagecount(self.handle) as u32;
            Stepped { rc, progress: Progress { remaining, total } }
        }
    }

    /// Ends the backup (sqlite3_backup_finish): the destination's error when a step failed.
    pub fn finish(mut self) -> Option<DbError> {
        let rc = self.end();
        (rc != ffi::SQLITE_OK).then(|| self.dest.last_error())
    }

    fn end(&mut self) -> c_int {
        let handle = std::mem::replace(&mut self.handle, std::ptr::null_mut());
        // SAFETY: finished once (a null handle is a no-op for SQLite).
        unsafe { ffi::sqlite3_backup_finish(handle) }
    }
}

impl Drop for Steps {
    fn drop(&mut self) {
        self.end();
    }
}

/// A step's failure, as sqlite3's Backup words it (`sqlite3_errstr`).
pub fn step_error(rc: c_int) -> DbError {
    // SAFETY: sqlite3_errstr returns a static string for any code.
    let text = unsafe { std::ffi::CStr::from_ptr(ffi::sqlite3_errstr(rc)) };
    DbError::sqlite(rc, text.to_string_lossy())
}

/// The database open on `conn` as one image (`db.serialize()`): its pages as SQLite reads them,
/// so decrypted, on one snapshot.
pub fn serialize(conn: &Connection) -> DbResult<Vec<u8>> {
    let mut size = 0i64;
    // SAFETY: valid handle; the image is copied, then freed once.
    unsafe {
        let image = ffi::sqlite3_serialize(conn.raw(), c"main".as_ptr(), &mut size, 0);
        if image.is_null() {
            return Err(DbError::new("SQLITE_NOMEM", "out of memory for the database image"));
        }
        let bytes = std::slice::from_raw_parts(image, size as usize).to_vec();
        ffi::sqlite3_free(image as *mut _);
        Ok(bytes)
    }
}
