//! What JS calls: the `NativeDatabase` class, and the per-job calls written against N-API
//! directly, and the wire protocol's numbers both sides share (protocol.rs). A job goes from
//! here to `threads`, and comes back through `handoff`.

mod args;
pub mod database;
mod inline_calls;
mod job_calls;
pub mod protocol;
mod texts;
