//! Reads on the JS thread (experiments/032). A point query costs SQLite ~2 µs, a hop to a
//! reader thread and back several times that, so a read may run right where it is issued, on
//! a read-only connection of its own, under a time budget: SQLite's progress handler interrupts
//! the statement once the budget is spent (sqlite/budget.rs). Then nothing was delivered, and
//! the same read goes to a reader thread (a read-only statement runs again safely); the
//! statement skips the JS thread for a while (doubling while it keeps overrunning), and tries
//! again now and then, since data changes.
//!
//! Outside transactions the read runs on a read-only connection of the JS thread's own, opened
//! by a pool thread (threads/open.rs) and kept behind a lock in `Shared`; the writer closes and
//! reopens it around a rekey. Inside a transaction it runs on the writer's connection, which
//! the body owns between its awaits, while the writer thread waits for its next job: a read
//! statement interrupted there leaves the transaction as it was (writes stay on the writer).

use std::os::raw::c_int;
use std::time::Duration;

use sqlite3mc_sys as ffi;

use crate::encode::json::encode_json;
use crate::error::DbResult;
use crate::sqlite::connection::Connection;
use crate::sqlite::params::{bind, Reader};
use crate::sqlite::statement_cache::{ResetOnDrop, Statement};
use crate::sqlite::step::{cell, column_names, step, Cell};
use crate::threads::worker::Worker;

/// How many runs a statement skips the JS thread for after its first overrun; doubled after each further
/// overrun, up to MAX_SKIP, and halved after each inline run that fits.
const FIRST_SKIP: u32 = 16;
const MAX_SKIP: u32 = 1024;

/// Receives an inline select's result as it is stepped: the column names, then every cell in
/// row order. `cell` returns false when the result is too large to hand over this way.
pub trait RowSink {
    fn names(&mut self, names: &[String]);
    fn cell(&mut self, cell: Cell) -> bool;
}

/// How an inline run ended.
pub enum Ran<T> {
    /// The whole result (or the statement's error, returned as `Err` instead).
    Done(T),
    /// Nothing delivered: it overran its budget, or its result is too large for the JS
    /// thread; run it on a thread.
    Moved,
    /// Not run: the statement overran recently, or it returns no rows (transaction control
    /// and the like: its thread's checks apply); run it on a thread.
    Skipped,
}

impl<T> Ran<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Ran<U> {
        match self {
            Ran::Done(v) => Ran::Done(f(v)),
            Ran::Moved => Ran::Moved,
            Ran::Skipped => Ran::Skipped,
        }
    }
}

/// select / selectOne: the rows go to `sink` as they are stepped.
pub fn select(
    worker: &mut Worker,
    sql: &str,
    params: &[u8],
    max_rows: usize,
    budget: Duration,
    sink: &mut dyn RowSink,
) -> DbResult<Ran<usize>> {
    run(worker, sql, params, budget, |stmt, conn| {
        let raw = stmt.raw;
        let mut more = step(conn, raw)?;
        let names = column_names(raw);
        sink.names(&names);
        let mut rows = 0;
        while more && rows < max_rows {
            for i in 0..names.len() {
                // SAFETY: the statement is on a row; the cell is used before the next step.
                if !sink.cell(unsafe { cell(raw, i as c_int, &names, rows)? }) {
                    return Ok(Ran::Moved);
                }
            }
            rows += 1;
            if rows < max_rows {
                more = step(conn, raw)?;
            }
        }
        Ok(Ran::Done(rows))
    })
}

/// selectBytes: the result's JSON text.
pub fn select_json(worker: &mut Worker, sql: &str, params: &[u8], budget: Duration) -> DbResult<Ran<Vec<u8>>> {
    run(worker, sql, params, budget, |stmt, conn| encode_json(conn, stmt, usize::MAX).map(Ran::Done))
}

/// Runs `body` on `sql`'s bound statement within `budget`. An overrun (or a result too large
/// for the JS thread) moves the read and makes the statement skip the JS thread for a while.
fn run<T>(
    worker: &mut Worker,
    sql: &str,
    params: &[u8],
    budget: Duration,
    body: impl FnOnce(&Statement, &Connection) -> DbResult<Ran<T>>,
) -> DbResult<Ran<T>> {
    let (stmt, conn, clock) = worker.budgeted_read(sql)?;
    let skip = stmt.inline_skip.get();
    // SAFETY: valid statement.
    if skip > 0 || unsafe { ffi::sqlite3_column_count(stmt.raw) } == 0 {
        stmt.inline_skip.set(skip.saturating_sub(1));
        return Ok(Ran::Skipped);
    }
    let result = {
        let _reset = ResetOnDrop(stmt.raw);
        let (result, overran) =
            clock.within(budget, || bind(stmt, &mut Reader::new(params)).and_then(|_| body(stmt, conn)));
        match result {
            Err(_) if overran => Ok(Ran::Moved),
            other => other,
        }
    };
    let backoff = stmt.inline_backoff.get();
    match &result {
        Ok(Ran::Moved) => {
            let next = (backoff * 2).clamp(FIRST_SKIP, MAX_SKIP);
            stmt.inline_backoff.set(next);
            stmt.inline_skip.set(next);
        }
        _ => stmt.inline_backoff.set(backoff / 2),
    }
    result
}
