//! The threads: one writer and N readers, each owning a connection, fed by job queues, and a
//! completion queue that wakes the JS thread once per batch of finished jobs.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use sqlite3mc_sys as ffi;

use crate::error::DbError;
use crate::handoff::spin::SpinPolicy;
use crate::live::dependencies::ChangeSet;
use crate::live::registry::{Counters, Registry};
use crate::sqlite::connection::{Connection, OpenOptions, Role};
use crate::sqlite::encryption::{self, KeyConfig, ReaderGate};
use crate::sqlite::statement_cache::StatementCache;
use crate::threads::group_commit;
use crate::threads::worker::{Outcome, Worker};

pub enum Request {
    Select {
        max_rows: usize,
        json: bool,
    },
    Execute,
    Batch,
    /// The library's own transaction control (BEGIN, SAVEPOINT, RELEASE, COMMIT, ROLLBACK):
    /// the only jobs allowed to open or end a transaction.
    Control,
    /// Test hook: a job that panics, to prove a panic rejects one job and nothing more.
    Panic,
    /// A run of the live query whose id the job carries (live::registry).
    Live,
    /// Writer: has another connection committed since the last check? (watchExternalChanges)
    DataVersion,
    /// Re-encrypts the database with this key (`None`: decrypts it); see encryption.rs.
    Rekey(Option<Arc<KeyConfig>>),
}

pub struct Job {
    pub id: u32,
    pub request: Request,
    pub sql: String,
    pub params: Vec<u8>,
    /// The job has an AbortSignal: check the cancelled set before running it.
    pub cancellable: bool,
    /// A writer job from a transaction: it must run inside that open transaction, never
    /// in autocommit after SQLite rolled the transaction back.
    pub in_transaction: bool,
}

pub struct Completion {
    pub id: u32,
    pub outcome: Outcome,
}

/// Tells the JS thread about finished jobs; implemented in lib.rs over a napi thread-safe
/// function and two words of memory the JS thread reads while it polls (experiments/021).
pub trait Waker: Send + Sync + 'static {
    /// Wakes the JS thread's event loop.
    fn wake(&self);
    /// Shows the polling JS thread whether completions are queued.
    fn set_queued(&self, queued: bool);
    /// The JS thread is polling for completions: it needs no wake-up.
    fn js_polling(&self) -> bool;
}

#[derive(Default)]
struct CompletionQueue {
    list: Vec<Completion>,
    /// A wake-up is on its way to the JS thread, which will take everything queued by then.
    wake_pending: bool,
    /// The JS environment is gone (a worker thread ended without closing the database):
    /// completions are dropped and nothing calls into it again.
    detached: bool,
}

/// A reader's current job, so `cancel` can interrupt exactly that statement.
struct ReaderSlot {
    running: Mutex<u32>,
    db: AtomicPtr<ffi::sqlite3>,
}

pub struct Shared {
    completions: Mutex<CompletionQueue>,
    /// The writer's connection while it is open (0 otherwise), for `interrupt_writer`; the
    /// lock keeps it from closing during an interrupt.
    writer_db: Mutex<usize>,
    waker: Box<dyn Waker>,
    cancelled: Mutex<HashSet<u32>>,
    slots: Vec<ReaderSlot>,
    safe_integers: bool,
    /// The key connections open with, and the rekey handshake with the readers.
    gate: ReaderGate,
    /// One per reader: a message parks it for a rekey.
    park: Vec<Sender<()>>,
    live_queries: Mutex<Registry>,
    /// Live queries exist: the writer tracks its changes (set under the registry lock).
    tracking: std::sync::atomic::AtomicBool,
    /// SQLite's memory per connection (writer first): page cache, schema, statements.
    memory: Vec<[std::sync::atomic::AtomicI64; 3]>,
    /// When each connection's memory is next measured (ms since `started`, offset by one
    /// interval so 0 means "now").
    memory_due: Vec<std::sync::atomic::AtomicU64>,
    started: std::time::Instant,
    /// Standalone writes committed together (group_commit.rs), for diagnostics.
    group_commits: Mutex<group_commit::Committed>,
}

/// What `diagnostics()` reports from the engine.
pub struct Diagnostics {
    pub queries: usize,
    pub counters: Counters,
    pub page_cache_bytes: i64,
    pub schema_bytes: i64,
    pub statement_bytes: i64,
    pub group_commits: group_commit::Committed,
}

impl Shared {
    pub fn complete(&self, id: u32, outcome: Outcome) {
        let mut q = self.completions.lock().unwrap();
        if q.detached {
            return;
        }
        q.list.push(Completion { id, outcome });
        // Marked before reading the polling word, and the JS thread clears that word before it
        // looks at this one (both sequentially consistent): either it sees the completion or
        // it gets a wake-up. Woken under the lock, so `detach` cannot slip in between.
        self.waker.set_queued(true);
        if !q.wake_pending && !self.waker.js_polling() {
            q.wake_pending = true;
            self.waker.wake();
        }
    }

    /// Called when the JS environment is torn down before `close()`.
    pub fn detach(&self) {
        let mut q = self.completions.lock().unwrap();
        q.detached = true;
        q.list.clear();
    }

    /// The first `max` jobs finished so far, and whether more are queued; called on the JS
    /// thread when woken or while polling.
    pub fn take_completions(&self, max: usize) -> (Vec<Completion>, bool) {
        let mut q = self.completions.lock().unwrap();
        q.wake_pending = false;
        if q.list.len() > max {
            let rest = q.list.split_off(max);
            return (std::mem::replace(&mut q.list, rest), true);
        }
        if !q.detached {
            self.waker.set_queued(false);
        }
        (std::mem::take(&mut q.list), false)
    }

    fn take_cancelled(&self, id: u32) -> bool {
        self.cancelled.lock().unwrap().remove(&id)
    }

    /// Committed changes: re-run the live queries they touch.
    fn publish(&self, changes: &ChangeSet) {
        self.live_queries.lock().unwrap().publish(changes);
    }

    /// A live query's run ended: deliver its rows unless they equal the last delivered.
    fn finish_live(&self, id: u32, outcome: Outcome) {
        let (result, reads) = match outcome {
            Outcome::LiveRan { result, reads } => (result, reads),
            Outcome::Error(e) => (Err(e), None), // a panic
            _ => unreachable!("a live query run ends with LiveRan"),
        };
        let mut queries = self.live_queries.lock().unwrap();
        if let Some(outcome) = queries.finish(id, result, reads) {
            // Under the registry lock: the query's next run cannot deliver before this one.
            self.complete(id, outcome);
        }
    }

    /// Records a connection's memory use for diagnostics (index 0: the writer), at most once
    /// per MEMORY_INTERVAL_MS: SQLite measures schema and statement memory by walking every
    /// table and prepared statement, far too slow to do after every job.
    fn record_memory(&self, index: usize, conn: &Connection) {
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

pub struct PoolOptions {
    pub path: String,
    pub readers: usize,
    pub busy_timeout_ms: u32,
    pub readonly: bool,
    pub safe_integers: bool,
    pub key: Option<Arc<KeyConfig>>,
    /// Databases attached on every connection: (schema name, file path).
    pub attach: Vec<(String, String)>,
}

pub struct Pool {
    pub shared: Arc<Shared>,
    read_tx: Option<Sender<Job>>,
    write_tx: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

/// Opening happens on the worker threads. A lead connection opens alone first (the writer,
/// which creates the file and switches it to WAL; reader 0 when read-only), then the others
/// in parallel: connections opening at once would meet each other's WAL recovery. The open
/// job completes when every connection is open, or with the first failure.
struct OpenLatch {
    open_id: u32,
    state: Mutex<OpenState>,
    cond: Condvar,
}

struct OpenState {
    /// `None` until the lead connection has tried; then whether it opened.
    lead: Option<bool>,
    /// Reader connections still to open.
    readers_left: usize,
    /// The open job has completed (all open, or the first failure reported).
    reported: bool,
}

impl OpenLatch {
    fn lead_done(&self, opened: bool) {
        self.state.lock().unwrap().lead = Some(opened);
        self.cond.notify_all();
    }

    /// Waits for the lead connection; false when it failed (nothing more to open).
    fn wait_for_lead(&self) -> bool {
        let mut st = self.state.lock().unwrap();
        while st.lead.is_none() {
            st = self.cond.wait(st).unwrap();
        }
        st.lead == Some(true)
    }

    fn reader_opened(&self, shared: &Shared) {
        let mut st = self.state.lock().unwrap();
        st.readers_left -= 1;
        if st.readers_left == 0 && !st.reported {
            st.reported = true;
            shared.complete(self.open_id, Outcome::Done);
        }
    }

    fn failed(&self, shared: &Shared, error: DbError) {
        let mut st = self.state.lock().unwrap();
        if !st.reported {
            st.reported = true;
            shared.complete(self.open_id, Outcome::Error(error));
        }
    }
}

impl Pool {
    pub fn start(mut opts: PoolOptions, open_id: u32, waker: Box<dyn Waker>) -> Pool {
        let (park, park_rx): (Vec<_>, Vec<_>) = (0..opts.readers).map(|_| crossbeam_channel::unbounded()).unzip();
        let (read_tx, read_rx) = crossbeam_channel::unbounded::<Job>();
        let shared = Arc::new(Shared {
            completions: Mutex::new(CompletionQueue::default()),
            writer_db: Mutex::new(0),
            waker,
            cancelled: Mutex::new(HashSet::new()),
            slots: (0..opts.readers)
                .map(|_| ReaderSlot { running: Mutex::new(0), db: AtomicPtr::new(std::ptr::null_mut()) })
                .collect(),
            safe_integers: opts.safe_integers,
            live_queries: Mutex::new(Registry::new(read_tx.clone(), opts.readers)),
            tracking: Default::default(),
            memory: (0..=opts.readers).map(|_| Default::default()).collect(),
            memory_due: (0..=opts.readers).map(|_| Default::default()).collect(),
            started: std::time::Instant::now(),
            group_commits: Default::default(),
            // The key lives in the gate from here on: rekey replaces it there.
            gate: ReaderGate::new(opts.key.take()),
            park,
        });
        let latch = Arc::new(OpenLatch {
            open_id,
            state: Mutex::new(OpenState { lead: None, readers_left: opts.readers, reported: false }),
            cond: Condvar::new(),
        });
        let opts = Arc::new(opts);
        let mut threads = Vec::new();

        for (index, park_rx) in park_rx.into_iter().enumerate() {
            let (shared, latch, opts, rx) = (shared.clone(), latch.clone(), opts.clone(), read_rx.clone());
            threads.push(spawn(format!("resqlite-reader-{index}"), move || {
                reader_thread(&opts, &shared, &latch, index, rx, park_rx);
                shared.gate.reader_exited();
            }));
        }
        drop(read_rx);

        let write_tx = (!opts.readonly).then(|| {
            let (tx, rx) = crossbeam_channel::unbounded::<Job>();
            let (shared, latch, opts) = (shared.clone(), latch.clone(), opts.clone());
            threads.push(spawn("resqlite-writer".into(), move || writer_thread(&opts, &shared, &latch, rx)));
            tx
        });
        Pool { shared, read_tx: Some(read_tx), write_tx, threads }
    }

    pub fn read(&self, job: Job) {
        if let Some(tx) = &self.read_tx {
            let _ = tx.send(job);
        }
    }

    pub fn write(&self, job: Job) -> bool {
        match &self.write_tx {
            Some(tx) => tx.send(job).is_ok(),
            None => false,
        }
    }

    /// Starts a live query: its first run is queued at once.
    pub fn live_start(&self, id: u32, sql: String, params: Vec<u8>) {
        let mut queries = self.shared.live_queries.lock().unwrap();
        self.shared.tracking.store(true, Ordering::SeqCst);
        queries.start(id, sql, params);
    }

    pub fn live_stop(&self, id: u32) {
        let mut queries = self.shared.live_queries.lock().unwrap();
        queries.stop(id);
        self.shared.tracking.store(!queries.is_empty(), Ordering::SeqCst);
    }

    pub fn diagnostics(&self) -> Diagnostics {
        use std::sync::atomic::Ordering::Relaxed;
        let queries = self.shared.live_queries.lock().unwrap();
        let sum = |i: usize| self.shared.memory.iter().map(|m| m[i].load(Relaxed)).sum();
        Diagnostics {
            queries: queries.len(),
            counters: queries.counters,
            page_cache_bytes: sum(0),
            schema_bytes: sum(1),
            statement_bytes: sum(2),
            group_commits: *self.shared.group_commits.lock().unwrap(),
        }
    }

    /// Marks a job cancelled; if a reader is running it, interrupts that reader's statement.
    pub fn cancel(&self, id: u32) {
        self.shared.cancelled.lock().unwrap().insert(id);
        for slot in &self.shared.slots {
            let running = slot.running.lock().unwrap();
            if *running == id {
                let db = slot.db.load(Ordering::Acquire);
                if !db.is_null() {
                    // SAFETY: sqlite3_interrupt may be called from any thread while the
                    // connection is open; the slot lock keeps the job (and so the connection) alive.
                    unsafe { ffi::sqlite3_interrupt(db) };
                }
            }
        }
    }

    /// Interrupts the statement the writer is running, if any (an aborted transaction: it
    /// holds the writer, so the statement is its own).
    pub fn interrupt_writer(&self) {
        let db = self.shared.writer_db.lock().unwrap();
        if *db != 0 {
            // SAFETY: the connection stays open while the lock is held (writer_thread clears the
            // pointer under it before closing); sqlite3_interrupt may be called from any thread.
            unsafe { ffi::sqlite3_interrupt(*db as *mut ffi::sqlite3) };
        }
    }

    /// Stops taking jobs; the threads finish everything queued, then exit. Returns a handle
    /// that joins them all (run it off the JS thread), then completes `close_id`.
    pub fn close(&mut self, close_id: u32) {
        // The registry holds a sender to the readers' queue: drop it, or they never stop.
        self.shared.live_queries.lock().unwrap().close();
        self.read_tx = None;
        self.write_tx = None;
        let threads = std::mem::take(&mut self.threads);
        let shared = self.shared.clone();
        spawn("resqlite-close".into(), move || {
            for t in threads {
                let _ = t.join();
            }
            shared.complete(close_id, Outcome::Done);
        });
    }
}

impl Drop for Pool {
    /// Dropped without `close()` (its JS environment ended): let the readers stop.
    fn drop(&mut self) {
        self.shared.live_queries.lock().unwrap().close();
    }
}

fn spawn(name: String, f: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new().name(name).spawn(f).expect("cannot start a thread")
}

fn reader_thread(
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
    let opened = open_worker(opts, Role::Reader, shared.gate.key().as_deref());
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

fn writer_thread(opts: &PoolOptions, shared: &Shared, latch: &OpenLatch, rx: Receiver<Job>) {
    let opened = open_worker(opts, Role::Writer, shared.gate.key().as_deref());
    latch.lead_done(opened.is_ok());
    let worker = match opened {
        Ok(worker) => worker,
        Err(e) => return latch.failed(shared, e),
    };
    *shared.writer_db.lock().unwrap() = worker.conn.raw() as usize;
    let mut worker = Some(worker);
    writer_loop(&mut worker, opts, shared, rx);
    *shared.writer_db.lock().unwrap() = 0;
    drop(worker);
}

fn open_worker(opts: &PoolOptions, role: Role, key: Option<&KeyConfig>) -> Result<Worker, DbError> {
    let conn = Connection::open(&OpenOptions {
        path: &opts.path,
        role,
        busy_timeout_ms: opts.busy_timeout_ms,
        key,
        attach: &opts.attach,
    })?;
    Ok(Worker::new(StatementCache::new(), conn))
}

/// Runs a job, turning a panic into an error for that job alone.
fn run(worker: &mut Worker, job: &Job, shared: &Shared) -> Outcome {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let r = match job.request {
            Request::Select { max_rows, json } => {
                let emit = &mut |part| shared.complete(job.id, part);
                worker.select(&job.sql, &job.params, max_rows, json, shared.safe_integers, emit)
            }
            Request::Execute => worker.execute(&job.sql, &job.params),
            Request::Control => worker.control(&job.sql),
            Request::Batch => worker.execute_batch(&job.sql, &job.params),
            Request::Panic => panic!("deliberate panic (test hook)"),
            Request::Live => Ok(worker.run_live(&job.sql, &job.params, shared.safe_integers)),
            Request::DataVersion => {
                if worker.external_change() {
                    shared.publish(&ChangeSet::everything());
                }
                Ok(Outcome::Done)
            }
            Request::Rekey(_) => unreachable!("rekey runs in writer_loop"),
        };
        r.unwrap_or_else(Outcome::Error)
    }));
    result.unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Outcome::Error(DbError::new("ERR_INTERNAL", format!("internal error in the engine (a Rust panic: {what})")))
    })
}

/// How often a connection's memory use is measured for `diagnostics()`, at most.
const MEMORY_INTERVAL_MS: u64 = 250;

/// At most this many queued reads share one read transaction (experiments/002).
const MAX_READ_BATCH: usize = 16;

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
        let extra = (rx.len() / shared.slots.len()).min(MAX_READ_BATCH - 1);
        batch.extend(rx.try_iter().take(extra));
        let in_transaction = batch.len() > 1 && worker.conn.exec("BEGIN").is_ok();
        for job in batch.drain(..) {
            let outcome = run_read(worker, shared, slot, &job, in_transaction);
            finish_read(shared, &job, outcome);
        }
        if in_transaction && !worker.conn.autocommit() {
            let _ = worker.conn.exec("COMMIT");
        }
        shared.record_memory(index + 1, &worker.conn);
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
        let _ = worker.conn.exec(if in_transaction { "BEGIN" } else { "ROLLBACK" });
        outcome =
            Outcome::Error(DbError::new("ERR_NOT_READ_ONLY", "select cannot begin or end transactions; use execute()"));
    }
    outcome
}

fn aborted() -> Outcome {
    Outcome::Error(DbError::new("ABORT_ERR", "the operation was aborted"))
}

/// How long the writer keeps looking for the next job before it sleeps: an awaited write
/// sequence sends its next job within microseconds of the completion (experiments/013).
const WRITER_SPIN: Duration = Duration::from_micros(50);

/// The next job: spin briefly for one arriving right away (when the CPUs have room for it,
/// spin.rs), then sleep until one does.
fn next_job(rx: &Receiver<Job>, spin: &SpinPolicy) -> Option<Job> {
    let start = Instant::now();
    if spin.allowed(start) {
        loop {
            match rx.try_recv() {
                Ok(job) => return Some(job),
                Err(crossbeam_channel::TryRecvError::Disconnected) => return None,
                Err(crossbeam_channel::TryRecvError::Empty) if start.elapsed() < WRITER_SPIN => std::hint::spin_loop(),
                Err(crossbeam_channel::TryRecvError::Empty) => break,
            }
        }
    }
    rx.recv().ok()
}

fn writer_loop(slot: &mut Option<Worker>, opts: &PoolOptions, shared: &Shared, rx: Receiver<Job>) {
    if let Some(worker) = slot.as_ref() {
        shared.record_memory(0, &worker.conn);
    }
    // Whether the change hooks are on (live queries exist); see Connection::set_tracking.
    let mut tracking = false;
    // A job taken while gathering a group that could not join it: it runs next.
    let mut held: Option<Job> = None;
    let spin = SpinPolicy::new();
    while let Some(job) = held.take().or_else(|| next_job(&rx, &spin)) {
        if let Request::Rekey(key) = &job.request {
            let outcome = rekey(slot, opts, shared, key.clone());
            tracking = false; // a reopened writer connection starts without the hooks
            shared.complete(job.id, outcome);
            continue;
        }
        let Some(worker) = slot.as_mut() else {
            shared.complete(job.id, Outcome::Error(writer_lost()));
            continue;
        };
        let wanted = shared.tracking.load(Ordering::SeqCst);
        if wanted != tracking {
            tracking = wanted;
            worker.conn.set_tracking(tracking);
        }
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
        if let Some(changes) = worker.conn.take_committed() {
            shared.publish(&changes);
            shared.record_memory(0, &worker.conn);
        } else if !tracking && shared.tracking.load(Ordering::SeqCst) {
            // The first live query started while this job ran untracked: its first run may
            // have read the state before this job's commit.
            shared.publish(&ChangeSet::everything());
        }
        for (job, outcome) in jobs.iter().zip(outcomes) {
            shared.complete(job.id, outcome);
        }
    }
}

/// One writer job, with the checks that keep a transaction's statements inside it.
fn run_writer_job(worker: &mut Worker, job: &Job, shared: &Shared) -> Outcome {
    if job.in_transaction && worker.conn.autocommit() {
        return Outcome::Error(DbError::new(
            "ERR_TRANSACTION_ROLLED_BACK",
            "the transaction is not open: it failed to begin, or SQLite rolled it back after an earlier error",
        ));
    }
    let outcome = run(worker, job, shared);
    let user_statement = !matches!(job.request, Request::Control);
    if user_statement && job.in_transaction && !matches!(outcome, Outcome::Error(_)) && worker.conn.autocommit() {
        return Outcome::Error(DbError::new(
            "ERR_TRANSACTION_CONTROL",
            "this statement ended the transaction (COMMIT, ROLLBACK or END inside db.transaction()); \
             end a transaction by returning from or throwing in its body",
        ));
    }
    outcome
}

fn writer_lost() -> DbError {
    DbError::new("ERR_REKEY", "the writer connection could not be reopened after rekey; close and reopen the database")
}

/// `db.rekey` on the writer thread (encryption.rs explains the copy-and-rename): parks every
/// reader with its connection closed, builds the rekeyed copy, renames it over the database,
/// reopens the writer, then releases the readers to reopen with the key now current. On a
/// failure before the rename nothing changed: the writer goes back to WAL and the readers
/// reopen with the old key.
fn rekey(slot: &mut Option<Worker>, opts: &PoolOptions, shared: &Shared, new: Option<Arc<KeyConfig>>) -> Outcome {
    let Some(worker) = slot.as_mut() else { return Outcome::Error(writer_lost()) };
    if !worker.conn.autocommit() {
        return Outcome::Error(DbError::new("ERR_REKEY_IN_TRANSACTION", "rekey cannot run inside a transaction"));
    }
    let old = shared.gate.key();
    if old.is_none() && new.is_none() {
        return Outcome::Done; // decrypting a plaintext database: nothing to do
    }
    for park in &shared.park {
        let _ = park.send(());
    }
    shared.gate.wait_parked(shared.park.len());
    // The copy must see a complete, unchanging file:
    // rollback-journal mode (the WAL checkpointed into the file and removed) and a RESERVED lock
    // keep the file complete and unchanging while it is copied.
    let copy = (|| {
        let mode = worker.conn.query_text("PRAGMA journal_mode = DELETE")?;
        if !mode.eq_ignore_ascii_case("delete") {
            return Err(DbError::new(
                "ERR_REKEY",
                "rekey needs the database to itself (another process has it open in WAL mode)",
            ));
        }
        worker.conn.exec("BEGIN IMMEDIATE")?;
        let copy = encryption::build_rekeyed_copy(&opts.path, old.as_deref(), new.as_deref());
        let _ = worker.conn.exec("COMMIT");
        copy
    })();
    let swapped = copy.and_then(|tmp| {
        encryption::swap_in(&opts.path, &tmp).inspect_err(|_| encryption::remove_rekey_leftovers(&opts.path))
    });
    if let Err(e) = swapped {
        let _ = worker.conn.query_text("PRAGMA journal_mode = WAL");
        shared.gate.release(old);
        return Outcome::Error(e);
    }
    // The old connection still points at the replaced file: open the new one, then close it.
    let outcome = match open_worker(opts, Role::Writer, new.as_deref()) {
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
    shared.gate.release(new);
    outcome
}
