//! When busy-waiting pays. The writer spins for its next job (experiments/013) and the JS
//! thread's loop keeps turning for completions (023): with a CPU to spare that saves two
//! wake-ups per round trip. Without one it is the opposite: the spinning thread and the thread
//! it waits for take turns on one CPU, and an awaited round trip took 25 × better-sqlite3 with
//! one busy process on this 2-core machine, against 10 × with no spinning at all
//! (experiments/025). So each spinning thread looks, at most every CHECK_EVERY, at how many
//! tasks the kernel has runnable (`/proc/loadavg`, the caller included): more than there are
//! CPUs, and it waits the blocking way until the next look.

use std::cell::Cell;
use std::time::{Duration, Instant};

const CHECK_EVERY: Duration = Duration::from_millis(5);

/// One thread's spinning policy.
pub struct SpinPolicy {
    cpus: usize,
    next_check: Cell<Instant>,
    allowed: Cell<bool>,
}

impl SpinPolicy {
    pub fn new() -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        SpinPolicy { cpus, next_check: Cell::new(Instant::now()), allowed: Cell::new(true) }
    }

    /// Spinning is allowed now (the CPUs are not oversubscribed).
    pub fn allowed(&self, now: Instant) -> bool {
        if now >= self.next_check.get() {
            self.next_check.set(now + CHECK_EVERY);
            self.allowed.set(runnable_tasks().is_none_or(|n| n <= self.cpus));
        }
        self.allowed.get()
    }
}

/// Tasks runnable on the whole machine right now, the caller included (Linux); None where
/// it cannot be known (then spinning is always allowed, as before this policy).
fn runnable_tasks() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    parse_runnable(&text)
}

/// `/proc/loadavg` is "1m 5m 15m runnable/total last-pid".
fn parse_runnable(text: &str) -> Option<usize> {
    text.split_whitespace().nth(3)?.split('/').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runnable_count_is_read_from_loadavg() {
        assert_eq!(parse_runnable("0.90 1.18 1.14 3/345 12345\n"), Some(3));
        assert_eq!(parse_runnable("garbage"), None);
        if cfg!(target_os = "linux") {
            assert!(runnable_tasks().expect("/proc/loadavg") >= 1, "the caller itself runs");
        }
    }

    #[test]
    fn the_policy_looks_again_only_after_check_every() {
        let policy = SpinPolicy::new();
        let now = Instant::now();
        policy.allowed(now);
        policy.allowed.set(false);
        assert!(!policy.allowed(now + Duration::from_millis(1)), "no new look within CHECK_EVERY");
        policy.next_check.set(now);
        policy.allowed(now + CHECK_EVERY); // looks again
        assert!(policy.next_check.get() > now + CHECK_EVERY);
    }
}
