//! One SQLite connection handle and the plain calls on it: errors, preparing, running
//! statements, reading a value. How the pool opens and sets one up is in setup.rs; the
//! live-query hooks on it are in live/hooks.rs.

use std::cell::Cell;
use std::ffi::{CStr, CString};
use std::os::raw::{c_int, c_void};
use std::ptr;
use std::sync::Arc;

use sqlite3mc_sys as ffi;

use crate::error::{code, DbError, DbResult};
use crate::functions::Functions;

/// SQLITE_BUSY | (2 << 8): a deferred transaction's read snapshot is stale for writing.
const SQLITE_BUSY_SNAPSHOT: c_int = 517;

/// What to do with TEXT that is not valid UTF-8 (the `invalidUtf8` open option). A JS string
/// cannot hold such bytes as they are.
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub enum InvalidUtf8 {
    /// An `ERR_INVALID_UTF8` error naming the cell: nothing is lost silently (the default).
    #[default]
    Error,
    /// Each invalid sequence becomes U+FFFD, as better-sqlite3 and node:sqlite do: the WHATWG
    /// Encoding Standard's rule (TextDecoder's), which Rust's lossy conversion follows.
    Replace,
}

pub struct Connection {
    db: *mut ffi::sqlite3,
    /// As set on the connection (setup.rs): SQLITE_BUSY messages name it, and
    /// `without_busy_wait` restores it.
    busy_timeout_ms: u32,
    /// What reading TEXT that is not valid UTF-8 does (the `invalidUtf8` open option).
    invalid_utf8: InvalidUtf8,
    /// The database's JavaScript functions, registered here before a statement is prepared or
    /// taken from the cache (`sync_functions`).
    functions: Option<Arc<Functions>>,
    /// The version of `functions` registered here (unread in the unit tests: `sync_functions`).
    #[cfg_attr(test, allow(dead_code))]
    functions_seen: Cell<u64>,
}

// SAFETY: a Connection is moved to its thread once and used only there
// (SQLITE_THREADSAFE=2 allows a connection to change threads between uses).
unsafe impl Send for Connection {}

impl Connection {
    /// Opens `path` with `flags` (SQLITE_OPEN_*), nothing more; SQLite's result code comes
    /// with the handle, which it makes even when the open fails (the error is read from it;
    /// Drop closes it either way). `busy_timeout_ms` is recorded, not set (setup.rs sets it).
    pub fn open(path: &str, flags: c_int, busy_timeout_ms: u32) -> DbResult<(Connection, c_int)> {
        Connection::open_vfs(path, flags, busy_timeout_ms, None)
    }

    /// As `open`, through the VFS named `vfs` (`None`: the default one).
    pub fn open_vfs(
        path: &str,
        flags: c_int,
        busy_timeout_ms: u32,
        vfs: Option<&CStr>,
    ) -> DbResult<(Connection, c_int)> {
        let c_path = CString::new(path)
            .map_err(|_| DbError::new(code::ERR_INVALID_PATH, "the path contains a NUL character"))?;
        let mut db = ptr::null_mut();
        // SAFETY: valid C strings and out-pointer; the handle is closed by Drop even on error.
        let rc =
            unsafe { ffi::sqlite3_open_v2(c_path.as_ptr(), &mut db, flags, vfs.map_or(ptr::null(), |v| v.as_ptr())) };
        Ok((
            Connection {
                db,
                busy_timeout_ms,
                invalid_utf8: InvalidUtf8::Error,
                functions: None,
                functions_seen: Cell::new(0),
            },
            rc,
        ))
    }

    pub fn invalid_utf8(&self) -> InvalidUtf8 {
        self.invalid_utf8
    }

    pub fn set_invalid_utf8(&mut self, invalid_utf8: InvalidUtf8) {
        self.invalid_utf8 = invalid_utf8;
    }

    pub fn set_functions(&mut self, functions: Option<Arc<Functions>>) {
        self.functions = functions;
    }

    /// Registers the JavaScript functions defined since this connection last looked. (Not in
    /// the engine's unit tests: no JS runs there, and the calls' N-API symbols exist only
    /// inside Node, so the test binary must not reach them.)
    pub fn sync_functions(&self) {
        #[cfg(not(test))]
        if let Some(functions) = &self.functions {
            // SAFETY: open, and used by this thread only.
            unsafe { functions.sync(self.db, &self.functions_seen) };
        }
    }

    /// Whether `name` is one of the database's JavaScript functions.
    pub fn is_js_function(&self, name: &str) -> bool {
        self.functions.as_ref().is_some_and(|f| f.is_defined(name))
    }

    pub fn checkpoint_on_close(&self, on: bool) {
        // SAFETY: db is open; this dbconfig op takes (int, int*).
        unsafe {
            ffi::sqlite3_db_config(
                self.db,
                ffi::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                !on as c_int,
                ptr::null_mut::<c_int>(),
            );
        }
    }

    /// True outside an explicit transaction.
    pub fn autocommit(&self) -> bool {
        // SAFETY: valid handle.
        unsafe { ffi::sqlite3_get_autocommit(self.db) != 0 }
    }

    /// Whether this connection's next commit may start the WAL over — every frame of it
    /// checkpointed, or none written yet — and so write the WAL header and sync it to disk
    /// (`sqlite3WalFrames`), whatever `synchronous` says: that is the writer thread's work
    /// (js_thread/runs.rs). Read from the wal-index without its lock, so another process's checkpoint
    /// may still complete in between. False without a wal-index (not in WAL mode, or in memory).
    pub fn wal_starts_over(&self) -> bool {
        /// Bytes into the wal-index: the header's `mxFrame` (the WAL's last valid frame) and,
        /// after the header's two copies, `nBackfill` (how many frames are checkpointed).
        const MX_FRAME: usize = 16;
        const N_BACKFILL: usize = 96;
        self.wal_index().is_some_and(|index| {
            // SAFETY: both words lie in region 0, mapped while the WAL is open.
            let word = |at: usize| unsafe { ptr::read_volatile(index.add(at) as *const u32) };
            let last = word(MX_FRAME);
            last == 0 || word(N_BACKFILL) >= last
        })
    }

    /// The wal-index header as it is now (its first copy: 48 bytes, sqlite.org/walformat.html).
    /// Every commit changes it, and starting the WAL over changes its salts; so while it stays
    /// the same, no connection has committed. Read without its lock: a header caught mid-update
    /// differs from both, which reads as a commit. None without a wal-index.
    pub fn wal_index_header(&self) -> Option<[u32; 12]> {
        let index = self.wal_index()?;
        // SAFETY: the header lies in region 0, mapped while the WAL is open.
        Some(std::array::from_fn(|i| unsafe { ptr::read_volatile((index as *const u32).add(i)) }))
    }

    /// The start of the wal-index (its region 0), as this connection has it mapped; None when
    /// it is not (not in WAL mode, in memory, or the WAL not opened yet).
    fn wal_index(&self) -> Option<*const u8> {
        /// The size of a wal-index region (wal.c WALINDEX_PGSZ).
        const REGION: c_int = 32768;
        let mut file: *mut ffi::sqlite3_file = ptr::null_mut();
        // SAFETY: valid handle; FILE_POINTER writes the main database's file object, which
        // lives as long as the connection; region 0 is mapped while the WAL is open, and a
        // map that is not there yet (extend 0) leaves `region` null.
        unsafe {
            let op = ffi::SQLITE_FCNTL_FILE_POINTER;
            if ffi::sqlite3_file_control(self.db, c"main".as_ptr(), op, &mut file as *mut _ as *mut c_void)
                != ffi::SQLITE_OK
                || file.is_null()
                || (*file).pMethods.is_null()
                || (*(*file).pMethods).iVersion < 2
            {
                return None;
            }
            let map = (*(*file).pMethods).xShmMap?;
            let mut region: *mut c_void = ptr::null_mut();
            if map(file, 0, REGION, 0, &mut region) != ffi::SQLITE_OK || region.is_null() {
                return None;
            }
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            Some(region as *const u8)
        }
    }

    /// Runs `f` with the busy timeout off: a lock another process holds fails at once with
    /// SQLITE_BUSY instead of waiting (on the JS thread, js_thread/runs.rs).
    pub fn without_busy_wait<T>(&self, f: impl FnOnce() -> T) -> T {
        self.with_busy_wait(0, f)
    }

    /// Runs `f` with the busy timeout `ms` instead of the connection's own.
    pub fn with_busy_wait<T>(&self, ms: u32, f: impl FnOnce() -> T) -> T {
        // SAFETY: valid handle.
        unsafe { ffi::sqlite3_busy_timeout(self.db, ms.min(i32::MAX as u32) as c_int) };
        let result = f();
        // SAFETY: valid handle.
        unsafe { ffi::sqlite3_busy_timeout(self.db, self.busy_timeout_ms.min(i32::MAX as u32) as c_int) };
        result
    }

    pub fn raw(&self) -> *mut ffi::sqlite3 {
        self.db
    }

    /// The connection's current error, as SQLite words it.
    pub fn sqlite_error(&self) -> DbError {
        if self.db.is_null() {
            return DbError::new("SQLITE_NOMEM", "out of memory");
        }
        // SAFETY: db is a valid handle; errmsg is NUL-terminated and copied at once.
        unsafe {
            let code = ffi::sqlite3_extended_errcode(self.db);
            DbError::sqlite(code, CStr::from_ptr(ffi::sqlite3_errmsg(self.db)).to_string_lossy().into_owned())
        }
    }

    /// The connection's current error, saying what to do about a busy database.
    pub fn last_error(&self) -> DbError {
        let mut error = self.sqlite_error();
        if self.db.is_null() {
            return error;
        }
        // SAFETY: db is a valid handle.
        let code = unsafe { ffi::sqlite3_extended_errcode(self.db) };
        let msg = &mut error.message;
        if code == SQLITE_BUSY_SNAPSHOT {
            msg.push_str(
                " (this transaction read a snapshot that another connection has since written \
                 past, so it cannot start writing; begin it with mode 'immediate')",
            );
        } else if code & 0xff == ffi::SQLITE_BUSY {
            msg.push_str(&format!(
                " (another connection holds the lock; waited busyTimeout = {} ms)",
                self.busy_timeout_ms
            ));
        }
        error
    }

    /// Runs every statement of `sql`, discarding rows. Plain: on the pool's connections,
    /// `PoolConnection::exec` runs statements with their effects recorded for live queries.
    pub fn exec(&self, sql: &str) -> DbResult<()> {
        let mut rest = sql.as_bytes();
        loop {
            let Some((stmt, consumed)) = self.prepare_at(rest, 0)? else { return Ok(()) };
            loop {
                // SAFETY: stmt is valid until it drops at the end of this iteration.
                match unsafe { ffi::sqlite3_step(stmt.0) } {
                    ffi::SQLITE_ROW => continue,
                    ffi::SQLITE_DONE => break,
                    _ => return Err(self.last_error()),
                }
            }
            rest = &rest[consumed..];
        }
    }

    /// Steps the one statement of `sql` to its end, calling `row` on each row.
    fn for_each_row(&self, sql: &str, mut row: impl FnMut(*mut ffi::sqlite3_stmt)) -> DbResult<()> {
        let (stmt, _) = self
            .prepare_at(sql.as_bytes(), 0)?
            .ok_or_else(|| DbError::new(code::ERR_EMPTY_STATEMENT, "no statement"))?;
        loop {
            // SAFETY: stmt is valid until the OwnedStmt drops at the end of this function.
            match unsafe { ffi::sqlite3_step(stmt.0) } {
                ffi::SQLITE_ROW => row(stmt.0),
                ffi::SQLITE_DONE => return Ok(()),
                _ => return Err(self.last_error()),
            }
        }
    }

    /// The first column of every row, as text (NULL as "").
    pub fn query_texts(&self, sql: &str) -> DbResult<Vec<String>> {
        let mut out = Vec::new();
        // SAFETY: the statement is on a row.
        self.for_each_row(sql, |stmt| out.push(unsafe { text_column(stmt) }))?;
        Ok(out)
    }

    /// The first row's first column, as text (NULL as "").
    pub fn query_text(&self, sql: &str) -> DbResult<String> {
        // SAFETY: the statement is on a row.
        self.first_row(sql, |stmt| unsafe { text_column(stmt) })
    }

    /// The first row's first column, as an integer.
    pub fn query_int(&self, sql: &str) -> DbResult<i64> {
        // SAFETY: the statement is on a row.
        self.first_row(sql, |stmt| unsafe { ffi::sqlite3_column_int64(stmt, 0) })
    }

    /// Steps the one statement of `sql` once and reads its first row with `read`.
    fn first_row<T>(&self, sql: &str, read: impl FnOnce(*mut ffi::sqlite3_stmt) -> T) -> DbResult<T> {
        let (stmt, _) = self
            .prepare_at(sql.as_bytes(), 0)?
            .ok_or_else(|| DbError::new(code::ERR_EMPTY_STATEMENT, "no statement"))?;
        // SAFETY: stmt is valid until the OwnedStmt drops at the end of this function.
        match unsafe { ffi::sqlite3_step(stmt.0) } {
            ffi::SQLITE_ROW => Ok(read(stmt.0)),
            ffi::SQLITE_DONE => Err(no_row(sql)),
            _ => Err(self.last_error()),
        }
    }

    /// Prepares the first statement of `sql`; `None` when it holds no statement. Returns the
    /// statement and the byte offset where the next one starts.
    pub fn prepare_at(&self, sql: &[u8], flags: u32) -> DbResult<Option<(OwnedStmt, usize)>> {
        if sql.len() > i32::MAX as usize {
            return Err(DbError::new("SQLITE_TOOBIG", "SQL text is too long"));
        }
        self.sync_functions();
        let mut stmt = ptr::null_mut();
        let mut tail = ptr::null();
        // SAFETY: sql is valid for sql.len() bytes; SQLite reads at most that many.
        let rc = unsafe {
            ffi::sqlite3_prepare_v3(self.db, sql.as_ptr() as _, sql.len() as c_int, flags, &mut stmt, &mut tail)
        };
        if rc != ffi::SQLITE_OK {
            return Err(self.last_error());
        }
        let consumed = if tail.is_null() { sql.len() } else { tail as usize - sql.as_ptr() as usize };
        Ok(if stmt.is_null() { None } else { Some((OwnedStmt(stmt), consumed)) })
    }
}

/// Refuses SQL holding a NUL character: SQLite stops reading at the first NUL, so whatever
/// follows it (another statement, say) would be dropped without a word. Checked where a
/// statement is prepared from the caller's whole SQL (a statement cache miss, `Hooks::exec`),
/// never on a cache hit. The offset is the NUL's index in the JS string (UTF-16 units), as
/// `sql.indexOf('\0')`.
pub fn refuse_nul(sql: &str) -> DbResult<()> {
    match sql.bytes().position(|b| b == 0) {
        None => Ok(()),
        Some(at) => {
            // A NUL is ASCII: the bytes before it are whole characters.
            let offset = sql[..at].encode_utf16().count();
            Err(DbError::new(
                code::ERR_NUL_IN_SQL,
                format!("the SQL contains a NUL character at offset {offset}; SQLite would ignore everything after it"),
            ))
        }
    }
}

/// Column 0 of the current row as text (NULL as ""), copied.
///
/// # Safety
/// `stmt` is on a row.
unsafe fn text_column(stmt: *mut ffi::sqlite3_stmt) -> String {
    let text = ffi::sqlite3_column_text(stmt, 0);
    if text.is_null() {
        String::new()
    } else {
        CStr::from_ptr(text as _).to_string_lossy().into_owned()
    }
}

fn no_row(sql: &str) -> DbError {
    DbError::new(code::ERR_EMPTY_RESULT, format!("{sql} returned no row"))
}

/// A statement outside the cache, finalized on drop.
pub struct OwnedStmt(pub *mut ffi::sqlite3_stmt);

impl OwnedStmt {
    pub fn into_raw(self) -> *mut ffi::sqlite3_stmt {
        let raw = self.0;
        std::mem::forget(self);
        raw
    }
}

impl Drop for OwnedStmt {
    fn drop(&mut self) {
        // SAFETY: a valid statement, finalized once.
        unsafe { ffi::sqlite3_finalize(self.0) };
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Statements are finalized first by their owners (StatementCache is declared before the
        // Connection in PoolConnection); close_v2 would otherwise leave a zombie until they are.
        // SAFETY: db came from sqlite3_open_v2 (possibly null after OOM, which close accepts).
        unsafe { ffi::sqlite3_close_v2(self.db) };
    }
}

#[cfg(test)]
mod tests {
    use super::refuse_nul;

    #[test]
    fn sql_holding_a_nul_is_refused_with_its_offset_in_utf16_units() {
        assert!(refuse_nul("SELECT 1; SELECT 2").is_ok());
        let e = refuse_nul("SELECT 'é😀';\0SELECT 2").expect_err("refused");
        assert_eq!(e.code, crate::error::code::ERR_NUL_IN_SQL);
        assert!(e.message.contains("at offset 13;"), "{}", e.message);
    }
}
