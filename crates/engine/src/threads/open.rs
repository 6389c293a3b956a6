//! Opening a database's connections: the options they open with, and the open job.

use std::sync::Arc;
use std::time::Duration;

use super::worker::PoolConnection;
use crate::error::DbError;
use crate::functions::Functions;
use crate::sqlite::connection::InvalidUtf8;
use crate::sqlite::encryption::KeyConfig;
use crate::sqlite::extensions::Extension;
use crate::sqlite::setup::{self, OpenOptions, Role, Synchronous};

pub struct PoolOptions {
    pub path: String,
    pub readers: usize,
    pub busy_timeout_ms: u32,
    pub readonly: bool,
    pub safe_integers: bool,
    pub key: Option<Arc<KeyConfig>>,
    /// Databases attached on every connection: (schema name, file path).
    pub attach: Vec<(String, String)>,
    /// Extensions loaded on every connection.
    pub extensions: Vec<Extension>,
    /// Open a read-only connection for reads on the JS thread (js_thread/runs.rs).
    pub inline: bool,
    /// No checkpoints from any connection: another process runs them (setup.rs).
    pub external_checkpoints: bool,
    /// What reading TEXT that is not valid UTF-8 does, on every connection (sqlite/step.rs).
    pub invalid_utf8: InvalidUtf8,
    /// The database's JavaScript functions, on every connection that runs its statements.
    pub functions: Option<Arc<Functions>>,
    /// Reader connections unused this long are closed (executor.rs sweeps).
    pub idle_timeout: Duration,
    /// Every connection opens through this VFS (sqlite/vfs.rs); `None`: the default.
    pub vfs: Option<String>,
    /// `PRAGMA synchronous` on every connection, whenever it opens (setup.rs).
    pub synchronous: Synchronous,
}
pub(super) fn open_worker(opts: &PoolOptions, role: Role, key: Option<&KeyConfig>) -> Result<PoolConnection, DbError> {
    open_connection(opts, role, key, false)
}

/// The pool's first connection (the writer, or reader 0 when read-only): a wrong key is found
/// before anything touches the files (sqlite/setup.rs `probe_key`).
pub(super) fn open_lead(opts: &PoolOptions, role: Role, key: Option<&KeyConfig>) -> Result<PoolConnection, DbError> {
    open_connection(opts, role, key, true)
}

fn open_connection(
    opts: &PoolOptions,
    role: Role,
    key: Option<&KeyConfig>,
    lead: bool,
) -> Result<PoolConnection, DbError> {
    let conn = setup::open(&OpenOptions {
        path: &opts.path,
        role,
        busy_timeout_ms: opts.busy_timeout_ms,
        key,
        attach: &opts.attach,
        extensions: &opts.extensions,
        external_checkpoints: opts.external_checkpoints,
        invalid_utf8: opts.invalid_utf8,
        lead,
        vfs: opts.vfs.as_deref(),
        synchronous: opts.synchronous,
    })?;
    let mut conn = conn;
    conn.set_functions(opts.functions.clone());
    Ok(PoolConnection::new(conn, role))
}
