//! Opening the pool's connections, each on its own thread: the options they open with, and the
//! latch that orders them and reports the open.

use std::sync::{Arc, Condvar, Mutex};

use super::job::Outcome;
use super::shared::Shared;
use super::worker::Worker;
use crate::error::DbError;
use crate::functions::Functions;
use crate::sqlite::encryption::KeyConfig;
use crate::sqlite::extensions::Extension;
use crate::sqlite::setup::{self, OpenOptions, Role};
use crate::sqlite::step::InvalidUtf8;

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
    /// Open a read-only connection for reads on the JS thread (inline.rs).
    pub inline: bool,
    /// No checkpoints from any connection: another process runs them (setup.rs).
    pub external_checkpoints: bool,
    /// What reading TEXT that is not valid UTF-8 does, on every connection (sqlite/step.rs).
    pub invalid_utf8: InvalidUtf8,
    /// The database's JavaScript functions, on every connection that runs its statements.
    pub functions: Option<Arc<Functions>>,
    /// Every connection opens through this VFS (sqlite/vfs.rs); `None`: the default.
    pub vfs: Option<String>,
}

/// Opening happens on the worker threads. A lead connection opens alone first (the writer,
/// which creates the file and switches it to WAL; reader 0 when read-only), then the others
/// in parallel: connections opening at once would meet each other's WAL recovery. The open
/// job completes when every connection is open, or with the first failure.
pub(super) struct OpenLatch {
    open_id: u32,
    state: Mutex<OpenState>,
    cond: Condvar,
}

struct OpenState {
    /// `None` until the lead connection has tried; then whether it opened.
    lead: Option<bool>,
    /// Reader connections still to open.
    readers_left: usize,
    /// The open job has completed (all open, or the first failure reported).
    reported: bool,
}

impl OpenLatch {
    /// A latch that completes job `open_id` once `readers` readers (after the lead) opened.
    pub(super) fn new(open_id: u32, readers: usize) -> OpenLatch {
        let state = Mutex::new(OpenState { lead: None, readers_left: readers, reported: false });
        OpenLatch { open_id, state, cond: Condvar::new() }
    }

    pub(super) fn lead_done(&self, opened: bool) {
        self.state.lock().unwrap().lead = Some(opened);
        self.cond.notify_all();
    }

    /// Waits for the lead connection; false when it failed (nothing more to open).
    pub(super) fn wait_for_lead(&self) -> bool {
        let mut st = self.state.lock().unwrap();
        while st.lead.is_none() {
            st = self.cond.wait(st).unwrap();
        }
        st.lead == Some(true)
    }

    pub(super) fn reader_opened(&self, shared: &Shared) {
        let mut st = self.state.lock().unwrap();
        st.readers_left -= 1;
        if st.readers_left == 0 && !st.reported {
            st.reported = true;
            shared.complete(self.open_id, Outcome::Done);
        }
    }

    pub(super) fn failed(&self, shared: &Shared, error: DbError) {
        let mut st = self.state.lock().unwrap();
        if !st.reported {
            st.reported = true;
            shared.complete(self.open_id, Outcome::Error(error));
        }
    }
}

pub(super) fn open_worker(opts: &PoolOptions, role: Role, key: Option<&KeyConfig>) -> Result<Worker, DbError> {
    open_connection(opts, role, key, false)
}

/// The pool's first connection (the writer, or reader 0 when read-only): a wrong key is found
/// before anything touches the files (sqlite/setup.rs `probe_key`).
pub(super) fn open_lead(opts: &PoolOptions, role: Role, key: Option<&KeyConfig>) -> Result<Worker, DbError> {
    open_connection(opts, role, key, true)
}

fn open_connection(opts: &PoolOptions, role: Role, key: Option<&KeyConfig>, lead: bool) -> Result<Worker, DbError> {
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
    })?;
    let mut conn = conn;
    conn.set_functions(opts.functions.clone());
    Ok(Worker::new(conn, role))
}

/// Opens the JS thread's connection (inline.rs) on a thread of its own, beside the readers.
pub(super) fn open_inline(opts: &PoolOptions, shared: &Shared, latch: &OpenLatch) {
    if !latch.wait_for_lead() {
        return;
    }
    match open_worker(opts, Role::Reader, shared.gate.key().as_deref()) {
        Ok(worker) => {
            *shared.inline.lock().unwrap() = Some(worker);
            latch.reader_opened(shared);
        }
        Err(e) => latch.failed(shared, e),
    }
}
