//! Helpers for the cargo tests: a connection opened and hooked the way a pool thread holds one,
//! and database files that remove themselves.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::DbResult;
use crate::live::dependencies::ChangeSet;
use crate::live::hooks::Hooks;
use crate::live::hooks::StatementCache;
use crate::sqlite::connection::Connection;
use crate::sqlite::connection::InvalidUtf8;
use crate::sqlite::setup::{self, OpenOptions, Role, Synchronous};

/// A connection with its statement cache and live-query hooks (as `threads::worker::PoolConnection`
/// holds them). Declared in drop order: statements, then the connection, then the hooks.
pub struct Opened {
    pub cache: StatementCache,
    pub conn: Connection,
    pub hooks: Box<Hooks>,
}

impl Opened {
    /// Opens `path` for `role` with `setup::open`, its authorizer installed.
    pub fn open(path: &str, role: Role) -> Opened {
        let opts = OpenOptions {
            path,
            role,
            busy_timeout_ms: 0,
            key: None,
            attach: &[],
            extensions: &[],
            external_checkpoints: false,
            invalid_utf8: InvalidUtf8::Error,
            lead: false,
            vfs: None,
            synchronous: Synchronous::Normal,
        };
        let conn = setup::open(&opts).unwrap_or_else(|e| panic!("open: {}", e.message));
        // SAFETY: the hooks outlive the connection (field order) and stay on this thread.
        let hooks = unsafe { Hooks::install(&conn, role) };
        Opened { cache: StatementCache::new(), conn, hooks }
    }

    /// A reader on an in-memory database.
    pub fn memory() -> Opened {
        Opened::open(":memory:", Role::Reader)
    }

    /// Runs every statement of `sql` with its effects recorded (as `PoolConnection::exec`).
    pub fn exec(&self, sql: &str) -> DbResult<()> {
        self.hooks.exec(&self.conn, sql)
    }

    pub fn set_tracking(&self, on: bool) {
        self.hooks.set_tracking(&self.conn, on);
    }

    pub fn take_committed(&self) -> Option<ChangeSet> {
        self.hooks.take_committed(&self.conn)
    }
}

/// A database file name in the temp directory, unique in this run; the file and its WAL and
/// shared-memory files are removed when it drops.
pub struct TempDb(PathBuf);

impl TempDb {
    pub fn new(what: &str) -> TempDb {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("resqlite-{what}-{}-{}.db", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        TempDb(std::env::temp_dir().join(name))
    }

    pub fn as_str(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temp path")
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = self.0.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}
