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

fn exists(destination: &str) -> DbError {
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
    let flags =
        ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_CREATE | ffi::SQLITE_OPEN_NOMUTEX | ffi::SQLITE_OPEN_EXRESCODE;
    let (dest, rc) = Connection::open(partial, flags, 0)?;
    let destination = partial.trim_end_matches(".resqlite-backup");
    let failed = |e: DbError| DbError { message: format!("backup to '{destination}': {}", e.message), ..e };
    if rc != ffi::SQLITE_OK {
        return Err(failed(dest.last_error()));
    }
    if let Some(key) = key {
        encryption::key_connection(dest.raw(), key).map_err(failed)?;
    }
    // SAFETY: both handles are open and used by this thread only; the backup is finished below.
    let backup = unsafe { ffi::sqlite3_backup_init(dest.raw(), c"main".as_ptr(), source.raw(), c"main".as_ptr()) };
    if backup.is_null() {
        return Err(failed(dest.last_error()));
    }
    let outcome = loop {
        // SAFETY: a live backup handle.
        let rc = unsafe { ffi::sqlite3_backup_step(backup, PAGES_PER_STEP) };
        // SAFETY: as above.
        let (remaining, total) =
            unsafe { (ffi::sqlite3_backup_remaining(backup), ffi::sqlite3_backup_pagecount(backup)) };
        let busy = rc & 0xff == ffi::SQLITE_BUSY || rc & 0xff == ffi::SQLITE_LOCKED;
        if rc != ffi::SQLITE_OK && rc != ffi::SQLITE_DONE && !busy {
            break Err(None);
        }
        let go_on = step(Progress { remaining: remaining as u32, total: total as u32 });
        if rc == ffi::SQLITE_DONE {
            break Ok(()); // complete: an abort now comes too late
        }
        if !go_on {
            break Err(Some(DbError::new("ABORT_ERR", "the backup was aborted")));
        }
        if busy {
            std::thread::sleep(BUSY_WAIT);
        }
    };
    // SAFETY: finished once; its result is the step's error, if any.
    let rc = unsafe { ffi::sqlite3_backup_finish(backup) };
    match outcome {
        Err(Some(aborted)) => Err(aborted),
        Ok(()) if rc == ffi::SQLITE_OK => Ok(()),
        _ => Err(failed(dest.last_error())),
    }
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
