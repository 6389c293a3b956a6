//! Reader sessions: a session takes one of the database's reader connections (opening it if
//! it is closed) and runs reads (batched on one snapshot when several wait) and live-query
//! runs until the queue is empty or a rekey parks the readers (sessions.rs).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::iterate;
use super::job::{Job, Outcome, Request};
use super::open::open_worker;
use super::reader_connections::ReaderConnection;
use super::run::run;
use super::shared::{ReaderSlot, Shared};
use super::worker::{transaction_control_refused, PoolConnection};
use crate::error::DbError;
use crate::sqlite::setup::Role;

/// At most this many queued reads share one read transaction (experiments/002).
const MAX_READ_BATCH: usize = 16;
/// A read whose last run on this connection took this long (µs) is not batched with others.
const SLOW_MICROS: u32 = 1_000;

/// A reader session (sessions.rs starts it, on an engine thread).
pub(super) fn session(shared: Arc<Shared>) {
    shared.js.serve_from_this_thread();
    loop {
        // Never empty: at most `readers` sessions run.
        let mut conn = shared.reader_connections.lock().unwrap().0.pop().expect("a free reader connection");
        run_reads(&shared, &mut conn);
        conn.last_used = Instant::now();
        shared.reader_connections.lock().unwrap().0.push(conn);
        if shared.reader_session_ends() {
            return;
        }
    }
}

/// Opens the connection if it is closed (idle, or after a rekey): `Err` if that fails, for the
/// job at hand (the next one tries again).
fn open_connection<'a>(shared: &Shared, conn: &'a mut ReaderConnection) -> Result<&'a mut PoolConnection, DbError> {
    if conn.worker.is_none() {
        let worker = open_worker(&shared.opts, Role::Reader, shared.key().as_deref())?;
        shared.slots[conn.index].db.store(worker.conn.raw(), Ordering::Release);
        conn.worker = Some(worker);
    }
    Ok(conn.worker.as_mut().expect("opened"))
}

fn run_reads(shared: &Shared, conn: &mut ReaderConnection) {
    let rx = &shared.reads;
    let index = conn.index;
    let slot = &shared.slots[index];
    let mut batch = Vec::with_capacity(MAX_READ_BATCH);
    while !shared.sessions.parked() {
        let Ok(first) = rx.try_recv() else { return };
        if matches!(first.request, Request::Iterate { .. }) {
            iterate::on_reader(&shared.opts, shared, first); // on the iteration's own connection
            continue;
        }
        let worker = match open_connection(shared, conn) {
            Ok(worker) => worker,
            Err(e) => {
                finish_read(shared, &first, Outcome::Error(e));
                continue;
            }
        };
        batch.push(first);
        // Reads already waiting beyond the other readers' share run on one snapshot: one lock
        // cycle instead of one per query. Every job here was queued before the snapshot is
        // taken (at the first read after BEGIN), so each still sees every write committed
        // before it was issued.
        // A read not known to be quick (slow last time here, or not run here yet) runs alone,
        // and such reads taken with a batch run after the quick ones, shortest first: reads
        // batched behind one waited for it (a web page's queries behind a report;
        // experiments/035, 048).
        let expected = |worker: &PoolConnection, job: &Job| expected_micros(worker.cache.last_micros(&job.sql));
        if expected(worker, &batch[0]) == 0 {
            let extra = (rx.len() / shared.slots.len()).min(MAX_READ_BATCH - 1);
            batch.extend(rx.try_iter().take(extra));
            if batch.len() > 1 {
                batch.sort_by_key(|job| expected(worker, job)); // stable: call order otherwise
            }
        }
        let in_transaction = batch.len() > 1 && worker.exec("BEGIN").is_ok();
        for job in batch.drain(..) {
            if matches!(job.request, Request::Iterate { .. }) {
                iterate::on_reader(&shared.opts, shared, job);
                continue;
            }
            let started = Instant::now();
            let outcome = run_read(worker, shared, slot, &job, in_transaction);
            worker.cache.record_micros(&job.sql, started.elapsed().as_micros().min(u32::MAX as u128) as u32);
            if let Some(waited) = job.waited(started) {
                shared.complete(job.id, waited); // before its result, which settles it
            }
            finish_read(shared, &job, outcome);
        }
        if in_transaction && !worker.conn.autocommit() {
            let _ = worker.exec("COMMIT");
        }
        shared.record_memory(index + 1, &worker.conn);
    }
}

/// How long a read is expected to take, from its statement's last run here (0: none yet), for
/// its place in a batch: 0 if it is known to be quick (under SLOW_MICROS), the longest if it has
/// not run here yet. Slow reads run shortest first: a quick read that was slow once (its thread
/// descheduled for a while) must not wait behind a report (experiments/048).
fn expected_micros(last_micros: u32) -> u32 {
    match last_micros {
        0 => u32::MAX,
        quick if quick < SLOW_MICROS => 0,
        slow => slow,
    }
}

/// A read's outcome goes to JS; a live query's first to the registry.
fn finish_read(shared: &Shared, job: &Job, outcome: Outcome) {
    if matches!(job.request, Request::Live) {
        shared.finish_live(job.id, outcome);
    } else {
        shared.complete(job.id, outcome);
    }
}

fn run_read(
    worker: &mut PoolConnection,
    shared: &Shared,
    slot: &ReaderSlot,
    job: &Job,
    in_transaction: bool,
) -> Outcome {
    if job.cancellable {
        *slot.running.lock().unwrap() = job.id;
        if shared.take_cancelled(job.id) {
            *slot.running.lock().unwrap() = 0;
            return aborted();
        }
    }
    let mut outcome = run(worker, job, shared);
    if job.cancellable {
        *slot.running.lock().unwrap() = 0;
        if shared.take_cancelled(job.id) {
            outcome = aborted();
        }
    }
    // BEGIN, COMMIT and friends count as read-only statements; a select must not change the
    // reader's transaction state. Put it back and fail the job.
    if worker.conn.autocommit() == in_transaction {
        let _ = worker.exec(if in_transaction { "BEGIN" } else { "ROLLBACK" });
        outcome = Outcome::Error(transaction_control_refused());
    }
    outcome
}

fn aborted() -> Outcome {
    Outcome::Error(DbError::new("ABORT_ERR", "the operation was aborted"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_runs_quick_reads_first_then_slow_ones_shortest_first() {
        // (last run in µs, call order): quick reads, one slow once (1.2 ms), a report, a first run.
        let mut batch = [(800, 0), (0, 1), (70_000, 2), (1_200, 3), (10, 4)];
        batch.sort_by_key(|&(last, _)| expected_micros(last));
        assert_eq!(batch.map(|(_, order)| order), [0, 4, 3, 2, 1]);
    }
}
