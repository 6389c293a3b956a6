//! The JS thread's own read-only connection (`Shared::inline`): a pool connection, and the read
//! calling JavaScript functions it may hold open between slices (runs.rs `read_slice`).

use crate::encode::pages::Cursor;
use crate::error::DbResult;
use crate::threads::worker::PoolConnection;

/// The JS thread's connection. Declared in drop order: a sliced read's statement is finalized
/// before its connection closes.
pub struct JsConnection {
    /// A read calling JavaScript functions, run a slice at a time: while it is under way its
    /// snapshot stays open, and other reads skip this connection (`Shared::inline_for_run`).
    pub sliced: Option<Sliced>,
    pub worker: PoolConnection,
}

/// A sliced read under way: its statement, the rows its next slice steps, and its SQL.
pub struct Sliced {
    pub cursor: Cursor,
    pub rows: usize,
    pub sql: String,
}

// SAFETY: as for PoolConnection: the sliced read's statement moves with its connection, and one
// thread uses them at a time (the JS thread, or behind `Shared::inline`'s lock an engine thread
// that opens or closes it).
unsafe impl Send for JsConnection {}

impl JsConnection {
    pub fn new(worker: PoolConnection) -> JsConnection {
        JsConnection { sliced: None, worker }
    }

    /// Starts a read of `sql` that calls JavaScript functions, to be run a slice at a time
    /// (runs.rs `read_slice`), its first slice `rows` long. False when it calls none (select's
    /// checks apply).
    pub fn start_sliced(&mut self, sql: &str, params: &[u8], rows: usize) -> DbResult<bool> {
        let calls_js = self.worker.calls_js(sql)?;
        if calls_js {
            let cursor = self.worker.cursor(sql, params.to_vec(), rows)?;
            self.sliced = Some(Sliced { cursor, rows, sql: sql.to_string() });
        }
        Ok(calls_js)
    }
}
