//! Opening a connection the way the pool uses it: the key first, then the settings, WAL and
//! the checkpoint policy on the writer, and the attached databases.

use std::os::raw::c_int;
use std::ptr;

use sqlite3mc_sys as ffi;

use super::connection::Connection;
use super::encryption::{self, KeyConfig};
use super::extensions::{self, Extension};
use super::step::InvalidUtf8;
use crate::error::{DbError, DbResult};

/// What a connection is for: the pool has one writer and N readers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Writer,
    Reader,
}

/// WAL pages after which a commit triggers a PASSIVE checkpoint (SQLite's default).
const WAL_CHECKPOINT_PAGES: u32 = 1000;
/// Bytes the WAL file is truncated to when it starts over after a full checkpoint.
const JOURNAL_SIZE_LIMIT: u64 = 16 << 20;

pub struct OpenOptions<'a> {
    pub path: &'a str,
    pub role: Role,
    pub busy_timeout_ms: u32,
    /// Applied first, before anything reads the file.
    pub key: Option<&'a KeyConfig>,
    /// Databases attached on every connection: (schema name, file path).
    pub attach: &'a [(String, String)],
    /// Loaded on every connection once the key is proven (extensions.rs).
    pub extensions: &'a [Extension],
    /// Another process (e.g. Litestream) runs the checkpoints: this connection never does, not
    /// even on close (docs/replication.md).
    pub external_checkpoints: bool,
    /// What reading TEXT that is not valid UTF-8 does (step.rs).
    pub invalid_utf8: InvalidUtf8,
}

/// Opens a connection for `opts.role`: keyed first, then set up (see `configure`); the
/// writer's open also clears what an interrupted rekey left behind.
pub fn open(opts: &OpenOptions) -> DbResult<Connection> {
    let flags = ffi::SQLITE_OPEN_NOMUTEX
        | ffi::SQLITE_OPEN_EXRESCODE
        | match opts.role {
            Role::Writer => ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_CREATE,
            Role::Reader => ffi::SQLITE_OPEN_READONLY,
        };
    let (mut conn, rc) = Connection::open(opts.path, flags, opts.busy_timeout_ms)?;
    conn.set_invalid_utf8(opts.invalid_utf8);
    if rc != ffi::SQLITE_OK {
        let err = conn.last_error();
        return Err(DbError { message: format!("cannot open '{}': {}", opts.path, err.message), ..err });
    }
    // Until the first read proves the key, closing must not checkpoint: a connection with a
    // wrong (or missing) key would copy a leftover WAL into the database file through the
    // wrong cipher. Turned back on once the open succeeded.
    conn.checkpoint_on_close(false);
    if let Some(key) = opts.key {
        encryption::key_connection(conn.raw(), key)?;
    }
    configure(&conn, opts).map_err(|e| encryption::explain_open_error(e, opts.key.is_some()))?;
    conn.checkpoint_on_close(!opts.external_checkpoints);
    if opts.role == Role::Writer {
        encryption::remove_rekey_leftovers(opts.path);
    }
    Ok(conn)
}

/// The settings every connection gets (ARCHITECTURE.md "Opening"), and WAL on the writer.
fn configure(conn: &Connection, opts: &OpenOptions) -> DbResult<()> {
    // SAFETY: db is open; these dbconfig ops take (int, int*).
    unsafe {
        ffi::sqlite3_db_config(conn.raw(), ffi::SQLITE_DBCONFIG_DEFENSIVE, 1 as c_int, ptr::null_mut::<c_int>());
        ffi::sqlite3_db_config(conn.raw(), ffi::SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0 as c_int, ptr::null_mut::<c_int>());
        ffi::sqlite3_db_config(
            conn.raw(),
            ffi::SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION,
            0 as c_int,
            ptr::null_mut::<c_int>(),
        );
        ffi::sqlite3_busy_timeout(conn.raw(), opts.busy_timeout_ms.min(i32::MAX as u32) as c_int);
    }
    // A forced read: a file that is not a database (or a wrong key) fails here,
    // before anything could write to it.
    conn.exec("SELECT count(*) FROM sqlite_schema")?;
    extensions::load_all(conn, opts.extensions)?;
    conn.exec("PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -8192")?;
    let checkpoint_pages = if opts.external_checkpoints { 0 } else { WAL_CHECKPOINT_PAGES };
    conn.exec(&format!("PRAGMA wal_autocheckpoint = {checkpoint_pages}"))?;
    match opts.role {
        Role::Writer => {
            let mode = conn.query_text("PRAGMA journal_mode = WAL")?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(DbError::new(
                    "ERR_WAL_UNAVAILABLE",
                    format!("'{}' could not be switched to WAL mode (journal_mode is '{mode}')", opts.path),
                ));
            }
            // Checkpoint policy (experiments/012, ARCHITECTURE.md "Checkpoints"): the writer runs
            // a PASSIVE checkpoint when a commit leaves the WAL above WAL_CHECKPOINT_PAGES (set
            // above; 0 with external checkpoints), and truncates the WAL file to
            // JOURNAL_SIZE_LIMIT when it next starts over after a complete checkpoint.
            conn.exec(&format!("PRAGMA synchronous = NORMAL; PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}"))?;
            // A read in WAL mode builds the WAL index (recovering a leftover WAL if any)
            // before the readers open, so they never meet SQLITE_BUSY_RECOVERY from us.
            conn.exec("SELECT count(*) FROM sqlite_schema")?;
        }
        Role::Reader => {}
    }
    attach(conn, opts)
}

/// Attaches `opts.attach` (the same on every connection, so live queries and reads see the
/// same schemas wherever they run). The writer creates each file and puts it in WAL mode
/// with its own settings; readers attach read-only (their connection is). An attached
/// database uses the main database's key (SQLite3 Multiple Ciphers' rule for ATTACH
/// without KEY).
fn attach(conn: &Connection, opts: &OpenOptions) -> DbResult<()> {
    for (name, path) in opts.attach {
        let schema = format!("\"{}\"", name.replace('"', "\"\""));
        conn.exec(&format!("ATTACH DATABASE '{}' AS {schema}", path.replace('\'', "''")))
            .map_err(|e| DbError { message: format!("cannot attach '{path}' as {name}: {}", e.message), ..e })?;
        if opts.role == Role::Writer {
            let mode = conn.query_text(&format!("PRAGMA {schema}.journal_mode = WAL"))?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(DbError::new(
                    "ERR_WAL_UNAVAILABLE",
                    format!("attached '{path}' could not be switched to WAL mode (journal_mode is '{mode}')"),
                ));
            }
            conn.exec(&format!(
                "PRAGMA {schema}.synchronous = NORMAL; PRAGMA {schema}.journal_size_limit = {JOURNAL_SIZE_LIMIT}"
            ))?;
        }
    }
    Ok(())
}
