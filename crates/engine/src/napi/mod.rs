//! What JS calls: the `NativeDatabase` class, and the per-job calls written against N-API
//! directly (the wire protocol's numbers are in `crate::protocol`, JS values in `crate::js`). A
//! job goes from here to `threads`, and comes back through `handoff`.

pub mod database;
mod inline_calls;
mod job_calls;
mod texts;
