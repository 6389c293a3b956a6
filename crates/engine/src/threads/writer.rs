//! The writer session: runs the database's writes in call order (standalone ones grouped
//! into one commit), publishes what they committed to the live queries, and runs `rekey`. Its
//! connection stays open between sessions in `shared.writer`, with a transaction open if one
//! is (a transaction's statements are separate jobs).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use super::checkpoint;
use super::group_commit;
use super::job::{Job, Outcome, Request};
use super::open::{open_worker, PoolOptions};
use super::run::run;
use super::shared::Shared;
use super::worker::PoolConnection;
use crate::error::{code, DbError};
use crate::spin::SpinPolicy;
use crate::sqlite::encryption::{self, KeyConfig};
use crate::sqlite::setup::{self, Role};

/// How long the writer session keeps looking for the next job before it ends: an awaited
/// write sequence sends its next job within microseconds of the completion (experiments/013).
const WRITER_SPIN: Duration = Duration::from_micros(50);

thread_local! {
    static SPIN: SpinPolicy = SpinPolicy::new();
}

/// The next job: one waiting, or one arriving while the session spins briefly (when the CPUs
/// have room for it, spin.rs).
fn next_job(rx: &Receiver<Job>) -> Option<Job> {
    let start = Instant::now();
    if SPIN.with(|spin| spin.allowed(start)) {
        loop {
            match rx.try_recv() {
                Ok(job) => return Some(job),
                Err(crossbeam_channel::TryRecvError::Empty) if start.elapsed() < WRITER_SPIN => std::hint::spin_loop(),
                Err(_) => return None,
            }
        }
    }
    rx.try_recv().ok()
}

/// The writer session (sessions.rs starts it, on an engine thread).
pub(super) fn session(shared: Arc<Shared>) {
    shared.js.serve_from_this_thread();
    let rx = shared.writes.as_ref().expect("a writer session has a queue");
    // A job taken while gathering a group that could not join it: it runs next.
    let mut held: Option<Job> = None;
    loop {
        match held.take().or_else(|| next_job(rx)) {
            Some(job) => held = run_job(&shared, rx, job),
            None if shared.writer_session_ends() => return,
            None => {}
        }
    }
}

/// Runs `job`, and the standalone writes queued behind it in one group; returns a job taken
/// from the queue that could not join the group (it runs next).
fn run_job(shared: &Shared, rx: &Receiver<Job>, job: Job) -> Option<Job> {
    let mut held = None;
    // The WAL passed its bound: checkpoint.rs starts it over once the jobs completed.
    let restart_wal;
    {
        // Held for the whole job; released before its completion goes out, so that the
        // transaction's next read may run on the connection from the JS thread (js_thread/runs.rs).
        let mut slot = shared.writer.lock().unwrap();
        if let Request::Rekey(key) = &job.request {
            let outcome = rekey(&mut slot, &shared.opts, shared, key.clone());
            drop(slot);
            shared.complete_writer_job(job.id, outcome);
            return None;
        }
        let Some(worker) = slot.as_mut() else {
            drop(slot);
            shared.complete_writer_job(job.id, Outcome::Error(writer_lost()));
            return None;
        };
        let tracking = shared.sync_writer_hooks(worker);
        // Standalone writes queued behind this one commit with it (group_commit.rs).
        let mut jobs = vec![job];
        if group_commit::may_join(&jobs[0]) {
            while jobs.len() < group_commit::MAX_GROUP {
                match rx.try_recv() {
                    Ok(next) if group_commit::may_join(&next) => jobs.push(next),
                    Ok(next) => {
                        held = Some(next);
                        break;
                    }
                    Err(_) => break,
                }
            }
        }
        // A traced job's wait ends here, where the writer begins running it (its group).
        let began = jobs.iter().any(|job| job.queued.is_some()).then(Instant::now);
        let mut outcomes = if jobs.len() > 1 {
            let mut committed = group_commit::Committed::default();
            let outcomes = group_commit::run(worker, &jobs, &mut committed, &mut |worker, job| {
                run_writer_job(worker, job, shared)
            });
            let mut total = shared.group_commits.lock().unwrap();
            total.groups += committed.groups;
            total.writes += committed.writes;
            outcomes
        } else {
            vec![run_writer_job(worker, &jobs[0], shared)]
        };
        for outcome in &mut outcomes {
            if let Outcome::Error(e) = outcome {
                e.no_transaction = worker.conn.autocommit();
            }
        }
        // Before the writes complete: by the time JS sees them, the re-runs they cause are queued.
        shared.publish_committed(worker, tracking);
        restart_wal = checkpoint::over_bound(worker, &shared.wal_bound).is_some();
        drop(slot);
        for (job, outcome) in jobs.iter().zip(outcomes) {
            if let Some(waited) = began.and_then(|began| job.waited(began)) {
                shared.complete(job.id, waited); // before its result, which settles it
            }
            shared.complete_writer_job(job.id, outcome);
        }
    }
    if restart_wal {
        checkpoint::restart(&shared.writer, &shared.wal_bound, shared.started);
    }
    held
}

/// One writer job, with the checks that keep a transaction's statements inside it.
fn run_writer_job(worker: &mut PoolConnection, job: &Job, shared: &Shared) -> Outcome {
    if job.in_transaction && worker.conn.autocommit() {
        return Outcome::Error(DbError::new(
            code::ERR_TRANSACTION_ROLLED_BACK,
            "the transaction is not open: it failed to begin, or SQLite rolled it back after an earlier error",
        ));
    }
    if matches!(job.request, Request::Execute | Request::Batch) {
        worker.tx_writes.on_thread = true; // its work is unknown: the COMMIT stays here (js_thread/runs.rs)
    }
    let outcome = run(worker, job, shared);
    if worker.conn.autocommit() && !worker.cursors.is_empty() {
        worker.cursors.clear(); // the transaction ended (SQLite rolled it back): so did its iterations
    }
    let user_statement = !matches!(job.request, Request::Control);
    if user_statement && job.in_transaction && !matches!(outcome, Outcome::Error(_)) && worker.conn.autocommit() {
        return Outcome::Error(DbError::new(
            code::ERR_TRANSACTION_CONTROL,
            "this statement ended the transaction (COMMIT, ROLLBACK or END inside db.transaction()); \
             end a transaction by returning from or throwing in its body",
        ));
    }
    outcome
}

fn writer_lost() -> DbError {
    DbError::new(
        code::ERR_REKEY,
        "the writer connection could not be reopened after rekey; close and reopen the database",
    )
}

/// `db.rekey` in the writer session (sqlite/encryption.rs explains the copy-and-rename): parks
/// the readers with their connections closed, finishes the paused backups, builds the rekeyed copy, renames it over the
/// database, reopens the writer, then releases the readers to reopen with the key now current. On a
/// failure before the rename nothing changed: the writer goes back to WAL and the readers
/// reopen with the old key.
fn rekey(
    slot: &mut Option<PoolConnection>,
    opts: &PoolOptions,
    shared: &Shared,
    new: Option<Arc<KeyConfig>>,
) -> Outcome {
    let Some(worker) = slot.as_mut() else { return Outcome::Error(writer_lost()) };
    if !worker.conn.autocommit() {
        return Outcome::Error(DbError::new(code::ERR_REKEY_IN_TRANSACTION, "rekey cannot run inside a transaction"));
    }
    let old = shared.key();
    if old.is_none() && new.is_none() {
        return Outcome::Done; // decrypting a plaintext database: nothing to do
    }
    if let Err(e) = shared.cursors.lock().unwrap().pause_for_rekey() {
        return Outcome::Error(e);
    }
    shared.park_readers();
    // resqlite/sqlite3's paused backups end: their connections would read the replaced file.
    shared.paused_backups.finish_for_rekey();
    // The JS thread's connection closes too (waiting out an inline read in progress); the
    // next read there opens it again, with the key in force.
    drop(shared.inline.lock().unwrap().take());
    let outcome = swap_key(slot, opts, shared, old, new);
    shared.cursors.lock().unwrap().resume();
    shared.release_readers();
    outcome
}

/// The rekey with every other connection closed: the copy, the rename (after which the new key
/// is the database's), the writer reopened.
fn swap_key(
    slot: &mut Option<PoolConnection>,
    opts: &PoolOptions,
    shared: &Shared,
    old: Option<Arc<KeyConfig>>,
    new: Option<Arc<KeyConfig>>,
) -> Outcome {
    let Some(worker) = slot.as_mut() else { return Outcome::Error(writer_lost()) };
    // The reopened writer keeps the durability in force, a user's `PRAGMA synchronous` included.
    let synchronous = match setup::synchronous_levels(&worker.conn, &opts.attach) {
        Ok(levels) => levels,
        Err(e) => return Outcome::Error(e),
    };
    // The copy must see a complete, unchanging file:
    // rollback-journal mode (the WAL checkpointed into the file and removed) and a RESERVED lock
    // keep the file complete and unchanging while it is copied.
    let copy = (|| {
        leave_wal(worker, opts.busy_timeout_ms)?;
        worker.exec("BEGIN IMMEDIATE")?;
        let copy = encryption::build_rekeyed_copy(&opts.path, old.as_deref(), new.as_deref());
        let _ = worker.exec("COMMIT");
        copy
    })();
    let swapped = copy.and_then(|tmp| {
        encryption::swap_in(&opts.path, &tmp).inspect_err(|_| encryption::remove_rekey_leftovers(&opts.path))
    });
    if let Err(e) = swapped {
        let _ = worker.conn.query_text("PRAGMA journal_mode = WAL");
        let _ = setup::restore_synchronous(&worker.conn, &synchronous);
        return Outcome::Error(e);
    }
    *shared.key.lock().unwrap() = new.clone();
    // The old connection still points at the replaced file: open the new one, then close it.
    let reopened = open_worker(opts, Role::Writer, new.as_deref())
        .and_then(|fresh| setup::restore_synchronous(&fresh.conn, &synchronous).map(|_| fresh));
    let outcome = match reopened {
        Ok(fresh) => {
            let mut db = shared.writer_db.lock().unwrap();
            *db = fresh.conn.raw() as usize;
            *slot = Some(fresh);
            Outcome::Done
        }
        Err(e) => {
            *shared.writer_db.lock().unwrap() = 0;
            *slot = None;
            Outcome::Error(DbError { message: format!("{} (after rekey)", e.message), ..e })
        }
    };
    outcome
}

/// Switches the writer to rollback-journal mode for the rekey copy. SQLite tries that once, with
/// no busy handler, and fails while any other connection reads the file (Litestream holds a
/// read transaction all the time it replicates): retried here for up to the busy timeout.
fn leave_wal(worker: &PoolConnection, busy_timeout_ms: u32) -> Result<(), DbError> {
    let deadline = Instant::now() + Duration::from_millis(busy_timeout_ms.into());
    // Synced as the library's rollback-journal transactions are (setup::ROLLBACK_JOURNAL_SYNC);
    // the writer is replaced after the rekey, or its levels restored if the rekey fails.
    worker.exec(&format!("PRAGMA main.synchronous = {}", setup::ROLLBACK_JOURNAL_SYNC))?;
    loop {
        match worker.conn.query_text("PRAGMA journal_mode = DELETE") {
            Ok(mode) if mode.eq_ignore_ascii_case("delete") => return Ok(()),
            Err(e) if !e.code.starts_with("SQLITE_BUSY") => return Err(e),
            _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                return Err(DbError::new(
                    "SQLITE_BUSY",
                    format!(
                        "rekey needs the database to itself, but another process kept it open in WAL mode or \
                         held a read transaction on it for busyTimeout = {busy_timeout_ms} ms (a replicating \
                         Litestream does, all the time): stop that process, rekey, then start it again"
                    ),
                ))
            }
        }
    }
}
