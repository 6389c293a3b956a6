//! resqlite/sqlite3's Backup (src/sqlite3-backup.ts): SQLite's backup paused between the steps
//! its caller asks for, as sqlite3's `Backup#step(n)` runs `sqlite3_backup_step(n)`. Each start,
//! step and finish runs on an engine thread (pool.rs `backup_start`, …), never on the JS thread.
//!
//! - It reads from a read-only connection of its own: not the writer's (a step would hold the
//!   writes back) nor one of the readers' (a paused backup would keep it from reads).
//! - Between steps it holds no transaction on the database: a step opens its read transaction
//!   and ends it (sqlite3_backup_step does when the source has none), so a paused backup pins
//!   neither the WAL nor a snapshot. What it keeps: its two connections, and the destination's
//!   write transaction, which holds the pages copied so far.
//! - A commit made between two steps (always another connection's) makes SQLite start the copy
//!   over at the next step, as sqlite3's backup does for a change made through another
//!   connection: `remaining` goes back up, and a step of every page left (-1) completes with the
//!   database as it is then. A backup stepped a few pages at a time while the database is
//!   written faster may never complete (SQLite's own caveat).
//! - The destination is created empty at the start (an existing file is refused, never
//!   replaced); the step that copies the last page commits the copy into it. A finish before
//!   that rolls it back and leaves the file empty, as sqlite3 leaves it.
//! - The database's close finishes every paused backup, after its running step (sessions.rs
//!   `close_connections`); a database dropped unclosed drops them with its `Shared`. A rekey
//!   finishes them too (writer.rs `rekey`): it replaces the file their connections read, and
//!   needs the database to itself. Their later steps fail with `ERR_BACKUP`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sqlite3mc_sys as ffi;

use super::open::{open_worker, PoolOptions};
use super::worker::PoolConnection;
use crate::error::{code, DbError, DbResult};
use crate::sqlite::backup::{self, Stepped, Steps};
use crate::sqlite::encryption::KeyConfig;
use crate::sqlite::setup::Role;

struct Paused {
    /// Declared before its source: finished before that connection closes.
    steps: Steps,
    /// Read by `steps` alone: kept open for it.
    _source: PoolConnection,
}

/// A paused backup, or none once a rekey finished it; its lock is held through a step.
type Slot = Arc<Mutex<Option<Paused>>>;

/// A database's paused backups, by the id of the job that started each.
#[derive(Default)]
pub(super) struct PausedBackups(Mutex<Registered>);

#[derive(Default)]
struct Registered {
    backups: HashMap<u32, Slot>,
    /// The database closed: a backup that finishes starting now is finished at once.
    closed: bool,
}

impl PausedBackups {
    /// Starts backup `id` of the database `opts` opens, with `key`, into the new file
    /// `destination`, paused before its first step. On an error nothing is left.
    pub(super) fn start(
        &self,
        id: u32,
        opts: &PoolOptions,
        key: Option<Arc<KeyConfig>>,
        destination: &str,
    ) -> DbResult<()> {
        let paused = open(opts, key, destination)?;
        let mut registered = self.0.lock().unwrap();
        if registered.closed {
            drop(registered);
            drop(paused);
            return Err(DbError::new(code::ERR_DATABASE_CLOSED, "the database is closed"));
        }
        registered.backups.insert(id, Arc::new(Mutex::new(Some(paused))));
        Ok(())
    }

    /// Copies up to `pages` pages of backup `backup` (all those left when negative). The step's
    /// code may be an error (`backup::step_error`); `Err` when it could not step at all.
    pub(super) fn step(&self, backup: u32, pages: i32) -> DbResult<Stepped> {
        let slot = self.0.lock().unwrap().backups.get(&backup).cloned();
        let slot = slot.ok_or_else(|| DbError::new(code::ERR_BACKUP, format!("backup {backup} is finished")))?;
        let mut paused = slot.lock().unwrap();
        let paused = paused.as_mut().ok_or_else(|| {
            DbError::new(
                code::ERR_BACKUP,
                "the database was rekeyed since this backup began, which finished it (the rekey replaces \
                 the file it read): finish it and begin another",
            )
        })?;
        Ok(paused.steps.step(pages))
    }

    /// A rekey: finishes every paused backup, each after its running step, keeping its place so
    /// that its next step says why.
    pub(super) fn finish_for_rekey(&self) {
        let slots: Vec<Slot> = self.0.lock().unwrap().backups.values().cloned().collect();
        for slot in slots {
            drop(slot.lock().unwrap().take());
        }
    }

    /// Finishes backup `backup` (sqlite3_backup_finish) and closes its connections, after its
    /// running step.
    pub(super) fn finish(&self, backup: u32) {
        let slot = self.0.lock().unwrap().backups.remove(&backup);
        if let Some(slot) = slot {
            drop(slot.lock().unwrap().take());
        }
    }

    /// The database closes: finishes every paused backup, each after its running step.
    pub(super) fn finish_all(&self) {
        let mut registered = self.0.lock().unwrap();
        registered.closed = true;
        let slots: Vec<Slot> = registered.backups.drain().map(|(_, slot)| slot).collect();
        drop(registered);
        for slot in slots {
            drop(slot.lock().unwrap().take());
        }
    }
}

fn open(opts: &PoolOptions, key: Option<Arc<KeyConfig>>, destination: &str) -> DbResult<Paused> {
    // Created here, so that no file is ever replaced (SQLite would open one that exists).
    std::fs::OpenOptions::new().write(true).create_new(true).open(destination).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => backup::exists(destination),
        _ => DbError::sqlite(ffi::SQLITE_CANTOPEN, format!("unable to open database file '{destination}': {e}")),
    })?;
    let started = open_worker(opts, Role::Reader, key.as_deref()).and_then(|source| {
        let dest = backup::open_destination(destination, 0, key.as_deref())?;
        // SAFETY: `Paused` keeps the source open until its steps are finished (field order), and
        // only the thread holding its slot's lock uses them.
        let steps = unsafe { Steps::start(&source.conn, dest) }?;
        Ok(Paused { steps, _source: source })
    });
    if started.is_err() {
        let _ = std::fs::remove_file(destination); // the empty file made above
    }
    started
}
