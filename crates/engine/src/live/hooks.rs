//! The live-query hooks on one of the pool's connections: the authorizer on every connection
//! (what statements read and write, learned as they are prepared), the writer's change hooks
//! (what its writes changed), and the calls that run statements with both kept informed.

use std::cell::RefCell;
use std::sync::Arc;

use sqlite3mc_sys as ffi;

use super::capture::{authorize, AuthEvent, Capture, StatementKind};
use super::dependencies::{ChangeSet, Dependencies};
use super::tracker::recording;
use super::tracker::{ChangeTracker, HookState, Tracking, WriteEffects};
use crate::error::{DbError, DbResult};
use crate::sqlite::connection::Connection;
use crate::sqlite::setup::Role;
use crate::sqlite::statement_cache::{self, Compiling};
use crate::sqlite::step::step;

/// A statement on the pool's connections, with what the hooks learned as it compiled.
pub type Statement = statement_cache::Statement<Facts>;
pub type StatementCache = statement_cache::StatementCache<Facts>;
pub type ResetOnDrop = statement_cache::ResetOnDrop<Facts>;

/// What the authorizer learned about a statement as it compiled.
pub struct Facts {
    /// What it does to transactions and settings (BEGIN and SAVEPOINT count as read-only).
    pub kind: StatementKind,
    /// What it reads, from the authorizer (reader connections; live queries). Grows when
    /// SQLite re-prepares it.
    pub reads: RefCell<Arc<Dependencies>>,
    /// What running it does besides changing rows (writer connection).
    pub effects: WriteEffects,
    /// It calls a function that returns the connection's own state (`last_insert_rowid()` and
    /// the like): a read that must not run on the writer's connection in a reader's stead.
    pub connection_state: bool,
}

impl Compiling for Hooks {
    type Facts = Facts;

    fn start(&self) {
        self.clear_capture();
    }

    fn facts(&self, conn: &Connection) -> Facts {
        Facts {
            reads: RefCell::new(Arc::new(self.captured_reads().unwrap_or_else(Dependencies::none))),
            effects: self.captured_effects(conn),
            connection_state: self.captured_connection_state(),
            kind: self.captured_kind(),
        }
    }

    fn take_refusal(&self) -> Option<DbError> {
        Hooks::take_refusal(self)
    }

    /// Its effects name tables and columns by the schema of their generation.
    fn current(&self, facts: &Facts) -> bool {
        facts.effects.generation == self.schema_generation()
    }
}

/// A connection's live-query hooks: the state SQLite's callbacks reach, and the connection's
/// role. Boxed, so the addresses SQLite holds stay put, and kept until after the connection
/// closes (closing may call the hooks).
pub struct Hooks {
    role: Role,
    state: HookState,
}

impl Hooks {
    /// Installs the authorizer on `conn`; the change hooks come with `set_tracking`.
    ///
    /// # Safety
    /// The returned box must outlive `conn`'s handle, and both are used only on its thread.
    pub unsafe fn install(conn: &Connection, role: Role) -> Box<Hooks> {
        let hooks = Box::new(Hooks {
            role,
            state: HookState {
                capture: RefCell::new(Capture::new(role)),
                tracker: RefCell::new(ChangeTracker::default()),
            },
        });
        let capture = &hooks.state.capture as *const _ as *mut std::ffi::c_void;
        ffi::sqlite3_set_authorizer(conn.raw(), Some(authorize), capture);
        hooks
    }

    /// Turns the writer's change hooks on or off. Off while no live query exists: the
    /// pre-update hook costs ~150 instructions a row and disables SQLite's fast path for
    /// `DELETE FROM t` (experiments/018). Turned on inside an open transaction, the changes made
    /// before are unknown, so its commit counts as changing everything.
    pub fn set_tracking(&self, conn: &Connection, on: bool) {
        // SAFETY: the state outlives the connection's hooks (see install).
        unsafe { recording::install(conn, &self.state, on) };
        let mut tracker = self.state.tracker.borrow_mut();
        tracker.reset();
        if on && !conn.autocommit() {
            tracker.mark_incomplete();
        }
    }

    fn tracking<'a>(&'a self, conn: &'a Connection) -> Tracking<'a> {
        Tracking { conn, state: &self.state }
    }

    /// Runs `f` with every compilation refused (a re-prepare fails with SQLITE_AUTH before the
    /// statement does anything); also returns whether one was refused.
    pub fn refusing_compilation<T>(&self, f: impl FnOnce() -> T) -> (T, bool) {
        {
            let mut capture = self.state.capture.borrow_mut();
            capture.deny = true;
            capture.denied = false;
        }
        let result = f();
        let mut capture = self.state.capture.borrow_mut();
        capture.deny = false;
        (result, std::mem::take(&mut capture.denied))
    }

    /// Whether something compiled here made this connection's reads differ from a reader's
    /// (capture.rs `diverged`).
    pub fn diverged(&self) -> bool {
        self.state.capture.borrow().diverged
    }

    /// Whether the statement compiled since `clear_capture` reads the connection's own state.
    pub fn captured_connection_state(&self) -> bool {
        self.state.capture.borrow().connection_state
    }

    /// Runs `f` (which prepares a read's statement) with PRAGMAs that change a setting refused
    /// as they compile (capture.rs `refused_pragma`).
    pub fn compiling_a_read<T>(&self, f: impl FnOnce() -> T) -> T {
        self.state.capture.borrow_mut().reading = true;
        let result = f();
        self.state.capture.borrow_mut().reading = false;
        result
    }

    /// Why the authorizer refused a compilation since `clear_capture`, if it did.
    pub fn take_refusal(&self) -> Option<DbError> {
        self.state.capture.borrow_mut().refusal.take()
    }

    /// What the statement compiled since `clear_capture` does to transactions and settings.
    pub fn captured_kind(&self) -> StatementKind {
        self.state.capture.borrow().kind
    }

    /// Whether a PRAGMA of a setting the JS thread's commits keep was compiled since the last
    /// call.
    pub fn take_commit_pragma(&self) -> bool {
        std::mem::take(&mut self.state.capture.borrow_mut().commit_pragma)
    }

    /// Forgets what the authorizer recorded so far: call before preparing or running.
    pub fn clear_capture(&self) {
        self.state.capture.borrow_mut().clear();
    }

    /// What the statements prepared since `clear_capture` read (reader connections).
    pub fn captured_reads(&self) -> Option<Dependencies> {
        let capture = self.state.capture.borrow();
        if capture.events.is_empty() && !capture.overflow {
            return None;
        }
        Some(Dependencies::from_events(&capture.events, capture.overflow))
    }

    /// What running the statements prepared since `clear_capture` will do besides changing
    /// rows (writer connection; empty on readers).
    pub fn captured_effects(&self, conn: &Connection) -> WriteEffects {
        if self.role != Role::Writer {
            return WriteEffects::default();
        }
        let events: Vec<AuthEvent> = std::mem::take(&mut self.state.capture.borrow_mut().events);
        self.tracking(conn).effects(&events)
    }

    /// After a statement ran on the writer: applies its effects, and those of statements
    /// SQLite prepared while it ran (a re-prepare after a schema change, a virtual table's own).
    fn after_statement(&self, conn: &Connection, effects: &WriteEffects, succeeded: bool) {
        if self.role != Role::Writer {
            return;
        }
        let autocommit = conn.autocommit();
        self.state.tracker.borrow_mut().apply(effects, succeeded, autocommit);
        if !self.state.capture.borrow().events.is_empty() {
            let during = self.captured_effects(conn);
            self.state.tracker.borrow_mut().apply(&during, false, autocommit);
            self.tracking(conn).recompiled();
        }
    }

    /// Steps a statement on the writer (`steps`), its written tables known to the change
    /// hooks, then applies its effects (`after_statement`): as having succeeded when `steps`
    /// returned Ok.
    pub fn run_statement<T>(
        &self,
        conn: &Connection,
        effects: &WriteEffects,
        steps: impl FnOnce() -> DbResult<T>,
    ) -> DbResult<T> {
        let stepped = self.tracking(conn).running(effects, || {
            self.clear_capture();
            steps()
        });
        self.after_statement(conn, effects, stepped.is_ok());
        stepped
    }

    /// Runs every statement of `sql`, discarding rows (the library's transaction control). One
    /// statement at a time, so the writer applies each one's effects in order.
    pub fn exec(&self, conn: &Connection, sql: &str) -> DbResult<()> {
        crate::sqlite::connection::refuse_nul(sql)?;
        let mut rest = sql.as_bytes();
        loop {
            self.clear_capture();
            let Some((stmt, consumed)) = conn.prepare_at(rest, 0)? else { return Ok(()) };
            let effects = self.captured_effects(conn);
            self.run_statement(conn, &effects, || {
                while step(conn, stmt.0)? {}
                Ok(())
            })?;
            rest = &rest[consumed..];
        }
    }

    /// Bumped when a schema may have changed: cached statements prepared before are out of
    /// date (their effects name columns by the old schema).
    pub fn schema_generation(&self) -> u64 {
        self.state.tracker.borrow().generation()
    }

    /// After a writer job: what it committed, if anything.
    pub fn take_committed(&self, conn: &Connection) -> Option<ChangeSet> {
        self.tracking(conn).take_committed(conn.autocommit())
    }
}
