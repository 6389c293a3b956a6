//! A time budget on a connection (experiments/032): SQLite's progress handler looks at the clock
//! every PROGRESS_OPS virtual-machine steps and interrupts the running statement once the
//! deadline has passed. Used by reads on the JS thread (js_thread/runs.rs); outside `start` … `finish`
//! it never interrupts anything, and calls its owner's `between` instead: there an engine
//! thread steps aside for a waiting JS thread (threads/step_aside.rs, given by the connection's
//! owner so that `sqlite` needs nothing from the layers above it).

use std::cell::Cell;
use std::ffi::c_void;
use std::os::raw::c_int;
use std::time::{Duration, Instant};

use sqlite3mc_sys as ffi;

use crate::sqlite::connection::Connection;

/// Virtual-machine steps between two looks at the clock: a look costs ~25 ns, 256 steps of a
/// simple scan take a few microseconds.
const PROGRESS_OPS: c_int = 256;

/// When the running statement's budget ends, read by the progress handler. Boxed, installed
/// once per connection, and dropped after the connection closes (PoolConnection's field order).
pub struct Budget {
    deadline: Cell<Option<Instant>>,
    overran: Cell<bool>,
    /// Called at each look outside a deadline.
    between: fn(),
}

impl Budget {
    pub fn install(conn: &Connection, between: fn()) -> Box<Budget> {
        let budget = Box::new(Budget { deadline: Cell::new(None), overran: Cell::new(false), between });
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

    /// Starts a deadline `budget` from now for the statements run until `finish`.
    pub fn start(&self, budget: Duration) {
        self.overran.set(false);
        self.deadline.set(Some(Instant::now() + budget));
    }

    /// Ends the deadline; returns whether it passed and interrupted a statement (which then
    /// failed with SQLITE_INTERRUPT).
    pub fn finish(&self) -> bool {
        self.deadline.set(None);
        self.overran.get()
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
            (budget.between)();
            0
        }
    }
}
