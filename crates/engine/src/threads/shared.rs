//! What the pool's threads share: the completion queue, what `cancel` and `interrupt_writer`
//! reach into, the rekey gate, the live-query registry, and the diagnostics counters.

use std::collections::HashSet;
use std::sync::atomic::AtomicPtr;
use std::sync::Mutex;

use crossbeam_channel::Sender;
use sqlite3mc_sys as ffi;

use super::completions::Completions;
use super::cursors::Cursors;
use super::group_commit;
use super::job::Outcome;
use super::reader_gate::ReaderGate;
use super::worker::Worker;
use crate::live::dependencies::ChangeSet;
use crate::live::registry::Registry;
use crate::sqlite::connection::Connection;

/// How often a connection's memory use is measured for `diagnostics()`, at most.
const MEMORY_INTERVAL_MS: u64 = 250;

/// A reader's current job, so `cancel` can interrupt exactly that statement.
pub(super) struct ReaderSlot {
    pub(super) running: Mutex<u32>,
    pub(super) db: AtomicPtr<ffi::sqlite3>,
}

pub struct Shared {
    pub completions: Completions,
    /// The writer's connection while it is open (0 otherwise), for `interrupt_writer`; the
    /// lock keeps it from closing during an interrupt.
    pub(super) writer_db: Mutex<usize>,
    pub(super) cancelled: Mutex<HashSet<u32>>,
    pub(super) slots: Vec<ReaderSlot>,
    pub safe_integers: bool,
    /// The key connections open with, and the rekey handshake with the readers.
    pub(super) gate: ReaderGate,
    /// One per reader: a message parks it for a rekey.
    pub(super) park: Vec<Sender<()>>,
    pub(super) live_queries: Mutex<Registry>,
    /// Live queries exist: the writer tracks its changes (set under the registry lock).
    pub tracking: std::sync::atomic::AtomicBool,
    /// SQLite's memory per connection (writer first): page cache, schema, statements.
    pub(super) memory: Vec<[std::sync::atomic::AtomicI64; 3]>,
    /// When each connection's memory is next measured (ms since `started`, offset by one
    /// interval so 0 means "now").
    pub(super) memory_due: Vec<std::sync::atomic::AtomicU64>,
    pub(super) started: std::time::Instant,
    /// Standalone writes committed together (group_commit.rs), for diagnostics.
    pub(super) group_commits: Mutex<group_commit::Committed>,
    /// The JS thread's read-only connection (inline.rs), when reads may run inline: opened by
    /// a pool thread, closed and reopened by the writer around a rekey, dropped at close.
    pub inline: Mutex<Option<Worker>>,
    /// The writer's connection: the writer thread holds the lock while it runs a job, and a
    /// transaction's read may run on it from the JS thread in between (inline.rs).
    pub writer: Mutex<Option<Worker>>,
    /// Iterations outside transactions, on connections of their own (cursors.rs).
    pub(super) cursors: Mutex<Cursors>,
}

impl Shared {
    /// Queues a job's outcome (or a part of it) for JS.
    pub fn complete(&self, id: u32, outcome: Outcome) {
        self.completions.push(id, outcome);
    }

    /// Queues a writer job's outcome, once the writer thread has released the connection
    /// (`Completions::push_writer_job`).
    pub(super) fn complete_writer_job(&self, id: u32, outcome: Outcome) {
        self.completions.push_writer_job(id, outcome);
    }

    pub(super) fn take_cancelled(&self, id: u32) -> bool {
        self.cancelled.lock().unwrap().remove(&id)
    }

    /// Committed changes: re-run the live queries they touch.
    pub(super) fn publish(&self, changes: &ChangeSet) {
        self.live_queries.lock().unwrap().publish(changes);
    }

    /// After writer work (a job on the writer thread, or a transaction's statement on the JS
    /// thread, inline.rs): re-runs the live queries its commit touched, if it committed.
    /// `tracking`: the change hooks were on while it ran.
    pub fn publish_committed(&self, worker: &Worker, tracking: bool) {
        let committed = worker.take_committed();
        if !tracking && self.tracking.load(std::sync::atomic::Ordering::SeqCst) {
            // The first live query started while this work ran untracked: its first run may
            // have read the state before this commit, and what the work committed is unknown
            // (untracked, the tracker records schema changes only).
            self.publish(&ChangeSet::everything());
        } else if let Some(changes) = &committed {
            self.publish(changes);
        }
        if committed.is_some() {
            self.record_memory(0, &worker.conn);
        }
    }

    /// A live query's run ended: deliver its rows unless they equal the last delivered.
    pub(super) fn finish_live(&self, id: u32, outcome: Outcome) {
        let (result, reads) = match outcome {
            Outcome::LiveRan { result, reads } => (result, reads),
            Outcome::Error(e) => (Err(e), None), // a panic
            _ => unreachable!("a live query run ends with LiveRan"),
        };
        let mut queries = self.live_queries.lock().unwrap();
        if let Some(outcome) = queries.finish(id, result, reads, true) {
            // Under the registry lock: the query's next run cannot deliver before this one.
            self.complete(id, outcome);
        }
    }

    /// Records a connection's memory use for diagnostics (index 0: the writer), at most once
    /// per MEMORY_INTERVAL_MS: SQLite measures schema and statement memory by walking every
    /// table and prepared statement, far too slow to do after every job.
    pub(super) fn record_memory(&self, index: usize, conn: &Connection) {
        use std::sync::atomic::Ordering::Relaxed;
        let now = self.started.elapsed().as_millis() as u64 + MEMORY_INTERVAL_MS;
        let due = &self.memory_due[index];
        if due.load(Relaxed) > now - MEMORY_INTERVAL_MS {
            return;
        }
        due.store(now, Relaxed);
        let verbs = [ffi::SQLITE_DBSTATUS_CACHE_USED, ffi::SQLITE_DBSTATUS_SCHEMA_USED, ffi::SQLITE_DBSTATUS_STMT_USED];
        for (slot, verb) in self.memory[index].iter().zip(verbs) {
            let (mut current, mut highwater) = (0, 0);
            // SAFETY: valid handle on its own thread.
            unsafe { ffi::sqlite3_db_status(conn.raw(), verb, &mut current, &mut highwater, 0) };
            slot.store(current as i64, Relaxed);
        }
    }
}
