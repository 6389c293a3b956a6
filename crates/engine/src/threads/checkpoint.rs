//! The WAL's bound under sustained reads (experiments/070). SQLite's automatic checkpoint is
//! PASSIVE: it copies back the frames no reader still needs, and the WAL starts over only when
//! a writer finds every frame copied back and no reader in it. With a pool of readers reading
//! back to back one always is, so the WAL grows as long as writes go on ("checkpoint
//! starvation", sqlite.org/wal.html). Past `RESTART_AT` times the checkpoint size, the writer
//! runs a RESTART checkpoint too: it copies back every frame, waiting for the reads in flight
//! that still need them, then waits for the readers left in the WAL to finish. Reads that begin
//! meanwhile need no holding back: once every frame is copied back a new read takes SQLite's
//! read lock 0 and reads the database file alone, out of the WAL's way. The wait is bounded
//! (`RESTART_WAIT_MS`): a snapshot held longer (an open iteration, a transaction, a sliced read,
//! another process) keeps the WAL until it ends, and is reported in `diagnostics()`.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use sqlite3mc_sys as ffi;

use super::worker::PoolConnection;

/// The WAL starts over once it holds this many times `wal_autocheckpoint` frames (1,000
/// frames, 4 MB with 4 KiB pages, at the default): under issue 43's workload at load 8–10 the
/// WAL reached 15.7 MiB at 2 ×, 9.3 MiB at 1 × (experiments/070).
const RESTART_AT: u32 = 1;
/// How long the writer waits, at most, for the readers still in the WAL (experiments/070).
const RESTART_WAIT_MS: u32 = 100;

/// When the writer next waits for the readers, and since when a snapshot has kept the WAL from
/// starting over.
#[derive(Default)]
pub(super) struct WalBound {
    /// The WAL's frames from which a try waits again after one that a snapshot blocked (tries
    /// before it do not wait): one checkpoint's worth later, doubling with each blocked wait
    /// in a row (at most 16 ×), so a long read costs the writer a few waits, not one per
    /// checkpoint's worth of writes.
    retry_at: AtomicU32,
    /// Waits in a row that a snapshot outlived.
    misses: AtomicU32,
    /// When a try was first blocked (ms since the database opened, plus 1), 0 once the WAL
    /// started over.
    blocked_since: AtomicU64,
}

impl WalBound {
    /// How long a snapshot has kept the WAL from starting over (ms), 0 if none does.
    pub(super) fn held_ms(&self, started: Instant) -> u64 {
        match self.blocked_since.load(Ordering::Relaxed) {
            0 => 0,
            since => (started.elapsed().as_millis() as u64 + 1).saturating_sub(since),
        }
    }

    /// The WAL started over (or never passed its bound since): nothing holds it.
    fn clear(&self) {
        self.retry_at.store(0, Ordering::Relaxed);
        self.misses.store(0, Ordering::Relaxed);
        self.blocked_since.store(0, Ordering::Relaxed);
    }
}

/// Whether the WAL is past its bound after the writer's work (checked while the writer still
/// holds its connection: a check that needs it again would keep the JS thread's next write off
/// it). Never inside a transaction (its connection cannot checkpoint then), nor with
/// checkpoints off (`wal_autocheckpoint = 0`, as `checkpoints: 'external'` sets it).
pub(super) fn over_bound(worker: &mut PoolConnection, bound: &WalBound) -> Option<(u32, u32)> {
    if !worker.conn.autocommit() {
        return None;
    }
    let pages = worker.commit_settings().ok()?.checkpoint_pages;
    let frames = worker.conn.wal_index_header()?[4]; // mxFrame (sqlite.org/walformat.html)
    if pages <= 0 || frames < RESTART_AT.saturating_mul(pages as u32) {
        bound.clear();
        return None;
    }
    Some((frames, pages as u32))
}

/// Starts the WAL over (module comment), after the writer's jobs completed: they are
/// acknowledged before any wait for the readers.
/// `writer` is the writer's connection, `started` the database's start (`Shared`'s).
pub(super) fn restart(writer: &Mutex<Option<PoolConnection>>, bound: &WalBound, started: Instant) {
    let mut slot = writer.lock().unwrap();
    let Some(worker) = slot.as_mut() else { return };
    // Again: a transaction or write group may have begun on the JS thread meanwhile.
    let Some((frames, pages)) = over_bound(worker, bound) else { return };
    // Soon after a wait a snapshot outlived, try without waiting: the WAL starts over at the
    // first job after that snapshot ends.
    let waits = frames >= bound.retry_at.load(Ordering::Relaxed);
    let db = worker.conn.raw();
    let rc = worker.conn.with_busy_wait(if waits { RESTART_WAIT_MS } else { 0 }, || {
        let (mut log, mut copied) = (0, 0);
        // SAFETY: valid handle on the thread that holds it; null schema: every attached one.
        unsafe {
            ffi::sqlite3_wal_checkpoint_v2(db, std::ptr::null(), ffi::SQLITE_CHECKPOINT_RESTART, &mut log, &mut copied)
        }
    });
    if rc == ffi::SQLITE_OK {
        bound.clear();
    } else if waits {
        // SQLITE_BUSY: a snapshot outlived the wait (what it copied back stays copied).
        let misses = bound.misses.fetch_add(1, Ordering::Relaxed).min(4);
        bound.retry_at.store(frames.saturating_add(pages.saturating_mul(1 << misses)), Ordering::Relaxed);
        let now = started.elapsed().as_millis() as u64 + 1;
        let _ = bound.blocked_since.compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
    }
}
