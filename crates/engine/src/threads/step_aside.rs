//! Engine threads step aside for a waiting JS thread (experiments/048).
//!
//! Linux may wake the JS thread (a timer, a socket) on the CPU where an engine thread is running
//! a long statement and leave it queued there until the scheduler's next tick (4 ms here), even
//! while the other CPU is idle: the event loop stalls although no SQLite work runs on it. So an
//! engine thread running a long job looks, every LOOK_EVERY of it, at the JS thread's state in
//! `/proc/self/task/<tid>/stat`. When the JS thread is runnable on this thread's CPU, the engine
//! thread sleeps for a moment: the JS thread runs at once, and when the engine thread wakes the
//! kernel places it anew, on an idle CPU if there is one. (A `sched_yield` did about as well in
//! the stall lane; a pause of a few microseconds did not help at all.)
//!
//! Elsewhere than Linux, nothing happens.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A job's time before the first look at the JS thread, and between two looks; with the pause,
/// what the JS thread may still wait behind an engine thread.
const LOOK_EVERY: Duration = Duration::from_micros(250);
/// Progress calls (every 256 virtual-machine steps, budget.rs) between two looks at the clock.
const CALLS_PER_CLOCK: u32 = 16;
/// How long an engine thread steps aside, as asked: the kernel's timer slack (50 µs by default)
/// makes it longer, which the JS thread needs (experiments/048: 1 µs of slack did not help).
const PAUSE: Duration = Duration::from_micros(1);

/// The JS thread a pool serves, and how often its engine threads stepped aside for it.
#[derive(Clone)]
pub struct JsThread {
    tid: i32,
    pub stepped_aside: Arc<AtomicU64>,
}

impl JsThread {
    /// The calling thread (the pool starts on its JS thread).
    pub fn current() -> JsThread {
        JsThread { tid: current_tid(), stepped_aside: Arc::default() }
    }

    /// Makes the calling thread an engine thread serving `self`: its long statements step aside
    /// when the JS thread waits on its CPU.
    pub fn serve_from_this_thread(&self) {
        let now = Instant::now();
        let watch = Watch { js: self.clone(), stat: None, calls: 0, last_clock: now, busy_since: now };
        WATCH.with(|w| *w.borrow_mut() = Some(watch));
    }
}

/// An engine thread's view of its JS thread.
struct Watch {
    js: JsThread,
    /// The JS thread's stat file, opened at the first look.
    stat: Option<std::fs::File>,
    calls: u32,
    last_clock: Instant,
    /// Since when this thread has run its job without a look or a pause.
    busy_since: Instant,
}

thread_local! {
    static WATCH: RefCell<Option<Watch>> = const { RefCell::new(None) };
}

/// Called from the progress handler of a statement outside a budget: on an engine thread whose
/// job has run LOOK_EVERY since it started or since the last look, looks at the JS thread and
/// steps aside if it waits on this CPU.
pub fn now_and_then() {
    WATCH.with(|w| {
        if let Some(watch) = w.borrow_mut().as_mut() {
            watch.progress();
        }
    });
}

/// A job starts on this thread: its time counts from now. Short jobs never look, however many
/// run back to back (reads in flight beside a busy JS thread paid 5–14 % when they did).
pub fn job_starts() {
    WATCH.with(|w| {
        if let Some(watch) = w.borrow_mut().as_mut() {
            watch.busy_since = Instant::now();
        }
    });
}

impl Watch {
    fn progress(&mut self) {
        self.calls = self.calls.wrapping_add(1);
        if !self.calls.is_multiple_of(CALLS_PER_CLOCK) {
            return;
        }
        let now = Instant::now();
        let since_clock = now.saturating_duration_since(self.last_clock);
        self.last_clock = now;
        if since_clock > LOOK_EVERY {
            // Long since the last progress call: this thread was idle, or ran something outside
            // `run` (an iteration's page). Count anew.
            self.busy_since = now;
        } else if now.saturating_duration_since(self.busy_since) >= LOOK_EVERY {
            if self.js_waits_here() {
                std::thread::sleep(PAUSE);
                self.js.stepped_aside.fetch_add(1, Ordering::Relaxed);
            }
            self.busy_since = Instant::now();
        }
    }

    /// The JS thread is runnable (waiting or running) on the CPU this thread runs on: since this
    /// thread runs there, it waits.
    fn js_waits_here(&mut self) -> bool {
        if self.stat.is_none() {
            self.stat = open_stat(self.js.tid);
        }
        self.stat.as_ref().is_some_and(runnable_on_this_cpu)
    }
}

#[cfg(target_os = "linux")]
fn current_tid() -> i32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { libc::gettid() }
}

#[cfg(target_os = "linux")]
fn open_stat(tid: i32) -> Option<std::fs::File> {
    std::fs::File::open(format!("/proc/self/task/{tid}/stat")).ok()
}

/// Whether the thread is runnable on the CPU the caller runs on (`state_and_cpu`).
#[cfg(target_os = "linux")]
fn runnable_on_this_cpu(stat: &std::fs::File) -> bool {
    // None: the thread has exited.
    let Some((state, cpu)) = state_and_cpu(stat) else { return false };
    // SAFETY: no arguments; -1 if the CPU is unknown.
    state == b'R' && cpu.is_some_and(|cpu| cpu == unsafe { libc::sched_getcpu() })
}

/// The thread's state letter (field 3) and last CPU (field 39), from its stat file (proc(5)).
#[cfg(target_os = "linux")]
fn state_and_cpu(stat: &std::fs::File) -> Option<(u8, Option<i32>)> {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; 512];
    let n = stat.read_at(&mut buf, 0).ok()?;
    let text = &buf[..n];
    // The name (field 2) is in parentheses and may hold spaces: fields 3 on follow the last ')'.
    let after_name = text.iter().rposition(|&b| b == b')')?;
    let mut fields = text[after_name + 1..].split(|&b| b == b' ').filter(|f| !f.is_empty());
    let state = *fields.next()?.first()?;
    let cpu = fields.nth(35).and_then(|f| std::str::from_utf8(f).ok()?.parse::<i32>().ok());
    Some((state, cpu))
}

#[cfg(not(target_os = "linux"))]
fn current_tid() -> i32 {
    0
}

#[cfg(not(target_os = "linux"))]
fn open_stat(_tid: i32) -> Option<std::fs::File> {
    None
}

#[cfg(not(target_os = "linux"))]
fn runnable_on_this_cpu(_stat: &std::fs::File) -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn pin_to_cpu(cpu: usize) {
        // SAFETY: a zeroed cpu_set_t is an empty set; the calls only read it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            assert_eq!(libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set), 0, "cannot pin");
        }
    }

    /// Runs progress calls as a busy statement would, for `run`, on a thread serving `js`; a new
    /// job every `job` if given.
    fn busy_engine_thread(js: &JsThread, cpu: usize, run: Duration, job: Option<Duration>) -> u64 {
        let js = js.clone();
        std::thread::spawn(move || {
            pin_to_cpu(cpu);
            js.serve_from_this_thread();
            let start = Instant::now();
            let mut job_start = start;
            while start.elapsed() < run {
                if job.is_some_and(|job| job_start.elapsed() >= job) {
                    job_starts();
                    job_start = Instant::now();
                }
                now_and_then();
                std::hint::black_box((0..200).sum::<u64>()); // a few hundred VM steps' worth
            }
            js.stepped_aside.load(Ordering::Relaxed)
        })
        .join()
        .unwrap()
    }

    /// A stand-in JS thread pinned to `cpu`: spins (always runnable) or blocks until stopped.
    fn stand_in_js(cpu: usize, spin: bool, stop: Arc<AtomicBool>) -> (JsThread, std::thread::JoinHandle<()>) {
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            pin_to_cpu(cpu);
            tx.send(JsThread::current()).unwrap();
            while !stop.load(Ordering::Relaxed) {
                if !spin {
                    std::thread::park(); // unparked to stop
                }
            }
        });
        let js = rx.recv().unwrap();
        if !spin {
            // Asleep before the engine thread starts: on its way to park() it is runnable, and
            // an engine thread busy on its CPU rightly steps aside for it.
            let stat = open_stat(js.tid).expect("the stand-in's stat file");
            let start = Instant::now();
            while state_and_cpu(&stat).is_some_and(|(state, _)| state == b'R') {
                assert!(start.elapsed() < Duration::from_secs(5), "the stand-in never slept");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        (js, handle)
    }

    fn stop_stand_in(stop: &AtomicBool, handle: std::thread::JoinHandle<()>) {
        stop.store(true, Ordering::Relaxed);
        handle.thread().unpark();
        handle.join().unwrap();
    }

    #[test]
    fn a_thread_sees_itself_runnable_on_its_cpu() {
        pin_to_cpu(0); // so it cannot move between reading its stat and its CPU
        let me = open_stat(current_tid()).expect("own stat file");
        assert!(runnable_on_this_cpu(&me));
    }

    #[test]
    fn steps_aside_only_for_a_js_thread_waiting_on_its_cpu() {
        // Both on CPU 0: the spinning JS thread waits whenever the engine thread runs.
        let stop = Arc::new(AtomicBool::new(false));
        let (js, handle) = stand_in_js(0, true, stop.clone());
        let stepped = busy_engine_thread(&js, 0, Duration::from_millis(50), None);
        stop_stand_in(&stop, handle);
        assert!(stepped >= 5, "stepped aside {stepped} times in 50 ms beside a waiting JS thread");

        // Short jobs back to back never look.
        let stop = Arc::new(AtomicBool::new(false));
        let (js, handle) = stand_in_js(0, true, stop.clone());
        let stepped = busy_engine_thread(&js, 0, Duration::from_millis(50), Some(Duration::from_micros(100)));
        stop_stand_in(&stop, handle);
        assert_eq!(stepped, 0, "stepped aside during jobs of 100 µs");

        // A JS thread that sleeps never waits.
        let stop = Arc::new(AtomicBool::new(false));
        let (js, handle) = stand_in_js(0, false, stop.clone());
        let stepped = busy_engine_thread(&js, 0, Duration::from_millis(50), None);
        stop_stand_in(&stop, handle);
        assert_eq!(stepped, 0, "stepped aside for a sleeping JS thread");

        // Nor does one running on another CPU.
        if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
            let stop = Arc::new(AtomicBool::new(false));
            let (js, handle) = stand_in_js(1, true, stop.clone());
            let stepped = busy_engine_thread(&js, 0, Duration::from_millis(50), None);
            stop_stand_in(&stop, handle);
            assert_eq!(stepped, 0, "stepped aside for a JS thread on another CPU");
        }
    }
}
