//! One SQLite connection: opening, per-role setup, errors, preparing.

use std::ffi::{CStr, CString};
use std::os::raw::c_int;
use std::ptr;

use sqlite3mc_sys as ffi;

use crate::error::{DbError, DbResult};
use crate::live::capture::{authorize, AuthEvent, Capture};
use crate::live::dependencies::{ChangeSet, Dependencies};
use crate::live::tracker::{ChangeTracker, Tracking, WriteEffects};
use crate::live::Hooks;
use crate::sqlite::encryption::{self, KeyConfig};

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
    /// Databases attached on every connection: (schema name, file path).
    pub attach: &'a [(String, String)],
}

pub struct Connection {
    db: *mut ffi::sqlite3,
    /// For SQLITE_BUSY messages, which name how long the connection waited.
    busy_timeout_ms: u32,
    role: Role,
    /// State of the live-query hooks, boxed so the address SQLite holds stays put. Dropped
    /// after the connection closes (fields drop after `Drop::drop`).
    hooks: Box<Hooks>,
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
        let hooks = Box::new(Hooks {
            capture: std::cell::RefCell::new(Capture::new(opts.role)),
            tracker: std::cell::RefCell::new(ChangeTracker::default()),
        });
        let conn = Connection { db, busy_timeout_ms: opts.busy_timeout_ms, role: opts.role, hooks };
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
        conn.install_hooks();
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
        self.attach(opts)
    }

    /// The authorizer on every connection; the change hooks on the writer (live queries).
    fn install_hooks(&self) {
        // SAFETY: the boxed state outlives the handle (dropped after close); both are used
        // only on this connection's thread.
        unsafe {
            let capture = &self.hooks.capture as *const _ as *mut std::ffi::c_void;
            ffi::sqlite3_set_authorizer(self.db, Some(authorize), capture);
        }
    }

    /// Turns the writer's change hooks on or off. Off while no live query exists: the
    /// pre-update hook costs ~150 instructions a row and disables SQLite's fast path for
    /// `DELETE FROM t` (experiments/018). Turned on inside an open transaction, the changes made
    /// before are unknown, so its commit counts as changing everything.
    pub fn set_tracking(&self, on: bool) {
        // SAFETY: the tracker outlives the hooks (see install_hooks).
        unsafe { self.tracking().install(on) };
        let mut tracker = self.hooks.tracker.borrow_mut();
        tracker.reset();
        if on && !self.autocommit() {
            tracker.mark_incomplete();
        }
    }

    fn tracking(&self) -> Tracking<'_> {
        Tracking { conn: self, hooks: &self.hooks }
    }

    /// Forgets what the authorizer recorded so far: call before preparing or running.
    pub fn clear_capture(&self) {
        self.hooks.capture.borrow_mut().clear();
    }

    /// What the statements prepared since `clear_capture` read (reader connections).
    pub fn captured_reads(&self) -> Option<Dependencies> {
        let capture = self.hooks.capture.borrow();
        if capture.events.is_empty() && !capture.overflow {
            return None;
        }
        Some(Dependencies::from_events(&capture.events, capture.overflow))
    }

    /// What running the statements prepared since `clear_capture` will do besides changing
    /// rows (writer connection; empty on readers).
    pub fn captured_effects(&self) -> WriteEffects {
        if self.role != Role::Writer {
            return WriteEffects::default();
        }
        let events: Vec<AuthEvent> = std::mem::take(&mut self.hooks.capture.borrow_mut().events);
        self.tracking().effects(&events)
    }

    /// After a statement ran on the writer: applies its effects, and those of statements
    /// SQLite prepared while it ran (a re-prepare after a schema change, a virtual table's own).
    fn after_statement(&self, effects: &WriteEffects, succeeded: bool) {
        if self.role != Role::Writer {
            return;
        }
        let autocommit = self.autocommit();
        self.hooks.tracker.borrow_mut().apply(effects, succeeded, autocommit);
        if !self.hooks.capture.borrow().events.is_empty() {
            let during = self.captured_effects();
            self.hooks.tracker.borrow_mut().apply(&during, false, autocommit);
            self.tracking().recompiled();
        }
    }

    /// Steps a statement on the writer (`steps`), its written tables known to the change
    /// hooks, then applies its effects (`after_statement`): as having succeeded when `steps`
    /// returned Ok.
    pub fn run_statement<T>(&self, effects: &WriteEffects, steps: impl FnOnce() -> DbResult<T>) -> DbResult<T> {
        let stepped = self.tracking().running(effects, || {
            self.clear_capture();
            steps()
        });
        self.after_statement(effects, stepped.is_ok());
        stepped
    }

    /// Bumped when a schema may have changed: cached statements prepared before are out of
    /// date (their effects name columns by the old schema).
    pub fn schema_generation(&self) -> u64 {
        self.hooks.tracker.borrow().generation()
    }

    /// After a writer job: what it committed, if anything.
    pub fn take_committed(&self) -> Option<ChangeSet> {
        self.tracking().take_committed(self.autocommit())
    }

    /// Attaches `opts.attach` (the same on every connection, so live queries and reads see the
    /// same schemas wherever they run). The writer creates each file and puts it in WAL mode
    /// with its own settings; readers attach read-only (their connection is). An attached
    /// database uses the main database's key (SQLite3 Multiple Ciphers' rule for ATTACH
    /// without KEY).
    fn attach(&self, opts: &OpenOptions) -> DbResult<()> {
        for (name, path) in opts.attach {
            let schema = format!("\"{}\"", name.replace('"', "\"\""));
            self.exec(&format!("ATTACH DATABASE '{}' AS {schema}", path.replace('\'', "''")))
                .map_err(|e| DbError { message: format!("cannot attach '{path}' as {name}: {}", e.message), ..e })?;
            if opts.role == Role::Writer {
                let mode = self.query_text(&format!("PRAGMA {schema}.journal_mode = WAL"))?;
                if !mode.eq_ignore_ascii_case("wal") {
                    return Err(DbError::new(
                        "ERR_WAL_UNAVAILABLE",
                        format!("attached '{path}' could not be switched to WAL mode (journal_mode is '{mode}')"),
                    ));
                }
                self.exec(&format!(
                    "PRAGMA {schema}.synchronous = NORMAL; PRAGMA {schema}.journal_size_limit = {JOURNAL_SIZE_LIMIT}"
                ))?;
            }
        }
        Ok(())
    }

    fn checkpoint_on_close(&self, on: bool) {
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

    /// Runs every statement of `sql`, discarding rows (setup, the library's transaction
    /// control). One statement at a time, so the writer applies each one's effects in order.
    pub fn exec(&self, sql: &str) -> DbResult<()> {
        let mut rest = sql.as_bytes();
        loop {
            self.clear_capture();
            let Some((stmt, consumed)) = self.prepare_at(rest, 0)? else { return Ok(()) };
            let effects = self.captured_effects();
            self.run_statement(&effects, || loop {
                // SAFETY: stmt is valid until it drops at the end of this iteration.
                match unsafe { ffi::sqlite3_step(stmt.0) } {
                    ffi::SQLITE_ROW => continue,
                    ffi::SQLITE_DONE => return Ok(()),
                    _ => return Err(self.last_error()),
                }
            })?;
            rest = &rest[consumed..];
        }
    }

    /// Steps the one statement of `sql` to its end, calling `row` on each row.
    fn for_each_row(&self, sql: &str, mut row: impl FnMut(*mut ffi::sqlite3_stmt)) -> DbResult<()> {
        let (stmt, _) =
            self.prepare_at(sql.as_bytes(), 0)?.ok_or_else(|| DbError::new("ERR_EMPTY_STATEMENT", "no statement"))?;
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
        self.for_each_row(sql, |stmt| {
            // SAFETY: the statement is on a row; the text is copied at once.
            let text = unsafe { ffi::sqlite3_column_text(stmt, 0) };
            out.push(if text.is_null() {
                String::new()
            } else {
                unsafe { CStr::from_ptr(text as _) }.to_string_lossy().into_owned()
            });
        })?;
        Ok(out)
    }

    pub fn query_text(&self, sql: &str) -> DbResult<String> {
        self.query_texts(sql)?.into_iter().next().ok_or_else(|| no_row(sql))
    }

    pub fn query_int(&self, sql: &str) -> DbResult<i64> {
        let mut first = None;
        // SAFETY: the statement is on a row.
        self.for_each_row(sql, |stmt| {
            first.get_or_insert(unsafe { ffi::sqlite3_column_int64(stmt, 0) });
        })?;
        first.ok_or_else(|| no_row(sql))
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

fn no_row(sql: &str) -> DbError {
    DbError::new("ERR_EMPTY_RESULT", format!("{sql} returned no row"))
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
