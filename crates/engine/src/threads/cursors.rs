//! The iterations open outside transactions (threads/iterate.rs runs their steps), each on a
//! connection of its own, and the spare connections kept for the next ones.

use std::collections::HashMap;

use super::worker::PoolConnection;
use crate::encode::pages::Cursor;
use crate::error::{code, DbError};

/// Iteration connections kept open for the next iteration.
const MAX_IDLE: usize = 2;

/// The iterations outside transactions, and their spare connections.
#[derive(Default)]
pub struct Cursors {
    pub(super) open: HashMap<u32, Open>,
    pub(super) idle: Vec<PoolConnection>,
    /// A rekey or close is under way: no iteration starts.
    pub(super) stopped: Option<&'static str>,
}

/// An open iteration: its statement (first: finalized before its connection closes) and its
/// connection.
pub(super) struct Open {
    pub(super) cursor: Cursor,
    pub(super) worker: PoolConnection,
}

// SAFETY: as for PoolConnection: the statement, its connection and the hooks its bookkeeping may share
// (Rc) move together, and one thread uses them at a time — the reader that took the iteration
// out of the map for one step (JS asks for a page only once the last arrived).
unsafe impl Send for Open {}

impl Cursors {
    /// Before a rekey: no iteration may be open, and none starts until `resume`; the spare
    /// connections close (they hold the old key).
    pub fn pause_for_rekey(&mut self) -> Result<(), DbError> {
        if !self.open.is_empty() {
            return Err(DbError::new(
                code::ERR_ITERATION_OPEN,
                format!(
                    "rekey needs every connection closed, and {} iteration(s) are open: finish or break \
                     out of them (or abort their signal) first",
                    self.open.len()
                ),
            ));
        }
        self.idle.clear();
        self.stopped = Some("a rekey is in progress");
        Ok(())
    }

    pub fn resume(&mut self) {
        self.stopped = None;
    }

    /// At close: every iteration ends, every connection closes.
    pub fn close(&mut self) {
        self.stopped = Some("the database is closing");
        self.open.clear();
        self.idle.clear();
    }

    /// A spare connection, kept unless enough are or none may start.
    pub(super) fn keep_spare(&mut self, worker: PoolConnection) {
        if self.stopped.is_none() && self.idle.len() < MAX_IDLE {
            self.idle.push(worker);
        }
    }
}
