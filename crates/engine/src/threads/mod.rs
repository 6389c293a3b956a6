//! The engine: each database's writer and reader queues and connections, served by sessions on
//! the process's engine threads (`executor`, `sessions`), and the completion queue their
//! outcomes go to. A job runs on one of its database's connections (`worker`) through `sqlite`
//! and `encode`; its completion goes on to `handoff`. The live queries' registry
//! (`live_registry`) sends their runs to the readers as jobs.

mod checkpoint;
mod completions;
pub mod cursors;
pub mod executor;
pub mod group_commit;
mod iterate;
pub mod job;
mod live_registry;
mod open;
mod paused_backups;
mod pool;
mod reader;
mod reader_connections;
mod run;
mod sessions;
mod shared;
pub mod step_aside;
#[cfg(test)]
mod tests;
pub mod worker;
mod writer;

pub use completions::{Completion, Waker};
pub use open::PoolOptions;
pub use pool::Pool;
pub use shared::Shared;
