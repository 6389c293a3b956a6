//! Live queries (docs/live-queries.md): what a statement reads (captured by the authorizer
//! while it compiles on a reader), what a write changed (the writer's pre-update, commit and
//! rollback hooks). The hooks sit on `sqlite` connections; the registry that re-runs the queries
//! a committed change touched is in `threads` (live_registry.rs), which sends its runs to the
//! readers, and their rows go back through `handoff` like any query's.

pub mod capture;
pub mod dependencies;
pub mod hooks;
pub mod tracker;
