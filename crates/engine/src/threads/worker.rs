//! What a job does on its connection: the bodies of select, selectBytes, execute,
//! executeBatch and a live query's run. Each runs on the thread that owns the connection.

use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::Arc;

use sqlite3mc_sys as ffi;

use super::job::Outcome;
use crate::encode::json::{encode_json, write_string};
use crate::encode::pages::Cursor;
use crate::encode::rows::encode_rows;
use crate::error::{code, DbError, DbResult};
use crate::live::dependencies::ChangeSet;
use crate::live::hooks::Hooks;
use crate::live::hooks::{ResetOnDrop, Statement, StatementCache};
use crate::live::tracker::WriteEffects;
use crate::sqlite::bounded::calls_js_function;
use crate::sqlite::budget::Budget;
use crate::sqlite::connection::Connection;
use crate::sqlite::params::{bind, bind_with, Reader};
use crate::sqlite::setup::Role;
use crate::sqlite::statement_cache::prepare;
use crate::sqlite::step::{column_names, step};

/// `PRAGMA synchronous = NORMAL`'s number: in WAL mode a commit appends without syncing.
const SYNCHRONOUS_NORMAL: i64 = 1;

/// One of the pool's connections (the writer's, a reader's, the JS thread's, an iteration's)
/// with its statement cache and its live-query hooks: what the thread that uses it owns.
/// Declared in drop order: the cache's statements are finalized before the connection closes,
/// and the hooks and the budget, which SQLite may call while it closes, outlive it.
pub struct PoolConnection {
    /// Iterations inside the transaction (threads/iterate.rs): their statements are finalized
    /// first.
    pub cursors: HashMap<u32, Cursor>,
    pub cache: StatementCache,
    pub conn: Connection,
    hooks: Box<Hooks>,
    /// The time budget of runs on the JS thread (js_thread/runs.rs); on an engine thread, what
    /// lets a long statement step aside for the JS thread (step_aside.rs).
    budget: Box<Budget>,
    /// The writer's change hooks are on (a new connection starts without them).
    tracking: bool,
    /// `PRAGMA data_version` when last checked (none yet): it changes when another connection
    /// commits.
    data_version: Option<i64>,
    /// Where the open transaction's writes ran, and whether it is a write group's (writer
    /// connection; js_thread/write_group.rs).
    pub tx_writes: TxWrites,
    /// The settings a commit on the JS thread reads, as last read (`commit_settings`).
    commit_settings: Option<CommitSettings>,
}

/// What a commit on the JS thread needs to know of the connection's settings.
#[derive(Clone, Copy)]
pub struct CommitSettings {
    /// A commit syncs the WAL to disk (`PRAGMA synchronous` above NORMAL, as a user may set
    /// it): such a commit stays off the JS thread.
    pub syncs: bool,
    /// `PRAGMA wal_autocheckpoint`: the WAL frames after which a commit makes a checkpoint due
    /// (setup.rs sets it up; a user may set it), which a commit on the JS thread leaves to the
    /// writer thread.
    pub checkpoint_pages: i32,
}

/// Where the open transaction's writes ran: its COMMIT may run on the JS thread only when it
/// has little to write (js_thread/runs.rs `commit`). Every BEGIN starts it afresh (`control`).
#[derive(Default)]
pub struct TxWrites {
    /// Bounded writes run on the JS thread.
    pub inline: u32,
    /// A write ran on the writer thread (its work is unknown).
    pub on_thread: bool,
    /// The transaction is a write group's (js_thread/write_group.rs `begin`): only single DML
    /// statements join it.
    pub group: bool,
    /// The wal-index header as the write group's transaction began (write_group.rs
    /// `fresh_snapshot`).
    pub group_header: Option<[u32; 12]>,
}

// SAFETY: SQLite is built with SQLITE_THREADSAFE=2: a connection may move between threads as
// long as one thread uses it at a time. A worker is used by the thread that owns it, or, behind
// a lock (threads/shared.rs), by the JS thread or the writer in turn.
unsafe impl Send for PoolConnection {}

/// A read runs one read-only statement.
fn check_read(stmt: &Statement) -> DbResult<()> {
    if stmt.has_tail {
        return Err(multiple_statements("select takes one statement"));
    }
    if !stmt.readonly && !stmt.facts.kind.reads_journal_mode {
        return Err(DbError::new(
            code::ERR_NOT_READ_ONLY,
            "select runs read-only statements; use execute() for statements that write",
        ));
    }
    // SQLite counts these as read-only, but they would change the connection's transaction or
    // (a setting compiled by execute(), found in the cache) its settings.
    if stmt.facts.kind.transaction_control || stmt.facts.kind.savepoint {
        return Err(transaction_control_refused());
    }
    if stmt.facts.kind.sets_pragma {
        return Err(DbError::new(
            code::ERR_NOT_READ_ONLY,
            "select cannot change a setting (a PRAGMA with a value); use execute()",
        ));
    }
    Ok(())
}

/// A statement that begins or ends a transaction, refused where it would end the one open or
/// begin one inside it (`execute` inside a transaction body, `executeBatch`).
fn transaction_control_in_transaction(what: &str) -> DbError {
    DbError::new(
        code::ERR_TRANSACTION_CONTROL,
        format!(
            "{what} (BEGIN, COMMIT, ROLLBACK, END, SAVEPOINT, RELEASE or ROLLBACK TO inside \
             db.transaction()); end a transaction by returning from or throwing in its body, and nest \
             one with tx.transaction()"
        ),
    )
}

/// A statement that would take the database out of WAL mode: readers beside the writer need it
/// (open() refuses a database that cannot be in it).
fn leaves_wal_refused() -> DbError {
    DbError::new(
        code::ERR_JOURNAL_MODE,
        "PRAGMA journal_mode can only be WAL here: the readers read beside the writer in WAL mode \
         (reading the mode, PRAGMA journal_mode, is fine)",
    )
}

/// A read that began or ended a transaction (BEGIN and friends count as read-only).
pub fn transaction_control_refused() -> DbError {
    DbError::new(code::ERR_NOT_READ_ONLY, "select cannot begin or end transactions; use execute()")
}

fn multiple_statements(what: &str) -> DbError {
    DbError::new(
        code::ERR_MULTIPLE_STATEMENTS,
        format!("{what}: the SQL holds several statements; run them one call each"),
    )
}

impl PoolConnection {
    /// A worker on a freshly opened connection of `role`: the authorizer goes on now.
    pub fn new(conn: Connection, role: Role) -> PoolConnection {
        // SAFETY: the hooks outlive the connection (field order) and stay on this thread.
        let hooks = unsafe { Hooks::install(&conn, role) };
        let budget = Budget::install(&conn, super::step_aside::now_and_then);
        PoolConnection {
            cursors: HashMap::new(),
            cache: StatementCache::new(),
            conn,
            hooks,
            budget,
            tracking: false,
            data_version: None,
            tx_writes: TxWrites::default(),
            commit_settings: None,
        }
    }

    /// Runs every statement of `sql` (transaction control), each one's effects recorded for
    /// live queries in order; see `Connection::exec` for the plain kind.
    pub fn exec(&self, sql: &str) -> DbResult<()> {
        self.hooks.exec(&self.conn, sql)
    }

    /// Turns the writer's change hooks on or off (live queries exist or not), if they are not
    /// so already; returns `on`.
    pub fn sync_tracking(&mut self, on: bool) -> bool {
        if on != self.tracking {
            self.tracking = on;
            self.hooks.set_tracking(&self.conn, on);
        }
        on
    }

    /// After a writer job: what it committed, if anything.
    pub fn take_committed(&self) -> Option<ChangeSet> {
        self.hooks.take_committed(&self.conn)
    }

    /// Whether another connection (another process) committed since the last check. A
    /// connection's first check says yes: data_version only compares within one connection, and
    /// one opened since the last check (a reader reopened after idling, the JS thread's own
    /// connection opened late) cannot tell what was committed before it opened.
    pub fn external_change(&mut self) -> bool {
        match self.conn.query_int("PRAGMA data_version") {
            Ok(now) => self.data_version.replace(now) != Some(now),
            Err(_) => false,
        }
    }

    /// The cached statement for a read: one read-only statement.
    fn read_statement<'a>(
        cache: &'a mut StatementCache,
        conn: &Connection,
        hooks: &Hooks,
        sql: &str,
    ) -> DbResult<&'a Statement> {
        let stmt = hooks.compiling_a_read(|| cache.get(conn, hooks, sql))?;
        check_read(stmt)?;
        Ok(stmt)
    }

    /// An iteration's statement (encode/pages.rs): select's checks, prepared outside the
    /// cache, bound to `params`.
    pub fn cursor(&mut self, sql: &str, params: Vec<u8>, page_rows: usize) -> DbResult<Cursor> {
        let stmt = self.hooks.compiling_a_read(|| prepare(&self.conn, &self.hooks, sql))?;
        check_read(&stmt)?;
        Cursor::new(stmt, params, page_rows)
    }

    /// For a run on the JS thread (js_thread/runs.rs): the cached statement for a read (select's
    /// checks: one read-only statement), the connection, and the budget's clock.
    pub fn budgeted_read(&mut self, sql: &str) -> DbResult<(&Statement, &Connection, &Budget)> {
        let stmt = Self::read_statement(&mut self.cache, &self.conn, &self.hooks, sql)?;
        Ok((stmt, &self.conn, &self.budget))
    }

    /// For a sliced read on the JS thread (js_thread/connection.rs `start_sliced`): whether a
    /// read of `sql` calls JavaScript functions (select's checks apply).
    pub fn calls_js(&mut self, sql: &str) -> DbResult<bool> {
        let stmt = Self::read_statement(&mut self.cache, &self.conn, &self.hooks, sql)?;
        let reprepared = stmt.reprepared();
        Ok(match stmt.calls_js.get() {
            Some((n, calls_js)) if n == reprepared => calls_js,
            _ => {
                let calls_js = calls_js_function(&self.conn, sql)?;
                self.hooks.clear_capture(); // what compiling EXPLAIN told the authorizer
                stmt.calls_js.set(Some((reprepared, calls_js)));
                calls_js
            }
        })
    }

    /// The connection's time budget (sqlite/budget.rs).
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Whether something compiled on the connection made its reads differ from a reader's (a
    /// temp table, an ATTACH, a PRAGMA changing results: capture.rs).
    pub fn diverged(&self) -> bool {
        self.hooks.diverged()
    }

    /// The settings a commit on the JS thread reads (js_thread/runs.rs), kept until the authorizer sees
    /// a PRAGMA of one of them compiled (capture.rs `COMMIT_PRAGMAS`): SQLite applies such a
    /// PRAGMA as it compiles it, and they are then read again (compiled afresh).
    pub fn commit_settings(&mut self) -> DbResult<CommitSettings> {
        if self.hooks.take_commit_pragma() {
            self.commit_settings = None;
        }
        if let Some(settings) = self.commit_settings {
            return Ok(settings);
        }
        let settings = CommitSettings {
            syncs: self.conn.query_int("PRAGMA synchronous")? > SYNCHRONOUS_NORMAL,
            checkpoint_pages: self.conn.query_int("PRAGMA wal_autocheckpoint")? as i32,
        };
        self.hooks.take_commit_pragma(); // these two
        Ok(*self.commit_settings.insert(settings))
    }

    /// For a write on the JS thread (js_thread/runs.rs): the cached statement, the connection and its
    /// hooks.
    pub fn write_statement(&mut self, sql: &str) -> DbResult<(&Statement, &Connection, &Hooks)> {
        let stmt = self.cache.get(&self.conn, &self.hooks, sql)?;
        Ok((stmt, &self.conn, &self.hooks))
    }

    /// select / selectOne / selectBytes on a read-only statement.
    pub fn select(
        &mut self,
        sql: &str,
        params: &[u8],
        max_rows: usize,
        json: bool,
        safe_integers: bool,
        emit: &mut dyn FnMut(Outcome),
    ) -> DbResult<Outcome> {
        let stmt = Self::read_statement(&mut self.cache, &self.conn, &self.hooks, sql)?;
        let _reset = ResetOnDrop::new(stmt);
        bind(stmt, &mut Reader::new(params))?;
        if json {
            encode_json(&self.conn, stmt, max_rows).map(Outcome::Json)
        } else {
            encode_rows(&self.conn, stmt, max_rows, safe_integers, Some(&mut |part| emit(Outcome::RowsPart(part))))
                .map(Outcome::Rows)
        }
    }

    /// One run of a live query: every row in one part (the registry hashes the whole result),
    /// and what the statement reads.
    pub fn run_live(&mut self, sql: &str, params: &[u8], safe_integers: bool) -> Outcome {
        let stmt = match Self::read_statement(&mut self.cache, &self.conn, &self.hooks, sql) {
            Ok(stmt) => stmt,
            Err(e) => return Outcome::LiveRan { result: Err(e), reads: None },
        };
        let _reset = ResetOnDrop::new(stmt);
        self.hooks.clear_capture();
        let result = bind(stmt, &mut Reader::new(params))
            .and_then(|_| encode_rows(&self.conn, stmt, usize::MAX, safe_integers, None));
        // Statements compiled while it ran (a re-prepare after a schema change, a virtual
        // table's own) read more.
        if let Some(more) = self.hooks.captured_reads() {
            let merged = stmt.facts.reads.borrow().union(&more);
            *stmt.facts.reads.borrow_mut() = Arc::new(merged);
        }
        Outcome::LiveRan { result, reads: Some(stmt.facts.reads.borrow().clone()) }
    }

    /// execute: one statement with parameters, or a script of several without; a single statement
    /// that returns columns (RETURNING) gives its rows too. It must leave
    /// the writer's transaction state as it found it outside a transaction: a failure after the
    /// job began a transaction (`BEGIN; …; <error>`) rolls it back, and a job that succeeds but
    /// leaves one open (`BEGIN` alone) is rolled back and refused — every later write would
    /// otherwise run inside it; `db.transaction()` is the way to span calls.
    pub fn execute(&mut self, sql: &str, params: &[u8], safe_integers: bool) -> DbResult<Outcome> {
        let was_autocommit = self.conn.autocommit();
        let result = self.execute_inner(sql, params, safe_integers, !was_autocommit);
        if was_autocommit && !self.conn.autocommit() {
            let _ = self.hooks.exec(&self.conn, "ROLLBACK");
            if result.is_ok() {
                return Err(DbError::new(
                    code::ERR_OPEN_TRANSACTION,
                    "execute() left a transaction open (BEGIN without COMMIT) and it was rolled back; \
                     use db.transaction() for a transaction that spans several calls",
                ));
            }
        }
        result
    }

    fn execute_inner(
        &mut self,
        sql: &str,
        params: &[u8],
        safe_integers: bool,
        in_transaction: bool,
    ) -> DbResult<Outcome> {
        let no_params = Reader::new(params).peek_is_empty_set();
        let stmt = self.cache.get(&self.conn, &self.hooks, sql)?;
        if stmt.has_tail {
            if !no_params {
                return Err(multiple_statements("parameters given"));
            }
            return self.execute_script(sql, in_transaction);
        }
        if stmt.facts.kind.leaves_wal {
            return Err(leaves_wal_refused());
        }
        if in_transaction && stmt.facts.kind.ends_a_level() {
            return Err(self.refuse_transaction_control("this statement would begin or end a transaction or a level"));
        }
        let _reset = ResetOnDrop::new(stmt);
        bind(stmt, &mut Reader::new(params))?;
        // SAFETY: valid statement.
        if unsafe { ffi::sqlite3_column_count(stmt.raw) } == 0 {
            let changes = run_to_end(&self.conn, &self.hooks, stmt.raw, &stmt.facts.effects)?;
            return Ok(self.changes(changes));
        }
        // Its rows are stepped under the same change tracking as any write's, so live queries
        // see what it changed; all in one part: a write's result is not decoded in pieces.
        let mut rows = None;
        let changes = run_write(&self.conn, &self.hooks, &stmt.facts.effects, || {
            rows = Some(encode_rows(&self.conn, stmt, usize::MAX, safe_integers, None)?);
            Ok(())
        })?;
        Ok(Outcome::Returned { rows: rows.expect("encoded"), changes, last_insert_rowid: self.last_insert_rowid() })
    }

    /// A statement's columns as JSON, `[{"name":…,"declaredType":…|null}, …]`: prepared, never
    /// stepped, so any statement may be asked about. A connection learns of a schema change made
    /// on another one only when it next reads, and a statement prepared before it keeps the old
    /// columns until it is stepped: so the schema is read first (a step that checks the schema
    /// cookie), and the statement is prepared afresh, not taken from the cache.
    pub fn columns(&mut self, sql: &str) -> DbResult<Vec<u8>> {
        self.conn.exec("SELECT 1 FROM sqlite_schema LIMIT 0")?;
        let stmt = &crate::sqlite::statement_cache::prepare(&self.conn, &self.hooks, sql)?;
        if stmt.has_tail {
            return Err(multiple_statements("columns takes one statement"));
        }
        let mut out = b"[".to_vec();
        for (i, name) in column_names(stmt.raw).iter().enumerate() {
            out.extend_from_slice(if i == 0 { b"{\"name\":" } else { b",{\"name\":" });
            write_string(&mut out, name);
            out.extend_from_slice(b",\"declaredType\":");
            // SAFETY: valid statement, i < its column count; the text is copied at once.
            let declared = unsafe { ffi::sqlite3_column_decltype(stmt.raw, i as i32) };
            if declared.is_null() {
                out.extend_from_slice(b"null");
            } else {
                // SAFETY: a NUL-terminated string SQLite owns until the statement is finalized.
                write_string(&mut out, &unsafe { CStr::from_ptr(declared) }.to_string_lossy());
            }
            out.push(b'}');
        }
        out.push(b']');
        Ok(out)
    }

    /// `db.prepare(sql)`: `{"reads":…,"columns":[…]}`, whether select takes the statement
    /// (select's checks) and its columns as `columns` gives them; prepared, never run.
    pub fn describe(&mut self, sql: &str) -> DbResult<Vec<u8>> {
        let columns = self.columns(sql)?;
        let stmt = self.cache.get(&self.conn, &self.hooks, sql)?;
        let reads = check_read(stmt).is_ok();
        let mut out =
            if reads { b"{\"reads\":true,\"columns\":".to_vec() } else { b"{\"reads\":false,\"columns\":".to_vec() };
        out.extend_from_slice(&columns);
        out.push(b'}');
        Ok(out)
    }

    /// The library's own BEGIN / SAVEPOINT / RELEASE / COMMIT / ROLLBACK: a handful of fixed
    /// texts, so they stay prepared in the cache (preparing them took a sixth of the writer's
    /// work in an interactive transaction; experiments/021).
    pub fn control(&mut self, sql: &str) -> DbResult<Outcome> {
        if sql == "COMMIT" || sql == "ROLLBACK" {
            self.cursors.clear(); // the transaction's iterations end with it
        }
        if sql.starts_with("BEGIN") {
            self.tx_writes = TxWrites::default();
        }
        let stmt = self.cache.get(&self.conn, &self.hooks, sql)?;
        if stmt.has_tail {
            return self.hooks.exec(&self.conn, sql).map(|_| Outcome::Done);
        }
        let _reset = ResetOnDrop::new(stmt);
        run_to_end(&self.conn, &self.hooks, stmt.raw, &stmt.facts.effects)?;
        Ok(Outcome::Done)
    }

    fn execute_script(&mut self, sql: &str, in_transaction: bool) -> DbResult<Outcome> {
        let mut rest = sql.as_bytes();
        let mut changes = 0;
        loop {
            self.hooks.clear_capture();
            let prepared = self.conn.prepare_at(rest, 0).map_err(|e| self.hooks.take_refusal().unwrap_or(e))?;
            let Some((stmt, consumed)) = prepared else { break };
            let kind = self.hooks.captured_kind();
            if kind.leaves_wal {
                return Err(leaves_wal_refused());
            }
            if in_transaction && kind.ends_a_level() {
                drop(stmt);
                return Err(self.refuse_transaction_control(
                    "a statement of this script would begin or end a transaction or a level",
                ));
            }
            let effects = self.hooks.captured_effects(&self.conn);
            changes += run_to_end(&self.conn, &self.hooks, stmt.0, &effects)?;
            rest = &rest[consumed..];
        }
        Ok(self.changes(changes))
    }

    /// executeBatch: every parameter set in one native loop, all or nothing: inside its own
    /// `BEGIN IMMEDIATE`, or inside a savepoint when it joins an open transaction.
    pub fn execute_batch(&mut self, sql: &str, params: &[u8]) -> DbResult<Outcome> {
        let mut reader = Reader::new(params);
        let sets = reader.u32()?;
        let stmt = self.cache.get(&self.conn, &self.hooks, sql)?;
        if stmt.has_tail {
            return Err(multiple_statements("executeBatch takes one statement"));
        }
        if stmt.facts.kind.leaves_wal {
            return Err(leaves_wal_refused());
        }
        if stmt.facts.kind.ends_a_level() {
            return Err(self.refuse_transaction_control("executeBatch runs in a transaction of its own"));
        }
        let raw = stmt.raw;
        let joins = !self.conn.autocommit();
        self.hooks.exec(&self.conn, if joins { "SAVEPOINT resqlite_batch" } else { "BEGIN IMMEDIATE" })?;
        let mut changes = 0;
        let mut bound = Vec::new();
        // Every set rebinds every parameter: reset between sets, unbind the texts and blobs once.
        let _reset = ResetOnDrop::new(stmt);
        let body = (|| {
            for set in 0..sets {
                // SAFETY: raw is the cached statement, alive for the whole job.
                unsafe { ffi::sqlite3_reset(raw) };
                let r = bind_with(stmt, &mut reader, &mut bound)
                    .and_then(|_| run_to_end(&self.conn, &self.hooks, raw, &stmt.facts.effects));
                changes +=
                    r.map_err(|e| DbError { message: format!("parameter set {}: {}", set + 1, e.message), ..e })?;
            }
            self.hooks.exec(&self.conn, if joins { "RELEASE resqlite_batch" } else { "COMMIT" })
        })();
        if let Err(e) = body {
            // SQLite may have rolled back already (e.g. after SQLITE_FULL): then there is
            // nothing to undo, and the error reports it (DbError::no_transaction).
            if !self.conn.autocommit() {
                let _ = self.hooks.exec(
                    &self.conn,
                    if joins { "ROLLBACK TO resqlite_batch; RELEASE resqlite_batch" } else { "ROLLBACK" },
                );
            }
            return Err(e);
        }
        Ok(self.changes(changes))
    }

    /// The error for a statement that begins or ends a transaction where it must not; inside
    /// a transaction, that transaction is rolled back first: its body asked to end it, and
    /// nothing of it may commit now (the error then reports it ended: `no_transaction`).
    fn refuse_transaction_control(&mut self, what: &str) -> DbError {
        if !self.conn.autocommit() {
            let _ = self.control("ROLLBACK");
        }
        transaction_control_in_transaction(what)
    }

    fn changes(&self, changes: i64) -> Outcome {
        Outcome::Changes { changes, last_insert_rowid: self.last_insert_rowid() }
    }

    fn last_insert_rowid(&self) -> i64 {
        // SAFETY: valid handle.
        unsafe { ffi::sqlite3_last_insert_rowid(self.conn.raw()) }
    }
}

/// Steps a statement to its end, discarding rows; returns the rows it changed, as `run_write`.
fn run_to_end(conn: &Connection, hooks: &Hooks, stmt: *mut ffi::sqlite3_stmt, effects: &WriteEffects) -> DbResult<i64> {
    run_write(conn, hooks, effects, || {
        while step(conn, stmt)? {}
        Ok(())
    })
}

/// Runs one statement's `steps` on the writer's connection, with what it does recorded for
/// live queries (`effects`: learned at prepare); returns the rows it changed (0 for a statement
/// that is not INSERT/UPDATE/DELETE, where sqlite3_changes would repeat an old count).
pub fn run_write(
    conn: &Connection,
    hooks: &Hooks,
    effects: &WriteEffects,
    steps: impl FnOnce() -> DbResult<()>,
) -> DbResult<i64> {
    // SAFETY: valid handle.
    let before = unsafe { ffi::sqlite3_total_changes64(conn.raw()) };
    hooks.run_statement(conn, effects, steps)?;
    // SAFETY: valid handle.
    unsafe {
        Ok(if ffi::sqlite3_total_changes64(conn.raw()) == before { 0 } else { ffi::sqlite3_changes64(conn.raw()) })
    }
}
