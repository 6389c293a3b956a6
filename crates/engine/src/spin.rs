//! When busy-waiting pays. The writer spins for its next job (experiments/013) and the JS
//! thread's loop keeps turning for completions (023): with a CPU to spare that saves two
//! wake-ups per round trip. Without one it is the opposite: the spinning thread and the thread
//! it waits for take turns on one CPU, and an awaited round trip took 25 × better-sqlite3 with
//! one busy process on this 2-core machine, against 10 × with no spinning at all
//! (experiments/025). So each spinning thread looks, at most every CHECK_EVERY, at how many
//! tasks the kernel has runnable (`/proc/loadavg`, the caller included). One crowded look is
//! not enough: most are a V8 helper thread of this very process running for a fraction of a
//! millisecond, so a second look CONFIRM_AFTER later decides (experiments/026). A confirmed
//! crowd stops spinning until the next look; a crowd still there then, or back as soon as
//! spinning resumes, doubles that wait, up to LONGEST_REFUSAL: a lasting load is rarely spun
//! against.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const CHECK_EVERY: Duration = Duration::from_millis(5);
const CONFIRM_AFTER: Duration = Duration::from_millis(1);
const LONGEST_REFUSAL: Duration = Duration::from_millis(80);

/// The CPUs this process may use, read once: std's `available_parallelism` reads cgroup files
/// on each call, which was a tenth of a `Database`'s construction time on the JS thread
/// (experiments/058).
pub fn cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// One thread's spinning policy.
pub struct SpinPolicy {
    cpus: usize,
    next_check: Cell<Instant>,
    state: Cell<State>,
    /// How long the next refusal lasts: doubled while spinning keeps being refused.
    refusal: Cell<Duration>,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum State {
    /// Spinning; the last look found room.
    Allowed,
    /// Spinning; the last look found the CPUs crowded, the next one decides.
    Suspect,
    /// Not spinning until the next look.
    Refused,
    /// Spinning again: a look while refused found room, none has since spinning resumed.
    Probation,
}

impl SpinPolicy {
    pub fn new() -> Self {
        SpinPolicy {
            cpus: cpus(),
            next_check: Cell::new(Instant::now()),
            state: Cell::new(State::Allowed),
            refusal: Cell::new(CHECK_EVERY),
        }
    }

    /// Spinning is allowed now (the CPUs are not oversubscribed).
    pub fn allowed(&self, now: Instant) -> bool {
        if now >= self.next_check.get() {
            let crowded = runnable_tasks().is_some_and(|n| n > self.cpus);
            self.next_check.set(now + self.look(crowded));
        }
        self.state.get() != State::Refused
    }

    /// Moves to the state after a look; returns how long until the next one.
    fn look(&self, crowded: bool) -> Duration {
        let (state, wait) = match (self.state.get(), crowded) {
            (State::Allowed | State::Suspect | State::Probation, false) => {
                self.refusal.set(CHECK_EVERY);
                (State::Allowed, CHECK_EVERY)
            }
            (State::Refused, false) => (State::Probation, CHECK_EVERY),
            (State::Allowed, true) => (State::Suspect, CONFIRM_AFTER),
            (State::Suspect, true) => (State::Refused, self.refusal.get()),
            (State::Refused | State::Probation, true) => {
                let refusal = (self.refusal.get() * 2).min(LONGEST_REFUSAL);
                self.refusal.set(refusal);
                (State::Refused, refusal)
            }
        };
        self.state.set(state);
        wait
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
    fn the_policy_looks_again_only_when_its_wait_is_over() {
        let policy = SpinPolicy::new();
        let now = Instant::now();
        policy.allowed(now);
        policy.state.set(State::Refused);
        policy.next_check.set(now + CHECK_EVERY);
        assert!(!policy.allowed(now + Duration::from_millis(1)), "no new look before next_check");
        policy.allowed(now + CHECK_EVERY); // looks again
        assert!(policy.next_check.get() > now + CHECK_EVERY);
    }

    /// Feeds looks to the policy: the states and waits it goes through.
    fn walk(policy: &SpinPolicy, looks: &[bool]) -> Vec<(State, Duration)> {
        looks
            .iter()
            .map(|&crowded| {
                let wait = policy.look(crowded);
                (policy.state.get(), wait)
            })
            .collect()
    }

    #[test]
    fn one_crowded_look_is_not_enough_to_stop_spinning() {
        let policy = SpinPolicy::new();
        let ms = Duration::from_millis;
        assert_eq!(
            walk(&policy, &[true, false, true, true]),
            [
                (State::Suspect, CONFIRM_AFTER),
                (State::Allowed, CHECK_EVERY),
                (State::Suspect, CONFIRM_AFTER),
                (State::Refused, ms(5))
            ]
        );
    }

    #[test]
    fn refusals_grow_while_the_cpus_stay_crowded_and_reset_once_spinning_found_room() {
        let policy = SpinPolicy::new();
        let ms = Duration::from_millis;
        walk(&policy, &[true, true]); // refused for 5 ms
        assert_eq!(
            walk(&policy, &[true, false, true, true, true, true]),
            [
                (State::Refused, ms(10)),
                (State::Probation, CHECK_EVERY), // room while not spinning: try again
                (State::Refused, ms(20)),        // crowded again as soon as it spun
                (State::Refused, ms(40)),
                (State::Refused, LONGEST_REFUSAL),
                (State::Refused, LONGEST_REFUSAL),
            ]
        );
        assert_eq!(walk(&policy, &[false, false]), [(State::Probation, CHECK_EVERY), (State::Allowed, CHECK_EVERY)]);
        assert_eq!(walk(&policy, &[true, true]), [(State::Suspect, CONFIRM_AFTER), (State::Refused, ms(5))]);
    }
}
