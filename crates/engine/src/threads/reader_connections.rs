//! A database's reader connections, open or closed, as `Shared` keeps them between reader
//! sessions (reader.rs takes one for a session and puts it back).

use std::time::{Duration, Instant};

use super::worker::PoolConnection;

/// One of a database's reader connections (`readers` of them, each with its slot for
/// `cancel`), open or closed.
pub(super) struct ReaderConnection {
    pub(super) index: usize,
    pub(super) worker: Option<PoolConnection>,
    pub(super) last_used: Instant,
}

/// The reader connections no session holds, the most recently used last.
pub(super) struct ReaderConnections(pub(super) Vec<ReaderConnection>);

impl ReaderConnections {
    /// `count` connections, all closed: each opens when a session first needs it.
    pub(super) fn new(count: usize) -> ReaderConnections {
        let now = Instant::now();
        ReaderConnections(
            (0..count).rev().map(|index| ReaderConnection { index, worker: None, last_used: now }).collect(),
        )
    }

    /// One already open lead connection (a read-only database's first).
    pub(super) fn put_opened(&mut self, index: usize, worker: PoolConnection) {
        if let Some(conn) = self.0.iter_mut().find(|c| c.index == index) {
            conn.worker = Some(worker);
        }
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn open(&self) -> usize {
        self.0.iter().filter(|c| c.worker.is_some()).count()
    }

    pub(super) fn all_closed(&self) -> bool {
        self.0.iter().all(|c| c.worker.is_none())
    }

    /// The open connections unused since `now - idle`, taken out to close.
    pub(super) fn take_idle(&mut self, now: Instant, idle: Duration) -> Vec<(usize, PoolConnection)> {
        let stale = |c: &ReaderConnection| now.saturating_duration_since(c.last_used) >= idle;
        self.0.iter_mut().filter(|c| stale(c)).filter_map(|c| Some((c.index, c.worker.take()?))).collect()
    }

    pub(super) fn take_all(&mut self) -> Vec<(usize, PoolConnection)> {
        self.0.iter_mut().filter_map(|c| Some((c.index, c.worker.take()?))).collect()
    }
}
