//! What goes through the pool's queues: a job in (what to run, on the writer or a reader), and
//! its outcome out (to JS through the completion queue, or to the live-query registry).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::encode::rows::EncodedRows;
use crate::error::{DbError, DbResult};
use crate::live::dependencies::Dependencies;
use crate::sqlite::encryption::KeyConfig;

pub enum Request {
    Select {
        max_rows: usize,
        json: bool,
    },
    Execute,
    Batch,
    /// The library's own transaction control (BEGIN, SAVEPOINT, RELEASE, COMMIT, ROLLBACK):
    /// the only jobs allowed to open or end a transaction.
    Control,
    /// Test hook: a job that panics, to prove a panic rejects one job and nothing more.
    Panic,
    /// A run of the live query whose id the job carries (live::registry).
    Live,
    /// Writer: has another connection committed since the last check? (watchExternalChanges)
    DataVersion,
    /// A step of iteration `cursor` (threads/iterate.rs).
    Iterate {
        cursor: u32,
        step: IterateStep,
    },
    /// Reader: the database's image (sqlite/backup.rs `serialize`).
    Serialize,
    /// A statement's column names and declared types, as JSON (prepared, never stepped).
    Columns,
    /// `db.prepare`: whether the statement is a read, and its columns, as JSON (prepared,
    /// never stepped).
    Describe,
    /// Re-encrypts the database with this key (`None`: decrypts it); see writer.rs and sqlite/encryption.rs.
    Rekey(Option<Arc<KeyConfig>>),
}

pub enum IterateStep {
    /// Prepare the job's SQL with its parameters and send the first page.
    Start { page_rows: usize },
    /// Send the next page.
    Next,
    /// Stop early: finalize the statement, free its connection.
    End,
}

pub struct Job {
    pub id: u32,
    pub request: Request,
    pub sql: String,
    pub params: Vec<u8>,
    /// The job has an AbortSignal: check the cancelled set before running it.
    pub cancellable: bool,
    /// A writer job from a transaction: it must run inside that open transaction, never
    /// in autocommit after SQLite rolled the transaction back.
    pub in_transaction: bool,
    /// A traced call's job (protocol.rs `JOB_KIND_TRACED`): when it was queued. Only then is its
    /// wait measured and reported (`Outcome::Queued`); an untraced job reads no clock for it.
    pub queued: Option<Instant>,
}

impl Job {
    /// A traced job's wait in its queue until `began` (its thread began running it).
    pub fn waited(&self, began: Instant) -> Option<Outcome> {
        self.queued.map(|queued| Outcome::Queued(began.saturating_duration_since(queued)))
    }
}

pub enum Outcome {
    Rows(EncodedRows),
    /// A full part of a large `select` result; the job goes on (encode::rows::PART_CELLS).
    RowsPart(EncodedRows),
    /// A page of an iteration with more rows to come (its last page is `Rows`).
    Page(EncodedRows),
    Json(Vec<u8>),
    Changes {
        changes: i64,
        last_insert_rowid: i64,
    },
    /// A write that returned rows (RETURNING): its rows and its changes.
    Returned {
        rows: EncodedRows,
        changes: i64,
        last_insert_rowid: i64,
    },
    Done,
    /// A backup's step (sqlite/backup.rs); the job goes on.
    Progress {
        remaining: u32,
        total: u32,
    },
    /// A paused backup's step ended with this sqlite3_backup_step code, OK or DONE
    /// (threads/paused_backups.rs); its `Progress` came before.
    Stepped {
        rc: i32,
    },
    Error(DbError),
    /// A live query's run, before the registry decides what to deliver.
    LiveRan {
        result: DbResult<EncodedRows>,
        reads: Option<Arc<Dependencies>>,
    },
    /// A live query's new rows, to deliver.
    LiveRows(EncodedRows),
    /// A live query's run failed.
    LiveError(DbError),
    /// How long a traced job waited in its queue (`Job::waited`); its outcome follows.
    Queued(Duration),
}
