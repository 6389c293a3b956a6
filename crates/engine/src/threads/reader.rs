//! A reader thread: opens its read-only connection, then runs reads (batched on one snapshot
//! when several wait) and live-query runs until the pool closes, parking for a rekey.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crossbeam_channel::Receiver;

use super::iterate;
use super::job::{Job, Outcome, Request};
use super::open::{open_lead, open_worker, OpenLatch, PoolOptions};
use super::run::run;
use super::shared::{ReaderSlot, Shared};
use super::worker::{transaction_control_refused, Worker};
use crate::error::DbError;
use crate::sqlite::setup::Role;

/// At most this many queued reads share one read transaction (experiments/002).
const MAX_READ_BATCH: usize = 16;
/// A read whose last run on this connection took this long (µs) is not batched with others.
const SLOW_MICROS: u32 = 1_000;

pub(super) fn reader_thread(
    opts: &PoolOptions,
    shared: &Shared,
    latch: &OpenLatch,
    index: usize,
    rx: Receiver<Job>,
    park: Receiver<()>,
) {
    let lead = opts.readonly && index == 0;
    if !lead && !latch.wait_for_lead() {
        return;
    }
    let key = shared.gate.key();
    let opened = if lead {
        open_lead(opts, Role::Reader, key.as_deref())
    } else {
        open_worker(opts, Role::Reader, key.as_deref())
    };
    if lead {
        latch.lead_done(opened.is_ok());
    }
    let worker = match opened {
        Ok(worker) => worker,
        Err(e) => return latch.failed(shared, e),
    };
    shared.slots[index].db.store(worker.conn.raw(), Ordering::Release);
    latch.reader_opened(shared);
    reader_loop(worker, opts, shared, index, rx, park);
    shared.slots[index].db.store(std::ptr::null_mut(), Ordering::Release);
}

fn reader_loop(
    worker: Worker,
    opts: &PoolOptions,
    shared: &Shared,
    index: usize,
    rx: Receiver<Job>,
    park: Receiver<()>,
) {
    let slot = &shared.slots[index];
    let mut batch = Vec::with_capacity(MAX_READ_BATCH);
    // `Err`: reopening after a rekey failed; jobs fail with that error until a reopen works.
    let mut worker: Result<Worker, DbError> = Ok(worker);
    loop {
        let first = crossbeam_channel::select! {
            recv(rx) -> job => match job {
                Ok(job) => job,
                Err(_) => break,
            },
            recv(park) -> _ => {
                // A rekey: close the connection, wait for the writer to swap the file, reopen.
                slot.db.store(std::ptr::null_mut(), Ordering::Release);
                drop(worker);
                let key = shared.gate.park();
                worker = open_worker(opts, Role::Reader, key.as_deref());
                if let Ok(w) = &worker {
                    slot.db.store(w.conn.raw(), Ordering::Release);
                }
                continue;
            }
        };
        if matches!(first.request, Request::Iterate { .. }) {
            iterate::on_reader(opts, shared, first); // on the iteration's own connection
            continue;
        }
        if worker.is_err() {
            worker = open_worker(opts, Role::Reader, shared.gate.key().as_deref());
            if let Ok(w) = &worker {
                slot.db.store(w.conn.raw(), Ordering::Release);
            }
        }
        let worker = match &mut worker {
            Ok(worker) => worker,
            Err(e) => {
                let error = DbError { code: e.code.clone(), message: e.message.clone(), no_transaction: false };
                finish_read(shared, &first, Outcome::Error(error));
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
        let expected = |worker: &Worker, job: &Job| expected_micros(worker.cache.last_micros(&job.sql));
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
                iterate::on_reader(opts, shared, job);
                continue;
            }
            let started = Instant::now();
            let outcome = run_read(worker, shared, slot, &job, in_transaction);
            worker.cache.record_micros(&job.sql, started.elapsed().as_micros().min(u32::MAX as u128) as u32);
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

fn run_read(worker: &mut Worker, shared: &Shared, slot: &ReaderSlot, job: &Job, in_transaction: bool) -> Outcome {
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
