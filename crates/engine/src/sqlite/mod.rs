//! SQLite itself: a connection handle and how the pool opens one (`setup`), prepared
//! statements and their cache, whether a write's work is bounded, binding parameters, stepping, a time budget, encryption, extensions, a VFS to open through, backup, and the rows writes change (resqlite/sqlite3's 'change' event). A query's rows go
//! on to `encode`.

pub mod backup;
pub mod bounded;
pub mod budget;
pub mod connection;
pub mod encryption;
pub mod extensions;
pub mod params;
pub mod row_changes;
pub mod setup;
pub mod statement_cache;
pub mod step;
pub mod vfs;
