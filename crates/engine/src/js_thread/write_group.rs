//! The write groups the JS thread opens on the idle writer's connection: standalone writes
//! issued together, run in one transaction whose reads share one snapshot (experiments/049,
//! 050). What the group's transaction is and where its writes ran is the connection's
//! `TxWrites` (threads/worker.rs), which every BEGIN starts afresh.

use crate::error::DbResult;
use crate::threads::worker::PoolConnection;

/// Opens a write group's transaction (runs.rs `begin_group`) with a deferred BEGIN, noting the
/// wal-index header first: a commit after that point makes the group's snapshot stale.
pub fn begin(worker: &mut PoolConnection) -> DbResult<()> {
    let header = worker.conn.wal_index_header();
    worker.control("BEGIN")?;
    worker.tx_writes.group = true;
    worker.tx_writes.group_header = header;
    Ok(())
}

/// Before a read in a write group's transaction, or its first write: when any connection has
/// committed since the group's snapshot began, it begins again, so that the read sees that
/// commit (as a read of its own would) and the write does not fail on a stale snapshot
/// (SQLITE_BUSY_SNAPSHOT). Nothing of the group is written yet then (experiments/050).
pub fn fresh_snapshot(worker: &mut PoolConnection) -> DbResult<()> {
    if !in_unwritten_group(worker) {
        return Ok(());
    }
    let header = worker.conn.wal_index_header();
    if header.is_some() && header == worker.tx_writes.group_header {
        return Ok(());
    }
    worker.control("COMMIT")?;
    begin(worker)
}

/// Inside a write group's transaction, none of whose writes ran yet.
fn in_unwritten_group(worker: &PoolConnection) -> bool {
    let tx = &worker.tx_writes;
    !worker.conn.autocommit() && tx.group && tx.inline == 0 && !tx.on_thread
}

/// Whether a read outside any transaction sees on the writer's connection what it would see on
/// a reader's: that connection is outside a transaction, or in a write group's before any of its
/// writes ran (the group's reads share one snapshot: experiments/050), and nothing compiled on
/// it made it differ (a temp table, an ATTACH, a PRAGMA changing results: capture.rs).
pub fn reads_as_a_reader(worker: &PoolConnection) -> bool {
    (worker.conn.autocommit() || in_unwritten_group(worker)) && !worker.diverged()
}
