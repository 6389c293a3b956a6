//! One SQLite connection: opening, per-role setup, errors, preparing.

use std::ffi::{CStr, CString};
use std::os::raw::c_int;
use std::ptr;

use sqlite3mc_sys as ffi;

use crate::encryption::{self, KeyConfig};
use crate::error::{DbError, DbResult};

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Writer,
    Reader,
}

/// WAL pages after which a commit triggers a PASSIVE checkpoint (SQLite's default).
const WAL_CHECKPOINT_PAGES: u32 = 1000;
/// Bytes the WAL file is truncated to when it starts over after a full checkpoint.
const JOURNAL_SIZE_LIMIT: u64 = 16 << 20;

/// SQLITE_BUSY | (2 << 8): a deferred transaction's read snapshot is stale for writing.
const SQLITE_BUSY_SNAPSHOT: c_int = 517;

pub struct OpenOptions<'a> {
    pub path: &'a str,
    pub role: Role,
    pub busy_timeout_ms: u32,
    /// Applied first, before anything reads the file.
    pub key: Option<&'a KeyConfig>,
}

pub struct Connection {
    db: *mut ffi::sqlite3,
    /// For SQLITE_BUSY messages, which name how long the connection waited.
    busy_timeout_ms: u32,
}

// SAFETY: a Connection is moved to its thread once and used only there
// (SQLITE_THREADSAFE=2 allows a connection to change threads between uses).
unsafe impl Send for Connection {}

impl Connection {
    pub fn open(opts: &OpenOptions) -> DbResult<Connection> {
        let c_path = CString::new(opts.path)
            .map_err(|_| DbError::new("ERR_INVALID_PATH", "the path contains a NUL character"))?;
        let flags = ffi::SQLITE_OPEN_NOMUTEX
            | ffi::SQLITE_OPEN_EXRESCODE
            | match opts.role {
                Role::Writer => ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_CREATE,
                Role::Reader => ffi::SQLITE_OPEN_READONLY,
            };
        let mut db = ptr::null_mut();
        // SAFETY: valid C string and out-pointer; the handle is closed by Drop even on error.
        let rc = unsafe { ffi::sqlite3_open_v2(c_path.as_ptr(), &mut db, flags, ptr::null()) };
        let conn = Connection { db, busy_timeout_ms: opts.busy_timeout_ms };
        if rc != ffi::SQLITE_OK {
            let err = conn.last_error();
            return Err(DbError { message: format!("cannot open '{}': {}", opts.path, err.message), ..err });
        }
        // Until the first read proves the key, closing must not checkpoint: a connection with a
        // wrong (or missing) key would copy a leftover WAL into the database file through the
        // wrong cipher. Turned back on once the open succeeded.
        conn.checkpoint_on_close(false);
        if let Some(key) = opts.key {
            encryption::key_connection(conn.db, key)?;
        }
        conn.configure(opts).map_err(|e| encryption::explain_open_error(e, opts.key.is_some()))?;
        conn.checkpoint_on_close(true);
        if opts.role == Role::Writer {
            encryption::remove_rekey_leftovers(opts.path);
        }
        Ok(conn)
    }

    /// Connection setup from DESIGN.md ("Connection setup").
    fn configure(&self, opts: &OpenOptions) -> DbResult<()> {
        // SAFETY: db is open; these dbconfig ops take (int, int*).
        unsafe {
            ffi::sqlite3_db_config(self.db, ffi::SQLITE_DBCONFIG_DEFENSIVE, 1 as c_int, ptr::null_mut::<c_int>());
            ffi::sqlite3_db_config(self.db, ffi::SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0 as c_int, ptr::null_mut::<c_int>());
            ffi::sqlite3_db_config(
                self.db,
                ffi::SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION,
                0 as c_int,
                ptr::null_mut::<c_int>(),
            );
            ffi::sqlite3_busy_timeout(self.db, opts.busy_timeout_ms.min(i32::MAX as u32) as c_int);
        }
        // A forced read: a file that is not a database (or a wrong key) fails here,
        // before anything could write to it.
        self.exec("SELECT count(*) FROM sqlite_schema")?;
        self.exec("PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -8192")?;
        match opts.role {
            Role::Writer => {
                let mode = self.query_text("PRAGMA journal_mode = WAL")?;
                if !mode.eq_ignore_ascii_case("wal") {
                    return Err(DbError::new(
                        "ERR_WAL_UNAVAILABLE",
                        format!("'{}' could not be switched to WAL mode (journal_mode is '{mode}')", opts.path),
                    ));
                }
                // Checkpoint policy (experiments/012, README "How it works"): the writer runs a
                // PASSIVE checkpoint when a commit leaves the WAL above WAL_CHECKPOINT_PAGES, and
                // truncates the WAL file to JOURNAL_SIZE_LIMIT when it next starts over.
                self.exec(&format!(
                    "PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}; \
                     PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}"
                ))?;
                // A read in WAL mode builds the WAL index (recovering a leftover WAL if any)
                // before the readers open, so they never meet SQLITE_BUSY_RECOVERY from us.
                self.exec("SELECT count(*) FROM sqlite_schema")?;
            }
            Role::Reader => {}
        }
        Ok(())
    }

    fn checkpoint_on_close(&self, on: bool) {
        // SAFETY: db is open; this dbconfig op takes (int, int*).
        unsafe {
            ffi::sqlite3_db_config(self.db, ffi::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, !on as c_int, ptr::null_mut::<c_int>());
        }
    }

    /// True outside an explicit transaction.
    pub fn autocommit(&self) -> bool {
        // SAFETY: valid handle.
        unsafe { ffi::sqlite3_get_autocommit(self.db) != 0 }
    }

    pub fn raw(&self) -> *mut ffi::sqlite3 {
        self.db
    }

    /// The connection's current error as a DbError.
    pub fn last_error(&self) -> DbError {
        if self.db.is_null() {
            return DbError::new("SQLITE_NOMEM", "out of memory");
        }
        // SAFETY: db is a valid handle; errmsg is NUL-terminated and copied at once.
        unsafe {
            let code = ffi::sqlite3_extended_errcode(self.db);
            let mut msg = CStr::from_ptr(ffi::sqlite3_errmsg(self.db)).to_string_lossy().into_owned();
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
            DbError::sqlite(code, msg)
        }
    }

    /// Runs every statement of `sql`, discarding rows (setup and migrations).
    pub fn exec(&self, sql: &str) -> DbResult<()> {
        let c_sql = CString::new(sql).map_err(|_| DbError::new("ERR_INVALID_SQL", "SQL contains a NUL character"))?;
        // SAFETY: valid handle and C string; no callback.
        let rc = unsafe { ffi::sqlite3_exec(self.db, c_sql.as_ptr(), None, ptr::null_mut(), ptr::null_mut()) };
        if rc == ffi::SQLITE_OK {
            Ok(())
        } else {
            Err(self.last_error())
        }
    }

    pub fn query_text(&self, sql: &str) -> DbResult<String> {
        let (stmt, _) = self
            .prepare_at(sql.as_bytes(), 0)?
            .ok_or_else(|| DbError::new("ERR_EMPTY_STATEMENT", "no statement"))?;
        // SAFETY: stmt is valid until the OwnedStmt drops at the end of this scope.
        unsafe {
            let rc = ffi::sqlite3_step(stmt.0);
            if rc != ffi::SQLITE_ROW {
                return Err(self.last_error());
            }
            let text = ffi::sqlite3_column_text(stmt.0, 0);
            Ok(if text.is_null() { String::new() } else { CStr::from_ptr(text as _).to_string_lossy().into_owned() })
        }
    }

    /// Prepares the first statement of `sql`; `None` when it holds no statement. Returns the
    /// statement and the byte offset where the next one starts.
    pub fn prepare_at(&self, sql: &[u8], flags: u32) -> DbResult<Option<(OwnedStmt, usize)>> {
        if sql.len() > i32::MAX as usize {
            return Err(DbError::new("SQLITE_TOOBIG", "SQL text is too long"));
        }
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
        // Connection in Worker); close_v2 would otherwise leave a zombie until they are.
        // SAFETY: db came from sqlite3_open_v2 (possibly null after OOM, which close accepts).
        unsafe { ffi::sqlite3_close_v2(self.db) };
    }
}
