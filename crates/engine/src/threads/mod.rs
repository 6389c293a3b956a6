//! The pool: one writer and N readers, each a thread owning a connection, fed by job queues,
//! and the completion queue their outcomes go to. A job runs on its thread's connection
//! (`worker`) through `sqlite` and `encode`; its completion goes on to `handoff`.

mod completions;
pub mod cursors;
pub mod group_commit;
mod iterate;
pub mod job;
mod open;
mod pool;
mod reader;
mod reader_gate;
mod run;
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
