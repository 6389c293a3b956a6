//! The process's engine threads, shared by every database (issue 33): a pool sized by the
//! cores, not by the databases. A database's work comes here as sessions (a reader session
//! runs reads on one of its reader connections until its queue is empty; a writer session runs
//! its writes in order), so an idle database holds no thread at all, and a thousand databases
//! run on as many threads as one.
//!
//! Threads start as work needs them, up to `max_threads()`, and exit once no database is
//! open. While databases are open, a thread that waited SWEEP_EVERY for work closes the
//! connections they left idle (`Shared::close_idle`): an idle database costs SQLite's memory
//! for its writer and JS-thread connections only.
//!
//! A session may block its thread (a read for seconds, a write waiting out another process's
//! lock for its busy timeout); at most `max_threads()` run at once, and more wait their turn.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use super::shared::Shared;

type Task = Box<dyn FnOnce() + Send>;

/// How long a thread waits for work before it looks for idle connections to close.
const SWEEP_EVERY: Duration = Duration::from_millis(500);
/// Threads beyond the first exit after this long without work.
const THREAD_IDLE: Duration = Duration::from_secs(5);

struct State {
    queue: VecDeque<Task>,
    threads: usize,
    /// Threads waiting for work, not yet handed any.
    idle: usize,
    /// Wake-ups handed to idle threads and not yet taken: each is one task to run.
    handed: usize,
    /// Sessions waiting for another session (`while_blocked`): each lets one more thread start.
    blocked: usize,
    /// When idle connections were last looked for.
    swept: Instant,
}

struct Executor {
    state: Mutex<State>,
    work: Condvar,
    /// Every database opened and not yet dropped, for the sweep and diagnostics().
    databases: Mutex<Vec<Weak<Shared>>>,
    open: AtomicUsize,
    started_threads: AtomicU64,
}

fn executor() -> &'static Executor {
    static EXECUTOR: OnceLock<Executor> = OnceLock::new();
    EXECUTOR.get_or_init(|| Executor {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            threads: 0,
            idle: 0,
            handed: 0,
            blocked: 0,
            swept: Instant::now(),
        }),
        work: Condvar::new(),
        databases: Mutex::default(),
        open: AtomicUsize::new(0),
        started_threads: AtomicU64::new(0),
    })
}

/// The most threads running sessions at once: four per core and four more, so that sessions
/// blocked on I/O or another process's lock leave room for the rest (the bound on the
/// threads a process adds is 4 × cores + 8).
pub fn max_threads() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| 4 * crate::spin::cpus() + 4)
}

/// Runs `task` on an engine thread: an idle one if there is one, a new one if none is and the
/// pool has room, else the first to finish its session.
pub fn submit(task: impl FnOnce() + Send + 'static) {
    let ex = executor();
    let mut st = ex.state.lock().unwrap();
    st.queue.push_back(Box::new(task));
    if st.idle > st.handed {
        st.handed += 1;
        ex.work.notify_one();
    } else if st.threads < max_threads() + st.blocked {
        start_thread(st);
    }
}

fn start_thread(mut st: std::sync::MutexGuard<State>) {
    st.threads += 1;
    drop(st);
    executor().started_threads.fetch_add(1, Ordering::Relaxed);
    std::thread::Builder::new().name("resqlite-engine".into()).spawn(thread_main).expect("cannot start a thread");
}

/// Runs `wait`, in which a session waits for other sessions (a rekey for the reader sessions
/// to end): meanwhile one more thread may start, so that the sessions it waits for run even when
/// every other thread waits too.
pub(super) fn while_blocked<T>(wait: impl FnOnce() -> T) -> T {
    let ex = executor();
    let mut st = ex.state.lock().unwrap();
    st.blocked += 1;
    if !st.queue.is_empty() && st.idle <= st.handed {
        start_thread(st);
    } else {
        drop(st);
    }
    let result = wait();
    ex.state.lock().unwrap().blocked -= 1;
    result
}

fn thread_main() {
    let ex = executor();
    let mut st = ex.state.lock().unwrap();
    let mut idle_since = Instant::now();
    loop {
        if let Some(task) = st.queue.pop_front() {
            drop(st);
            task();
            st = ex.state.lock().unwrap();
            idle_since = Instant::now();
            continue;
        }
        let nothing_open = ex.open.load(Ordering::SeqCst) == 0;
        if nothing_open || (st.threads > 1 && idle_since.elapsed() >= THREAD_IDLE) {
            st.threads -= 1;
            return;
        }
        if st.swept.elapsed() >= SWEEP_EVERY {
            st.swept = Instant::now();
            drop(st);
            sweep();
            st = ex.state.lock().unwrap();
            continue;
        }
        st.idle += 1;
        let (next, _) = ex.work.wait_timeout(st, SWEEP_EVERY).unwrap();
        st = next;
        st.idle -= 1;
        if st.handed > 0 {
            st.handed -= 1;
        }
    }
}

/// A database opened: the threads stay while it is open.
pub(super) fn database_opened(shared: &Arc<Shared>) {
    let ex = executor();
    ex.open.fetch_add(1, Ordering::SeqCst);
    ex.databases.lock().unwrap().push(Arc::downgrade(shared));
}

/// A database is gone (closed, or dropped with its environment): once none is open, the
/// threads exit.
pub(super) fn database_gone() {
    let ex = executor();
    if ex.open.fetch_sub(1, Ordering::SeqCst) == 1 {
        let _st = ex.state.lock().unwrap();
        ex.work.notify_all();
    }
}

/// The databases not dropped yet (those dropped leave the list here, not at each open).
fn databases() -> Vec<Arc<Shared>> {
    let mut dbs = executor().databases.lock().unwrap();
    dbs.retain(|db| db.strong_count() > 0);
    dbs.iter().filter_map(Weak::upgrade).collect()
}

/// Closes the connections each open database has not used for a while.
fn sweep() {
    let now = Instant::now();
    for db in databases() {
        db.close_idle(now);
    }
}

/// What `processDiagnostics()` reports: the engine's threads and every open database's
/// connections and queues.
pub struct ProcessDiagnostics {
    pub threads: usize,
    pub idle_threads: usize,
    pub max_threads: usize,
    pub threads_started: u64,
    pub sessions_waiting: usize,
    pub databases: usize,
    pub connections: usize,
    pub idle_closed: u64,
    pub reads_queued: usize,
    pub writes_queued: usize,
}

pub fn diagnostics() -> ProcessDiagnostics {
    let ex = executor();
    let (threads, idle_threads, sessions_waiting) = {
        let st = ex.state.lock().unwrap();
        (st.threads, st.idle, st.queue.len())
    };
    let mut d = ProcessDiagnostics {
        threads,
        idle_threads,
        max_threads: max_threads(),
        threads_started: ex.started_threads.load(Ordering::Relaxed),
        sessions_waiting,
        databases: 0,
        connections: 0,
        idle_closed: 0,
        reads_queued: 0,
        writes_queued: 0,
    };
    for db in databases().iter().filter(|db| db.counted_open.load(Ordering::Relaxed)) {
        let c = db.connection_counts();
        d.databases += 1;
        d.connections += c.open;
        d.idle_closed += c.idle_closed;
        d.reads_queued += c.reads_queued;
        d.writes_queued += c.writes_queued;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn sessions_waiting_for_others_leave_room_for_them_even_with_every_thread_taken() {
        // As many waiting tasks as the pool has threads, each waiting for a task submitted after
        // them all: without while_blocked, the later ones would never get a thread.
        let n = max_threads();
        let (done_tx, done_rx) = mpsc::channel();
        let (started_tx, started_rx) = mpsc::channel();
        let mut go = Vec::new();
        for _ in 0..n {
            let (go_tx, go_rx) = mpsc::channel::<()>();
            go.push(go_tx);
            let (done_tx, started_tx) = (done_tx.clone(), started_tx.clone());
            submit(move || {
                started_tx.send(()).unwrap();
                while_blocked(|| go_rx.recv_timeout(Duration::from_secs(20))).expect("the later task ran");
                done_tx.send(()).unwrap();
            });
        }
        for _ in 0..n {
            started_rx.recv_timeout(Duration::from_secs(30)).expect("every waiting task started");
        }
        for go_tx in go {
            submit(move || go_tx.send(()).unwrap());
        }
        for _ in 0..n {
            done_rx.recv_timeout(Duration::from_secs(30)).expect("every waiting task ended");
        }
    }
}
