//! Live queries (README "Live queries"): what a statement reads (captured by the authorizer
//! while it compiles on a reader), what a write changed (the writer's pre-update, commit and
//! rollback hooks), and the registry that re-runs the queries a committed change touched.

pub mod capture;
pub mod dependencies;
pub mod registry;
pub mod tracker;
