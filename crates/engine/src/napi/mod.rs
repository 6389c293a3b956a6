//! What JS calls: the `NativeDatabase` class, and the per-job calls written against N-API
//! directly, the wire protocol's numbers both sides share (protocol.rs), and JS values made from Rust ones
//! (js.rs). A job goes from
//! here to `threads`, and comes back through `handoff`.

pub(crate) mod args;
pub mod database;
mod inline_calls;
mod job_calls;
pub mod js;
pub mod protocol;
mod texts;
