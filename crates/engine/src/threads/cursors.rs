//! Iterations (`db.iterate`, `tx.iterate`): a query whose rows cross to JS a page at a time,
//! its statement held open between pages, so memory stays flat whatever the result's size and
//! every page comes from one snapshot (the statement's read transaction lasts from its first
//! step to its last).
//!
//! Outside a transaction an iteration gets a connection of its own, not a reader's: a reader
//! held between pages would queue every other read behind a loop body that may itself await a
//! read (a deadlock with one reader), or serve them from the iteration's old snapshot. The
//! connections are kept for the next iteration (up to MAX_IDLE). Each step is a job on the
//! readers' queue; whichever reader takes it runs it on the iteration's connection, which only
//! one job uses at a time (JS asks for the next page once the last has arrived). Inside a
//! transaction the statement runs on the writer's connection, in the transaction, between its
//! other statements, and ends with it.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::job::{IterateStep, Job, Outcome, Request};
use super::open::{open_worker, PoolOptions};
use super::shared::Shared;
use super::worker::Worker;
use crate::encode::rows::encode_rows;
use crate::error::DbError;
use crate::sqlite::connection::Connection;
use crate::sqlite::params::{bind, Reader};
use crate::sqlite::setup::Role;
use crate::sqlite::statement_cache::Statement;

/// Iteration connections kept open for the next iteration.
const MAX_IDLE: usize = 2;

/// An iteration's statement, prepared for it alone (a select of the same SQL meanwhile must not
/// reset it), and the parameter bytes its bindings point into.
pub struct Cursor {
    stmt: Statement,
    _params: Vec<u8>,
    page_rows: usize,
}

impl Cursor {
    /// `stmt` (checked to be one read-only statement) bound to `params`.
    pub fn new(stmt: Statement, params: Vec<u8>, page_rows: usize) -> Result<Cursor, DbError> {
        bind(&stmt, &mut Reader::new(&params))?;
        Ok(Cursor { stmt, _params: params, page_rows })
    }

    /// The next page: `Page` when it is full (more rows may follow), `Rows` when it is the last.
    fn page(&self, conn: &Connection, safe_integers: bool) -> Outcome {
        match encode_rows(conn, &self.stmt, self.page_rows, safe_integers, None) {
            Ok(rows) if rows.row_count() as usize == self.page_rows => Outcome::Page(rows),
            Ok(rows) => Outcome::Rows(rows),
            Err(e) => Outcome::Error(e),
        }
    }
}

/// The iterations outside transactions, and their spare connections.
#[derive(Default)]
pub struct Cursors {
    open: HashMap<u32, Open>,
    idle: Vec<Worker>,
    /// A rekey or close is under way: no iteration starts.
    stopped: Option<&'static str>,
}

/// An open iteration: its statement (first: finalized before its connection closes) and its
/// connection.
struct Open {
    cursor: Cursor,
    worker: Worker,
}

// SAFETY: as for Worker: the statement, its connection and the hooks its bookkeeping may share
// (Rc) move together, and one thread uses them at a time — the reader that took the iteration
// out of the map for one step (JS asks for a page only once the last arrived).
unsafe impl Send for Open {}

impl Cursors {
    /// Before a rekey: no iteration may be open, and none starts until `resume`; the spare
    /// connections close (they hold the old key).
    pub fn pause_for_rekey(&mut self) -> Result<(), DbError> {
        if !self.open.is_empty() {
            return Err(DbError::new(
                "ERR_ITERATION_OPEN",
                format!(
                    "rekey needs every connection closed, and {} iteration(s) are open: finish or break \
                     out of them (or abort their signal) first",
                    self.open.len()
                ),
            ));
        }
        self.idle.clear();
        self.stopped = Some("a rekey is in progress");
        Ok(())
    }

    pub fn resume(&mut self) {
        self.stopped = None;
    }

    /// At close: every iteration ends, every connection closes.
    pub fn close(&mut self) {
        self.stopped = Some("the database is closing");
        self.open.clear();
        self.idle.clear();
    }
}

fn ended() -> DbError {
    DbError::new("ERR_ITERATION_ENDED", "the iteration has ended: it was read to its end, broken out of, or closed")
}

/// A step of an iteration outside a transaction, on a reader thread.
pub(super) fn on_reader(opts: &PoolOptions, shared: &Shared, job: Job) {
    let outcome = catch_unwind(AssertUnwindSafe(|| step_on_reader(opts, shared, &job))).unwrap_or_else(|_| {
        Outcome::Error(DbError::new("ERR_INTERNAL", "internal error in the engine (a Rust panic in an iteration)"))
    });
    shared.complete(job.id, outcome);
}

fn step_on_reader(opts: &PoolOptions, shared: &Shared, job: &Job) -> Outcome {
    let Request::Iterate { cursor: id, ref step } = job.request else { unreachable!("an iteration's job") };
    let mut cursors = shared.cursors.lock().unwrap();
    match *step {
        IterateStep::Start { page_rows } => {
            if let Some(why) = cursors.stopped {
                return Outcome::Error(DbError::new("ERR_ITERATION_ENDED", format!("no iteration starts: {why}")));
            }
            let spare = cursors.idle.pop();
            drop(cursors);
            let mut worker =
                match spare.map_or_else(|| open_worker(opts, Role::Reader, shared.gate.key().as_deref()), Ok) {
                    Ok(worker) => worker,
                    Err(e) => return Outcome::Error(e),
                };
            match worker.cursor(&job.sql, job.params.clone(), page_rows) {
                Ok(cursor) => page(shared, id, Open { cursor, worker }),
                Err(e) => {
                    keep_spare(shared, worker);
                    Outcome::Error(e)
                }
            }
        }
        IterateStep::Next => match cursors.open.remove(&id) {
            Some(open) => {
                drop(cursors);
                page(shared, id, open)
            }
            None => Outcome::Error(ended()),
        },
        IterateStep::End => {
            let open = cursors.open.remove(&id);
            drop(cursors);
            if let Some(Open { cursor, worker }) = open {
                drop(cursor);
                keep_spare(shared, worker);
            }
            Outcome::Done
        }
    }
}

/// Steps the next page outside the lock; an iteration with more rows goes back in the map.
fn page(shared: &Shared, id: u32, open: Open) -> Outcome {
    let outcome = open.cursor.page(&open.worker.conn, shared.safe_integers);
    if matches!(outcome, Outcome::Page(_)) {
        let mut cursors = shared.cursors.lock().unwrap();
        if cursors.stopped.is_none() {
            cursors.open.insert(id, open);
            return outcome;
        }
        return Outcome::Error(ended()); // closing meanwhile
    }
    let Open { cursor, worker } = open;
    drop(cursor);
    keep_spare(shared, worker);
    outcome
}

fn keep_spare(shared: &Shared, worker: Worker) {
    let mut cursors = shared.cursors.lock().unwrap();
    if cursors.stopped.is_none() && cursors.idle.len() < MAX_IDLE {
        cursors.idle.push(worker);
    }
}

/// A step of an iteration inside a transaction, on the writer's connection.
pub(super) fn on_writer(worker: &mut Worker, job: &Job, id: u32, step: &IterateStep, safe_integers: bool) -> Outcome {
    let cursor = match *step {
        IterateStep::Start { page_rows } => match worker.cursor(&job.sql, job.params.clone(), page_rows) {
            Ok(cursor) => cursor,
            Err(e) => return Outcome::Error(e),
        },
        IterateStep::Next => match worker.cursors.remove(&id) {
            Some(cursor) => cursor,
            None => return Outcome::Error(ended()),
        },
        IterateStep::End => {
            worker.cursors.remove(&id);
            return Outcome::Done;
        }
    };
    let outcome = cursor.page(&worker.conn, safe_integers);
    if matches!(outcome, Outcome::Page(_)) {
        worker.cursors.insert(id, cursor);
    }
    outcome
}
