//! What a database's sessions share (one `Shared` per `Database`): its options, queues and
//! connections, the completion queue, what `cancel` and `interrupt_writer` reach into, the
//! key, the live-query registry, and the diagnostics counters.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::JoinHandle;

use crossbeam_channel::Receiver;
use sqlite3mc_sys as ffi;

use super::checkpoint::WalBound;
use super::completions::Completions;
use super::cursors::Cursors;
use super::group_commit;
use super::job::{Job, Outcome};
use super::live_registry::Registry;
use super::open::PoolOptions;
use super::paused_backups::PausedBackups;
use super::reader_connections::ReaderConnections;
use super::step_aside::JsThread;
use super::worker::PoolConnection;
use crate::js_thread::connection::JsConnection;
use crate::live::dependencies::ChangeSet;
use crate::sqlite::connection::Connection;
use crate::sqlite::encryption::KeyConfig;
use crate::sqlite::row_changes::RowChanges;

/// How often a connection's memory use is measured for `diagnostics()`, at most.
const MEMORY_INTERVAL_MS: u64 = 250;

/// A reader's current job, so `cancel` can interrupt exactly that statement.
pub(super) struct ReaderSlot {
    pub(super) running: Mutex<u32>,
    pub(super) db: AtomicPtr<ffi::sqlite3>,
}

/// A database's open connections and queued jobs.
pub(super) struct ConnectionCounts {
    pub(super) open: usize,
    pub(super) idle_closed: u64,
    pub(super) reads_queued: usize,
    pub(super) writes_queued: usize,
}

#[derive(Default)]
pub(super) struct Sessions {
    pub(super) state: Mutex<State>,
    /// Signalled when a reader session ends (a rekey waits for them all).
    pub(super) ended: Condvar,
    /// A rekey holds the readers: running reader sessions stop after their job.
    pub(super) parked: AtomicBool,
}

pub(super) struct State {
    /// The database is opening (open.rs): jobs sent meanwhile wait for it.
    pub(super) opening: bool,
    pub(super) readers: usize,
    /// The JS thread's connection is opening on an engine thread (`open_inline_later`).
    pub(super) inline_opening: bool,
    /// Opening it failed: reads stay on the readers, which report what is wrong.
    pub(super) inline_failed: bool,
    /// It was asked for while the database was opening (JS can hear of the open before
    /// `opened` runs): `opened` starts it.
    pub(super) inline_wanted: bool,
    pub(super) writer: bool,
    pub(super) parked: bool,
    /// `close(id)` was called: once no session runs, the connections close and `id` completes.
    pub(super) closing: Option<u32>,
    pub(super) closed: bool,
}

impl Default for State {
    fn default() -> State {
        State {
            opening: true,
            readers: 0,
            inline_opening: false,
            inline_failed: false,
            inline_wanted: false,
            writer: false,
            parked: false,
            closing: None,
            closed: false,
        }
    }
}

impl Sessions {
    pub(super) fn parked(&self) -> bool {
        self.parked.load(Ordering::Acquire)
    }
}

pub struct Shared {
    /// Itself, for the sessions it starts (each holds it while it runs).
    pub(super) me: Weak<Shared>,
    pub(super) opts: Arc<PoolOptions>,
    /// The JS thread the database belongs to, which its sessions step aside for.
    pub(super) js: JsThread,
    /// Reads and live-query runs waiting for a reader session; writes for the writer session
    /// (none when read-only).
    pub(super) reads: Receiver<Job>,
    pub(super) writes: Option<Receiver<Job>>,
    /// Which sessions run, and the rekey's and close's hold on them (sessions.rs).
    pub(super) sessions: Sessions,
    /// The reader connections no session holds (reader.rs), closed when idle.
    pub(super) reader_connections: Mutex<ReaderConnections>,
    /// Connections closed for being idle, for diagnostics.
    pub(super) idle_closed: AtomicU64,
    /// Backups' threads (`Pool::backup`), joined at close.
    pub(super) backups: Mutex<Vec<JoinHandle<()>>>,
    /// resqlite/sqlite3's backups, paused between their steps (paused_backups.rs).
    pub(super) paused_backups: PausedBackups,
    /// Counted as open by the executor until closed or dropped (executor.rs), which is told
    /// by `gone` (`executor::database_gone`, given by the pool).
    pub(super) counted_open: AtomicBool,
    pub(super) gone: fn(),
    pub completions: Completions,
    /// The writer's connection while it is open (0 otherwise), for `interrupt_writer`; the
    /// lock keeps it from closing during an interrupt.
    pub(super) writer_db: Mutex<usize>,
    pub(super) cancelled: Mutex<HashSet<u32>>,
    pub(super) slots: Vec<ReaderSlot>,
    pub safe_integers: bool,
    /// The key connections open with; rekey replaces it.
    pub(super) key: Mutex<Option<Arc<KeyConfig>>>,
    pub(super) live_queries: Mutex<Registry>,
    /// Live queries exist: the writer tracks its changes (set under the registry lock).
    pub tracking: std::sync::atomic::AtomicBool,
    /// The rows the writer's connection changes, recorded while JS listens (row_changes.rs).
    pub row_changes: RowChanges,
    /// SQLite's memory per connection (writer first): page cache, schema, statements.
    pub(super) memory: Vec<[std::sync::atomic::AtomicI64; 3]>,
    /// When each connection's memory is next measured (ms since `started`, offset by one
    /// interval so 0 means "now").
    pub(super) memory_due: Vec<std::sync::atomic::AtomicU64>,
    pub(super) started: std::time::Instant,
    /// Standalone writes committed together (group_commit.rs), for diagnostics.
    pub(super) group_commits: Mutex<group_commit::Committed>,
    /// The writer's tries to start the WAL over (checkpoint.rs).
    pub(super) wal_bound: WalBound,
    /// The JS thread's read-only connection (js_thread/connection.rs), when reads may run
    /// inline: opened on an engine thread when a read there first finds it closed (sessions.rs
    /// `open_inline_later`; with the database when it is encrypted), closed when idle as the
    /// readers are, by the writer for a rekey, and at close.
    pub inline: Mutex<Option<JsConnection>>,
    /// When a read last ran on it (ms since `started`), for the idle sweep.
    pub(super) inline_used_ms: std::sync::atomic::AtomicU64,
    /// The writer's connection: the writer thread holds the lock while it runs a job, and a
    /// transaction's read may run on it from the JS thread in between (js_thread/runs.rs).
    pub writer: Mutex<Option<PoolConnection>>,
    /// Iterations outside transactions, on connections of their own (cursors.rs).
    pub(super) cursors: Mutex<Cursors>,
}

impl Shared {
    /// Before writer work on `worker` (the writer thread's job, or a run on the JS thread while
    /// the writer is idle), under the writer's lock: its change hooks on as live queries exist
    /// (`Hooks::set_tracking`), SQLite's update hook as resqlite/sqlite3's 'change' is listened
    /// to. Whether tracking is on.
    pub fn sync_writer_hooks(&self, worker: &mut PoolConnection) -> bool {
        let tracking = worker.sync_tracking(self.tracking.load(Ordering::SeqCst));
        self.row_changes.sync(&worker.conn);
        tracking
    }

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
        self.kick_readers();
    }

    /// After writer work (a job on the writer thread, or a transaction's statement on the JS
    /// thread, js_thread/runs.rs): re-runs the live queries its commit touched, if it committed.
    /// `tracking`: the change hooks were on while it ran.
    pub fn publish_committed(&self, worker: &PoolConnection, tracking: bool) {
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
        drop(queries);
        self.kick_readers(); // its next run, if a commit made it due
    }

    /// The key connections open with now.
    pub(super) fn key(&self) -> Option<Arc<KeyConfig>> {
        self.key.lock().unwrap().clone()
    }

    /// The database is closed or dropped: it no longer keeps the engine's threads.
    pub(super) fn gone(&self) {
        if self.counted_open.swap(false, std::sync::atomic::Ordering::SeqCst) {
            (self.gone)();
        }
    }

    /// Closes the connections not used for `opts.idle_timeout` (executor.rs sweeps): the
    /// readers', and the spare iteration connections once every reader is closed.
    pub(super) fn close_idle(&self, now: std::time::Instant) {
        let idle = self.opts.idle_timeout;
        let inline_idle = self.inline_idle_since(now) >= idle;
        // Taken under its lock, closed after: an inline read waits on that lock.
        let inline =
            if inline_idle { self.inline.try_lock().ok().and_then(|mut s| Self::take_unsliced(&mut s)) } else { None };
        let (closed, all_closed) = {
            let mut readers = self.reader_connections.lock().unwrap();
            let closed = readers.take_idle(now, idle);
            (closed, readers.all_closed())
        };
        let mut count = closed.len() + inline.is_some() as usize;
        drop(inline);
        for (index, worker) in closed {
            self.slots[index].db.store(std::ptr::null_mut(), std::sync::atomic::Ordering::Release);
            self.memory[index + 1].iter().for_each(|m| m.store(0, std::sync::atomic::Ordering::Relaxed));
            drop(worker);
        }
        if all_closed {
            let spares = std::mem::take(&mut self.cursors.lock().unwrap().idle);
            count += spares.len();
        }
        if count > 0 {
            self.idle_closed.fetch_add(count as u64, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The JS thread's connection in `slot` (its lock held) for a run there, marked used; `None`
    /// when a sliced read holds its snapshot (`sliced_too` false), or when it is closed: then it
    /// opens on an engine thread for the next run (sessions.rs `open_inline_later`).
    pub(crate) fn inline_for_run<'a>(
        &self,
        slot: &'a mut Option<JsConnection>,
        sliced_too: bool,
    ) -> Option<&'a mut JsConnection> {
        let Some(js) = slot.as_mut() else {
            self.open_inline_later();
            return None;
        };
        if !sliced_too && js.sliced.is_some() {
            return None;
        }
        self.inline_used();
        Some(js)
    }

    /// A read ran on the JS thread's connection.
    pub(crate) fn inline_used(&self) {
        let ms = self.started.elapsed().as_millis() as u64;
        self.inline_used_ms.store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    fn inline_idle_since(&self, now: std::time::Instant) -> std::time::Duration {
        let used = std::time::Duration::from_millis(self.inline_used_ms.load(std::sync::atomic::Ordering::Relaxed));
        now.saturating_duration_since(self.started + used)
    }

    /// The connection in `slot` unless a sliced read holds its snapshot open.
    fn take_unsliced(slot: &mut Option<JsConnection>) -> Option<JsConnection> {
        if slot.as_ref().is_some_and(|js| js.sliced.is_none()) {
            slot.take()
        } else {
            None
        }
    }

    /// Its open connections and queues, for the process's diagnostics.
    pub(super) fn connection_counts(&self) -> ConnectionCounts {
        let writer = (*self.writer_db.lock().unwrap() != 0) as usize;
        // Held by an inline read or a rekey: open.
        let inline = self.inline.try_lock().map_or(1, |w| w.is_some() as usize);
        // Those a session holds count as open.
        let readers = {
            let free = self.reader_connections.lock().unwrap();
            free.open() + self.slots.len() - free.len()
        };
        let cursors = self.cursors.lock().map_or(0, |c| c.open.len() + c.idle.len());
        ConnectionCounts {
            open: writer + inline + readers + cursors,
            idle_closed: self.idle_closed.load(std::sync::atomic::Ordering::Relaxed),
            reads_queued: self.reads.len(),
            writes_queued: self.writes.as_ref().map_or(0, |w| w.len()),
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

impl Drop for Shared {
    fn drop(&mut self) {
        self.gone();
    }
}
