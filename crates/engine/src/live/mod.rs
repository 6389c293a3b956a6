//! Live queries (README "Live queries"): what a statement reads (captured by the authorizer
//! while it compiles on a reader), what a write changed (the writer's pre-update, commit and
//! rollback hooks), and the registry that re-runs the queries a committed change touched.

pub mod capture;
pub mod dependencies;
pub mod registry;
pub mod tracker;

use std::cell::RefCell;

use capture::Capture;
use tracker::ChangeTracker;

/// A connection's live-query state that SQLite's callbacks reach: boxed in the connection,
/// so the address SQLite holds stays put.
pub struct Hooks {
    pub capture: RefCell<Capture>,
    pub tracker: RefCell<ChangeTracker>,
}
