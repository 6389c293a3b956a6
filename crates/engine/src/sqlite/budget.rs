//! A time budget on a connection (experiments/032): SQLite's progress handler looks at the clock
//! every PROGRESS_OPS virtual-machine steps and interrupts the running statement once the
//! deadline has passed. Used by reads on the JS thread (inline.rs); outside `within` it never
//! interrupts anything.
//!
//! On the engine's own threads the same handler lets a long statement yield its CPU every
//! YIELD_EVERY (experiments/047). The kernel may wake the JS thread on the CPU a reader is
//! running on and leave it waiting there until its next tick (4 ms here), even with the other
//! CPU idle. After a yield it runs at once.

use std::cell::Cell;
use std::ffi::c_void;
use std::os::raw::c_int;
use std::time::{Duration, Instant};

use sqlite3mc_sys as ffi;

use crate::sqlite::connection::Connection;

/// Virtual-machine steps between two looks at the clock: a look costs ~25 ns, 256 steps of a
/// simple scan take a few microseconds.
const PROGRESS_OPS: c_int = 256;
/// How long a statement on an engine thread runs before it yields its CPU.
const YIELD_EVERY: Duration = Duration::from_micros(250);
/// Outside a budget, one progress call in this many looks at the clock.
const LOOK_EVERY: u32 = 4;

thread_local! {
    /// This is an engine thread: its long statements yield now and then.
    static YIELDS: Cell<bool> = const { Cell::new(false) };
}

/// Makes the calling thread one whose long statements yield their CPU now and then; called as
/// each engine thread starts (never on the JS thread).
pub fn yield_on_this_thread() {
    YIELDS.with(|yields| yields.set(true));
}

/// When the running statement's budget ends, read by the progress handler. Boxed, installed
/// once per connection, and dropped after the connection closes (Worker's field order).
pub struct Budget {
    deadline: Cell<Option<Instant>>,
    overran: Cell<bool>,
    /// Outside a budget: progress calls so far, the last look at the clock, and when the
    /// statement started running or last yielded.
    calls: Cell<u32>,
    last_look: Cell<Instant>,
    running_since: Cell<Instant>,
}

impl Budget {
    pub fn install(conn: &Connection) -> Box<Budget> {
        let now = Instant::now();
        let budget = Box::new(Budget {
            deadline: Cell::new(None),
            overran: Cell::new(false),
            calls: Cell::new(0),
            last_look: Cell::new(now),
            running_since: Cell::new(now),
        });
        // SAFETY: valid handle; the owner drops the budget after the connection.
        unsafe {
            ffi::sqlite3_progress_handler(
                conn.raw(),
                PROGRESS_OPS,
                Some(over_budget),
                &*budget as *const Budget as *mut c_void,
            )
        };
        budget
    }

    /// Runs `f` with a deadline `budget` from now; also returns whether the deadline passed and
    /// interrupted a statement (which then failed with SQLITE_INTERRUPT).
    pub fn within<T>(&self, budget: Duration, f: impl FnOnce() -> T) -> (T, bool) {
        self.overran.set(false);
        self.deadline.set(Some(Instant::now() + budget));
        let result = f();
        self.deadline.set(None);
        (result, self.overran.get())
    }

    /// A progress call outside a budget: on an engine thread, yields the CPU once the
    /// statement has run YIELD_EVERY since it started or last yielded.
    fn courtesy(&self) {
        let calls = self.calls.get().wrapping_add(1);
        self.calls.set(calls);
        if calls % LOOK_EVERY != 0 || !YIELDS.with(Cell::get) {
            return;
        }
        let now = Instant::now();
        if now.saturating_duration_since(self.last_look.get()) > YIELD_EVERY {
            // Long since the last look: a new statement (or one slow step). Count from now.
            self.running_since.set(now);
        } else if now.saturating_duration_since(self.running_since.get()) >= YIELD_EVERY {
            std::thread::yield_now();
            self.running_since.set(Instant::now());
        }
        self.last_look.set(now);
    }
}

unsafe extern "C" fn over_budget(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the connection's boxed Budget, which outlives it.
    let budget = &*(arg as *const Budget);
    match budget.deadline.get() {
        Some(deadline) if Instant::now() >= deadline => {
            budget.overran.set(true);
            1
        }
        Some(_) => 0,
        None => {
            budget.courtesy();
            0
        }
    }
}
