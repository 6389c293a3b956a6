//! Iterations (`db.iterate`, `tx.iterate`): a query whose rows cross to JS a page at a time,
//! its statement held open between pages, so memory stays flat whatever the result's size and
//! every page comes from one snapshot (the statement's read transaction lasts from its first
//! step to its last).
//!
//! Outside a transaction an iteration gets a connection of its own, not a reader's: a reader
//! held between pages would queue every other read behind a loop body that may itself await a
//! read (a deadlock with one reader), or serve them from the iteration's old snapshot. The
//! connections are kept for the next iteration (cursors.rs). Each step is a job on the
//! readers' queue; whichever reader takes it runs it on the iteration's connection, which only
//! one job uses at a time (JS asks for the next page once the last has arrived). Inside a
//! transaction the statement runs on the writer's connection, in the transaction, between its
//! other statements, and ends with it.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::cursors::Open;
use super::job::{IterateStep, Job, Outcome, Request};
use super::open::{open_worker, PoolOptions};
use super::shared::Shared;
use super::worker::PoolConnection;
use crate::encode::pages::Cursor;
use crate::error::{code, DbError};
use crate::sqlite::connection::Connection;
use crate::sqlite::setup::Role;

/// A step's outcome: `Page` when the page is full (more rows may follow), `Rows` when it is
/// the last.
fn page_outcome(cursor: &Cursor, conn: &Connection, safe_integers: bool) -> Outcome {
    match cursor.page(conn, safe_integers) {
        Ok((rows, true)) => Outcome::Page(rows),
        Ok((rows, false)) => Outcome::Rows(rows),
        Err(e) => Outcome::Error(e),
    }
}

fn ended() -> DbError {
    DbError::new(code::ERR_ITERATION_ENDED, "the iteration has ended: it was read to its end, broken out of, or closed")
}

/// A step of an iteration outside a transaction, on a reader thread.
pub(super) fn on_reader(opts: &PoolOptions, shared: &Shared, job: Job) {
    let outcome = catch_unwind(AssertUnwindSafe(|| step_on_reader(opts, shared, &job)))
        .unwrap_or_else(|payload| Outcome::Error(DbError::panicked(payload)));
    shared.complete(job.id, outcome);
}

fn step_on_reader(opts: &PoolOptions, shared: &Shared, job: &Job) -> Outcome {
    let Request::Iterate { cursor: id, ref step } = job.request else { unreachable!("an iteration's job") };
    let mut cursors = shared.cursors.lock().unwrap();
    match *step {
        IterateStep::Start { page_rows } => {
            if let Some(why) = cursors.stopped {
                return Outcome::Error(DbError::new(code::ERR_ITERATION_ENDED, format!("no iteration starts: {why}")));
            }
            let spare = cursors.idle.pop();
            drop(cursors);
            let mut worker = match spare.map_or_else(|| open_worker(opts, Role::Reader, shared.key().as_deref()), Ok) {
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
    let outcome = page_outcome(&open.cursor, &open.worker.conn, shared.safe_integers);
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

fn keep_spare(shared: &Shared, worker: PoolConnection) {
    shared.cursors.lock().unwrap().keep_spare(worker);
}

/// A step of an iteration inside a transaction, on the writer's connection.
pub(super) fn on_writer(
    worker: &mut PoolConnection,
    job: &Job,
    id: u32,
    step: &IterateStep,
    safe_integers: bool,
) -> Outcome {
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
    let outcome = page_outcome(&cursor, &worker.conn, safe_integers);
    if matches!(outcome, Outcome::Page(_)) {
        worker.cursors.insert(id, cursor);
    }
    outcome
}
