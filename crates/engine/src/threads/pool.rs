//! A database's handle on the engine: its writer and reader queues, served by sessions on the
//! process's engine threads (executor.rs, sessions.rs); starting it, sending it jobs and live
//! queries, cancelling, diagnostics, closing.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::Sender;
use sqlite3mc_sys as ffi;

use super::completions::{Completions, Waker};
use super::executor;
use super::group_commit;
use super::job::{Job, Outcome};
use super::live_registry::{Counters, Registry};
use super::open::{open_lead, open_worker, PoolOptions};
use super::reader_connections::ReaderConnections;
use super::shared::{ReaderSlot, Shared};
use crate::encode::rows::EncodedRows;
use crate::error::DbError;
use crate::js_thread::connection::JsConnection;
use crate::live::dependencies::Dependencies;
use crate::sqlite::backup::{self, Progress, Stepped};
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
    /// How long a snapshot has kept the WAL from starting over (checkpoint.rs), ms.
    pub wal_held_ms: u64,
}

pub struct Pool {
    pub shared: Arc<Shared>,
    read_tx: Option<Sender<Job>>,
    write_tx: Option<Sender<Job>>,
}

impl Pool {
    /// The database's state and queues; its open runs as the first job on an engine thread
    /// (executor.rs), and completes `open_id`.
    pub fn start(mut opts: PoolOptions, open_id: u32, waker: Box<dyn Waker>) -> Pool {
        let (read_tx, read_rx) = crossbeam_channel::unbounded::<Job>();
        let (write_tx, write_rx) = if opts.readonly {
            (None, None)
        } else {
            let (tx, rx) = crossbeam_channel::unbounded::<Job>();
            (Some(tx), Some(rx))
        };
        let key = opts.key.take();
        let readers = opts.readers;
        let shared = Arc::new_cyclic(|me| Shared {
            me: me.clone(),
            js: JsThread::current(),
            reads: read_rx,
            writes: write_rx,
            sessions: Default::default(),
            reader_connections: Mutex::new(ReaderConnections::new(readers)),
            idle_closed: Default::default(),
            backups: Mutex::default(),
            paused_backups: Default::default(),
            counted_open: AtomicBool::new(true),
            gone: executor::database_gone,
            completions: Completions::new(waker),
            writer_db: Mutex::new(0),
            cancelled: Mutex::new(HashSet::new()),
            slots: (0..readers)
                .map(|_| ReaderSlot { running: Mutex::new(0), db: AtomicPtr::new(std::ptr::null_mut()) })
                .collect(),
            safe_integers: opts.safe_integers,
            live_queries: Mutex::new(Registry::new(read_tx.clone(), readers)),
            tracking: Default::default(),
            row_changes: Default::default(),
            memory: (0..=readers).map(|_| Default::default()).collect(),
            memory_due: (0..=readers).map(|_| Default::default()).collect(),
            started: std::time::Instant::now(),
            group_commits: Default::default(),
            wal_bound: Default::default(),
            inline: Mutex::new(None),
            inline_used_ms: Default::default(),
            writer: Mutex::new(None),
            cursors: Default::default(),
            key: Mutex::new(key),
            opts: Arc::new(opts),
        });
        executor::database_opened(&shared);
        let opening = shared.clone();
        executor::submit(move || open_database(&opening, open_id));
        Pool { shared, read_tx: Some(read_tx), write_tx }
    }

    pub fn read(&self, job: Job) {
        if let Some(tx) = &self.read_tx {
            let _ = tx.send(job);
            self.shared.kick_readers();
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
        self.shared.kick_writer();
        sent
    }

    /// Starts a backup into the new file `destination` (sqlite/backup.rs) on a thread of its own,
    /// from a read-only connection of its own: reads and writes go on meanwhile. Its steps
    /// complete as `Progress`, then `Done` or the error; `cancel(id)` stops it after a step.
    pub fn backup(&self, id: u32, destination: String) {
        let shared = self.shared.clone();
        let thread = spawn("resqlite-backup".into(), move || {
            let key = shared.key();
            let result = open_worker(&shared.opts, Role::Reader, key.as_deref()).and_then(|worker| {
                backup::backup(&worker.conn, &destination, key.as_deref(), |p| {
                    shared.complete(id, Outcome::Progress { remaining: p.remaining, total: p.total });
                    !shared.take_cancelled(id)
                })
            });
            shared.complete(id, result.map_or_else(Outcome::Error, |_| Outcome::Done));
        });
        let mut backups = self.shared.backups.lock().unwrap();
        backups.retain(|t| !t.is_finished());
        backups.push(thread);
    }

    /// Starts a backup into the new file `destination` that pauses between the steps asked for
    /// (paused_backups.rs, for resqlite/sqlite3's Backup), on an engine thread; `id` completes
    /// `Done` once it is ready, and names it in `backup_step` and `backup_finish`.
    pub fn backup_start(&self, id: u32, destination: String) {
        let shared = self.shared.clone();
        executor::submit(move || {
            let started = shared.paused_backups.start(id, &shared.opts, shared.key(), &destination);
            shared.complete(id, started.map_or_else(Outcome::Error, |_| Outcome::Done));
        });
    }

    /// Job `id`: copies up to `pages` pages of paused backup `backup` (all those left when
    /// negative) on an engine thread: `Progress` (the pages left and in all after it), then
    /// `Stepped` with sqlite3_backup_step's code (OK or DONE), or its error.
    pub fn backup_step(&self, id: u32, backup: u32, pages: i32) {
        let shared = self.shared.clone();
        executor::submit(move || match shared.paused_backups.step(backup, pages) {
            Err(e) => shared.complete(id, Outcome::Error(e)),
            Ok(Stepped { rc, progress: Progress { remaining, total } }) => {
                shared.complete(id, Outcome::Progress { remaining, total });
                let ok = rc == ffi::SQLITE_OK || rc == ffi::SQLITE_DONE;
                shared.complete(id, if ok { Outcome::Stepped { rc } } else { Outcome::Error(backup::step_error(rc)) });
            }
        });
    }

    /// Job `id`: finishes paused backup `backup`, on an engine thread (it may wait for a step).
    pub fn backup_finish(&self, id: u32, backup: u32) {
        let shared = self.shared.clone();
        executor::submit(move || {
            shared.paused_backups.finish(backup);
            shared.complete(id, Outcome::Done);
        });
    }

    /// Starts a live query: its first run is queued at once.
    pub fn live_start(&self, id: u32, sql: String, params: Vec<u8>) {
        let mut queries = self.shared.live_queries.lock().unwrap();
        self.shared.tracking.store(true, Ordering::SeqCst);
        queries.start(id, sql, params);
        drop(queries);
        self.shared.kick_readers();
    }

    /// A live query whose first run runs on the JS thread (js_thread/runs.rs): registered before it
    /// runs, so a commit during the run makes it run again.
    pub fn live_start_inline(&self, id: u32, sql: String, params: Vec<u8>) {
        let mut queries = self.shared.live_queries.lock().unwrap();
        self.shared.tracking.store(true, Ordering::SeqCst);
        queries.start_inline(id, sql, params);
    }

    /// Its first run on the JS thread overran its budget: it runs on a reader instead.
    pub fn live_run_on_readers(&self, id: u32) {
        self.shared.live_queries.lock().unwrap().run_on_readers(id);
        self.shared.kick_readers();
    }

    /// Its first run on the JS thread ended: what to deliver (JS delivers it before anything
    /// later can arrive).
    pub fn live_finish_inline(
        &self,
        id: u32,
        result: Result<EncodedRows, DbError>,
        reads: Option<Arc<Dependencies>>,
    ) -> Option<Outcome> {
        let deliver = self.shared.live_queries.lock().unwrap().finish(id, result, reads, false);
        self.shared.kick_readers();
        deliver
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
            stepped_aside: self.shared.js.stepped_aside.load(Relaxed),
            wal_held_ms: self.shared.wal_bound.held_ms(self.shared.started),
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
            // SAFETY: the connection stays open while the lock is held (a rekey and the close clear
            // the pointer under it before closing); sqlite3_interrupt may be called from any thread.
            unsafe { ffi::sqlite3_interrupt(*db as *mut ffi::sqlite3) };
        }
    }

    /// Stops taking jobs; the sessions finish everything queued, then the connections close,
    /// the writer's last, and `close_id` completes (sessions.rs); nothing is returned.
    pub fn close(&mut self, close_id: u32) {
        // The registry holds a sender to the readers' queue: drop it, or no job is the last.
        self.shared.live_queries.lock().unwrap().close();
        self.read_tx = None;
        self.write_tx = None;
        // The JS thread's connection closes with the others, off the JS thread (JS calls nothing
        // more on it: the database is closed there).
        self.shared.begin_close(close_id);
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

/// Opens the database, on an engine thread: the lead connection (the writer, which creates the
/// file and switches it to WAL; reader 0 when read-only), and, when the database is encrypted,
/// the JS thread's (js_thread/runs.rs); the open job completes when they are open, or with the first
/// failure. The readers open as reads need them (reader.rs), and so does the JS thread's
/// connection of a plaintext database (sessions.rs `open_inline_later`): such a database opens
/// one connection, not `readers + 2`. An encrypted one opens its JS thread's connection at once
/// because each open derives the key, tens of milliseconds (experiments/057), which a first read
/// should not wait for twice.
pub(super) fn open_database(shared: &Shared, open_id: u32) {
    let opts = &shared.opts;
    let key = shared.key();
    let role = if opts.readonly { Role::Reader } else { Role::Writer };
    let opened = open_lead(opts, role, key.as_deref()).and_then(|lead| {
        if opts.readonly {
            shared.slots[0].db.store(lead.conn.raw(), std::sync::atomic::Ordering::Release);
            shared.reader_connections.lock().unwrap().put_opened(0, lead);
        } else {
            *shared.writer_db.lock().unwrap() = lead.conn.raw() as usize;
            shared.record_memory(0, &lead.conn);
            *shared.writer.lock().unwrap() = Some(lead);
        }
        if opts.inline && key.is_some() {
            *shared.inline.lock().unwrap() = Some(JsConnection::new(open_worker(opts, Role::Reader, key.as_deref())?));
            shared.inline_used();
        }
        Ok(())
    });
    shared.complete(open_id, opened.map_or_else(Outcome::Error, |_| Outcome::Done));
    shared.opened();
}
