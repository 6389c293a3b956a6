//! The pool: one writer and N readers, each a thread owning a connection, fed by job queues;
//! starting it, sending it jobs and live queries, cancelling, diagnostics, closing.

use std::collections::HashSet;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::Sender;
use sqlite3mc_sys as ffi;

use super::completions::{Completions, Waker};
use super::group_commit;
use super::job::{Job, Outcome};
use super::open::{open_inline, open_worker, OpenLatch, PoolOptions};
use super::reader::reader_thread;
use super::reader_gate::ReaderGate;
use super::shared::{ReaderSlot, Shared};
use super::writer::writer_thread;
use crate::encode::rows::EncodedRows;
use crate::error::DbError;
use crate::live::dependencies::Dependencies;
use crate::live::registry::{Counters, Registry};
use crate::sqlite::backup;
use crate::sqlite::setup::Role;
use crate::threads::step_aside::JsThread;

/// What `diagnostics()` reports from the pool.
pub struct Diagnostics {
    pub queries: usize,
    pub counters: Counters,
    pub page_cache_bytes: i64,
    pub schema_bytes: i64,
    pub statement_bytes: i64,
    pub group_commits: group_commit::Committed,
    /// Times an engine thread stepped aside for the JS thread (step_aside.rs).
    pub stepped_aside: u64,
}

pub struct Pool {
    pub shared: Arc<Shared>,
    read_tx: Option<Sender<Job>>,
    write_tx: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    opts: Arc<PoolOptions>,
    /// The JS thread the pool started on, which its engine threads step aside for.
    js: JsThread,
    /// Backups' threads (`backup`), joined at close like the others.
    backups: Mutex<Vec<JoinHandle<()>>>,
}

impl Pool {
    pub fn start(mut opts: PoolOptions, open_id: u32, waker: Box<dyn Waker>) -> Pool {
        let (park, park_rx): (Vec<_>, Vec<_>) = (0..opts.readers).map(|_| crossbeam_channel::unbounded()).unzip();
        let (read_tx, read_rx) = crossbeam_channel::unbounded::<Job>();
        let shared = Arc::new(Shared {
            completions: Completions::new(waker),
            writer_db: Mutex::new(0),
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
            inline: Mutex::new(None),
            writer: Mutex::new(None),
            cursors: Default::default(),
            // The key lives in the gate from here on: rekey replaces it there.
            gate: ReaderGate::new(opts.key.take()),
            park,
        });
        // The inline connection counts as one more reader to open.
        let latch = Arc::new(OpenLatch::new(open_id, opts.readers + opts.inline as usize));
        let opts = Arc::new(opts);
        let mut threads = Vec::new();
        let js = JsThread::current();

        for (index, park_rx) in park_rx.into_iter().enumerate() {
            let (shared, latch, opts, rx) = (shared.clone(), latch.clone(), opts.clone(), read_rx.clone());
            threads.push(engine_thread(format!("resqlite-reader-{index}"), &js, move || {
                reader_thread(&opts, &shared, &latch, index, rx, park_rx);
                shared.gate.reader_exited();
            }));
        }
        drop(read_rx);

        if opts.inline {
            let (shared, latch, opts) = (shared.clone(), latch.clone(), opts.clone());
            threads.push(spawn("resqlite-inline-open".into(), move || open_inline(&opts, &shared, &latch)));
        }

        let write_tx = (!opts.readonly).then(|| {
            let (tx, rx) = crossbeam_channel::unbounded::<Job>();
            let (shared, latch, opts) = (shared.clone(), latch.clone(), opts.clone());
            threads
                .push(engine_thread("resqlite-writer".into(), &js, move || writer_thread(&opts, &shared, &latch, rx)));
            tx
        });
        Pool { shared, read_tx: Some(read_tx), write_tx, threads, opts, js, backups: Mutex::default() }
    }

    pub fn read(&self, job: Job) {
        if let Some(tx) = &self.read_tx {
            let _ = tx.send(job);
        }
    }

    /// Queues a job on the writer, counted as running until the writer thread finishes it
    /// (`Completions::writer_started`); false when there is no writer.
    pub fn write(&self, job: Job) -> bool {
        let Some(tx) = &self.write_tx else { return false };
        self.shared.completions.writer_started();
        let sent = tx.send(job).is_ok();
        if !sent {
            self.shared.completions.writer_not_sent();
        }
        sent
    }

    /// Starts a backup into the new file `destination` (sqlite/backup.rs) on a thread of its own,
    /// from a read-only connection of its own: reads and writes go on meanwhile. Its steps
    /// complete as `Progress`, then `Done` or the error; `cancel(id)` stops it after a step.
    pub fn backup(&self, id: u32, destination: String) {
        let (shared, opts) = (self.shared.clone(), self.opts.clone());
        let thread = spawn("resqlite-backup".into(), move || {
            let key = shared.gate.key();
            let result = open_worker(&opts, Role::Reader, key.as_deref()).and_then(|worker| {
                backup::backup(&worker.conn, &destination, key.as_deref(), |p| {
                    shared.complete(id, Outcome::Progress { remaining: p.remaining, total: p.total });
                    !shared.take_cancelled(id)
                })
            });
            shared.complete(id, result.map_or_else(Outcome::Error, |_| Outcome::Done));
        });
        let mut backups = self.backups.lock().unwrap();
        backups.retain(|t| !t.is_finished());
        backups.push(thread);
    }

    /// Starts a live query: its first run is queued at once.
    pub fn live_start(&self, id: u32, sql: String, params: Vec<u8>) {
        let mut queries = self.shared.live_queries.lock().unwrap();
        self.shared.tracking.store(true, Ordering::SeqCst);
        queries.start(id, sql, params);
    }

    /// A live query whose first run runs on the JS thread (inline.rs): registered before it
    /// runs, so a commit during the run makes it run again.
    pub fn live_start_inline(&self, id: u32, sql: String, params: Vec<u8>) {
        let mut queries = self.shared.live_queries.lock().unwrap();
        self.shared.tracking.store(true, Ordering::SeqCst);
        queries.start_inline(id, sql, params);
    }

    /// Its first run on the JS thread overran its budget: it runs on a reader instead.
    pub fn live_run_on_readers(&self, id: u32) {
        self.shared.live_queries.lock().unwrap().run_on_readers(id);
    }

    /// Its first run on the JS thread ended: what to deliver (JS delivers it before anything
    /// later can arrive).
    pub fn live_finish_inline(
        &self,
        id: u32,
        result: Result<EncodedRows, DbError>,
        reads: Option<Arc<Dependencies>>,
    ) -> Option<Outcome> {
        self.shared.live_queries.lock().unwrap().finish(id, result, reads, false)
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
            stepped_aside: self.js.stepped_aside.load(Relaxed),
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

    /// Stops taking jobs; the threads finish everything queued, then exit. A thread of its own
    /// joins them all (off the JS thread), closes the iterations' connections and then the
    /// writer's, last, then completes `close_id`; nothing is returned. The writer's connection
    /// closing last is the process's last one on the file, so it checkpoints the WAL and
    /// deletes it (unless checkpoints are external): after `close()` the database file holds
    /// every commit. Closed before a reader's, it could not (the readers' locks keep it from
    /// taking the file), and the last reader to close, read-only, cannot either: the WAL then
    /// stayed, holding the last commits, depending on which thread finished last.
    pub fn close(&mut self, close_id: u32) {
        // The registry holds a sender to the readers' queue: drop it, or they never stop.
        self.shared.live_queries.lock().unwrap().close();
        self.read_tx = None;
        self.write_tx = None;
        self.shared.inline.lock().unwrap().take();
        let mut threads = std::mem::take(&mut self.threads);
        threads.append(&mut self.backups.lock().unwrap());
        let shared = self.shared.clone();
        spawn("resqlite-close".into(), move || {
            for t in threads {
                let _ = t.join();
            }
            shared.cursors.lock().unwrap().close();
            *shared.writer_db.lock().unwrap() = 0;
            drop(shared.writer.lock().unwrap().take());
            shared.complete(close_id, Outcome::Done);
        });
    }
}

impl Drop for Pool {
    /// Dropped without `close()` (its JS environment ended): let the readers stop.
    fn drop(&mut self) {
        self.shared.live_queries.lock().unwrap().close();
        self.shared.cursors.lock().unwrap().close();
    }
}

fn spawn(name: String, f: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new().name(name).spawn(f).expect("cannot start a thread")
}

/// A thread running statements for the JS thread `js`, stepping aside when it waits.
fn engine_thread(name: String, js: &JsThread, f: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    let js = js.clone();
    spawn(name, move || {
        js.serve_from_this_thread();
        f()
    })
}
