//! Reads on the JS thread (experiments/032). A point query costs SQLite ~2 µs, a hop to a
//! reader thread and back several times that, so a read may run right where it is issued, on
//! a read-only connection of its own, under a time budget: SQLite's progress handler interrupts
//! the statement once the budget is spent (sqlite/budget.rs). Then nothing was delivered, and
//! the same read goes to a reader thread (a read-only statement runs again safely); the
//! statement skips the JS thread for a while (doubling while it keeps overrunning), and tries
//! again now and then, since data changes. A read's first overrun after runs that fit moves
//! only that read, and a write's skips nothing (`STRIKE`).
//!
//! Outside transactions the read runs on a read-only connection of the JS thread's own, opened
//! by a pool thread (threads/open.rs) and kept behind a lock in `Shared`; the writer closes and
//! reopens it around a rekey. Inside a transaction it runs on the writer's connection, which
//! the body owns between its awaits, while the writer thread waits for its next job: a read
//! statement interrupted there leaves the transaction as it was.
//!
//! A transaction's writes and its COMMIT may run there too (experiments/036), but a write
//! cannot be interrupted (SQLite would roll the whole transaction back), so only a write whose
//! program is bounded whatever the data (sqlite/bounded.rs) runs on the JS thread, and a COMMIT
//! only when those are all the transaction wrote (a few pages to append to the WAL).
//!
//! Its files: the JS thread's own connection and the sliced read it may hold open
//! (`connection`); what the JS thread keeps of the writer's open transaction, and the write
//! groups it opens there (`write_group`; experiments/049, 050); the runs (`runs`). The decisions
//! JS takes before it offers a call here are src/js-thread/placement.ts's.

pub mod connection;
pub mod runs;
pub mod write_group;
