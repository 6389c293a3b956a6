//! Opening a connection the way the pool uses it: the key first, then the settings, WAL and
//! the checkpoint policy on the writer, and the attached databases.

use std::os::raw::c_int;
use std::path::Path;
use std::ptr;

use sqlite3mc_sys as ffi;

use super::connection::Connection;
use super::connection::InvalidUtf8;
use super::encryption::{self, KeyConfig};
use super::extensions::{self, Extension};
use super::vfs;
use crate::error::{code, DbError, DbResult};

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

/// When a commit reaches the disk (docs/api.md "Durability"): `PRAGMA synchronous` on every
/// connection and every attached schema. In WAL mode, `Normal` syncs the WAL only at
/// checkpoints, so an OS crash or power cut may lose the last commits; `Full` syncs it at every
/// commit.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Synchronous {
    #[default]
    Normal,
    Full,
}

impl Synchronous {
    /// The option's value as JavaScript gives it (`'normal'`, `'full'`).
    pub fn parse(value: &str) -> Option<Synchronous> {
        match value {
            "normal" => Some(Synchronous::Normal),
            "full" => Some(Synchronous::Full),
            _ => None,
        }
    }

    fn pragma(self) -> &'static str {
        match self {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        }
    }
}

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
    /// The pool's first connection: when a WAL is there, prove the key on the database file
    /// alone before opening for real (`probe_key`).
    pub lead: bool,
    /// Open through this VFS instead of the default (vfs.rs); the path is then read as a URI
    /// filename when it is one, so a `file:` path's query parameters reach the VFS.
    pub vfs: Option<&'a str>,
    /// `PRAGMA synchronous` of every schema of the connection.
    pub synchronous: Synchronous,
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
    let vfs = opts.vfs.map(vfs::find).transpose()?;
    let flags = if vfs.is_some() { flags | ffi::SQLITE_OPEN_URI } else { flags };
    // The probe reads the file through the default VFS: with another, there is no local file
    // to probe (and no key: the JS side refuses a key with a VFS).
    if opts.lead && vfs.is_none() {
        probe_key(opts).map_err(|e| encryption::explain_open_error(e, opts.key.is_some()))?;
    }
    let (mut conn, rc) = Connection::open_vfs(opts.path, flags, opts.busy_timeout_ms, vfs.as_deref())?;
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

/// Fails with `SQLITE_NOTADB` when the key (or its absence, or the cipher settings) cannot
/// read the database, touching no file.
///
/// A connection's first read opens a leftover WAL before it reads page 1 through the key: it
/// rebuilds the WAL index in `-shm` and takes a read mark there, and only then finds that the key
/// is wrong. So when a WAL is there, page 1 is read first on a connection that opens the main
/// file as `immutable`: SQLite then takes no lock and never opens the WAL or `-shm`.
/// `PRAGMA schema_version` reads page 1 alone (the schema is not loaded), which is where a wrong
/// key fails. Without a WAL, the real open touches nothing before page 1 either, unless a key is
/// given for a file whose header is plaintext (`plaintextHeaderSize`, or a plaintext database):
/// SQLite reads there that the database is in WAL mode and creates the `-wal` and `-shm` before
/// the key fails on the rest of the page, which the header's fields alone do not reach. So such
/// a file is probed too, reading the schema (no WAL: the file holds every page); its key is raw
/// bytes, so the probe derives no key. Any other failure here (no file yet, a main file
/// mid-checkpoint) is left to the real open to report.
///
/// Page 1 of the file alone is not the whole story when a WAL is there: a power cut during a
/// checkpoint can leave it torn while its newest copy is in the WAL, where SQLite's recovery
/// finds it (issue 43). So a key that page 1 of the file refuses is tried again on what
/// recovery gives (`probe_recovered`) before it is called wrong.
fn probe_key(opts: &OpenOptions) -> DbResult<()> {
    if opts.path.is_empty() || opts.path == ":memory:" {
        return Ok(());
    }
    let wal = Path::new(&format!("{}-wal", opts.path)).exists();
    let probe = if wal {
        "PRAGMA schema_version"
    } else if opts.key.is_some() && encryption::plaintext_header_reserve(opts.path).is_some() {
        "SELECT count(*) FROM sqlite_schema"
    } else {
        return Ok(());
    };
    // Without locks, page 1 read while another process checkpoints may be torn: a NOTADB is
    // believed only if a second read gives it too.
    let mut tries = 0;
    loop {
        tries += 1;
        match probe_page_one(opts, probe) {
            Err(e) if e.code == "SQLITE_NOTADB" && tries < 2 => continue,
            Err(e) if e.code == "SQLITE_NOTADB" => {
                return match opts.key {
                    Some(key) if wal && probe_recovered(opts.path, key) => Ok(()),
                    _ => Err(e),
                };
            }
            _ => return Ok(()),
        }
    }
}

/// The largest page SQLite writes: the file's first this many bytes hold page 1.
const MAX_PAGE_SIZE: u64 = 65536;

/// Whether `key` reads page 1 as SQLite's recovery gives it: from the WAL when its newest copy is
/// there, else from the file. Recovery writes the WAL index (`-shm`), which a wrong key must not
/// touch, so it runs on a private copy: the file's first page and the WAL, in a directory of
/// the process's own (mode 0700: the WAL of a database keeping a plaintext header holds it in
/// plaintext), removed after. Only a key the file's page 1 refused comes here (after a power
/// cut, or a wrong key), so copying the WAL costs no healthy open. Any failure to make the copy
/// is a `false`: the key stays refused, and the database untouched.
fn probe_recovered(path: &str, key: &KeyConfig) -> bool {
    use std::io::Read;
    static COPIES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("resqlite-keycheck-{}-{n}", std::process::id()));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    if builder.create(&dir).is_err() {
        return false;
    }
    let copy = dir.join("db");
    let read = (|| {
        let copy = copy.to_str()?;
        let mut page_one = Vec::new();
        std::fs::File::open(path).ok()?.take(MAX_PAGE_SIZE).read_to_end(&mut page_one).ok()?;
        std::fs::write(copy, page_one).ok()?;
        std::fs::copy(format!("{path}-wal"), format!("{copy}-wal")).ok()?;
        let flags = ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_NOMUTEX | ffi::SQLITE_OPEN_EXRESCODE;
        let (conn, rc) = Connection::open(copy, flags, 0).ok()?;
        conn.checkpoint_on_close(false);
        if rc != ffi::SQLITE_OK {
            return None;
        }
        encryption::key_connection(conn.raw(), key).ok()?;
        conn.query_int("PRAGMA schema_version").ok()
    })();
    let _ = std::fs::remove_dir_all(&dir);
    read.is_some()
}

fn probe_page_one(opts: &OpenOptions, sql: &str) -> DbResult<()> {
    let flags =
        ffi::SQLITE_OPEN_READONLY | ffi::SQLITE_OPEN_URI | ffi::SQLITE_OPEN_NOMUTEX | ffi::SQLITE_OPEN_EXRESCODE;
    let (conn, rc) = Connection::open(&immutable_uri(opts.path), flags, 0)?;
    if rc != ffi::SQLITE_OK {
        return Ok(());
    }
    if let Some(key) = opts.key {
        encryption::key_connection(conn.raw(), key)?;
    }
    // A mismatch under a plaintext header is named as the real open's first read names it.
    conn.query_int(sql).map(|_| ()).map_err(|e| encryption::explain_first_read_error(e, Some(opts.path), opts.key))
}

/// `path` as a URI filename that opens it immutable (percent-encoding what a URI would read
/// as a query, a fragment or an escape).
fn immutable_uri(path: &str) -> String {
    let mut uri = String::from(if path.starts_with('/') { "file://" } else { "file:" });
    for c in path.chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// The `synchronous` level of every rollback-journal transaction the library runs itself: the
/// writer's switch to WAL at open, and its switch away for a rekey (threads/writer.rs
/// `leave_wal`). At NORMAL, SQLite syncs a journal's records and its header (the record count)
/// together, so a power cut can leave a hot journal whose count covers a torn record. SQLite's
/// own checksum would skip that record, but SQLite3 Multiple Ciphers decrypts it first, fails its
/// MAC and refuses the database as not a database (the power-loss test found it: 2 of 1,260
/// encrypted cuts at NORMAL). At FULL the journal is synced before its count is written.
pub const ROLLBACK_JOURNAL_SYNC: &str = "FULL";

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
    conn.exec("SELECT count(*) FROM sqlite_schema")
        .map_err(|e| encryption::explain_first_read_error(e, opts.vfs.is_none().then_some(opts.path), opts.key))?;
    extensions::load_all(conn, opts.extensions)?;
    // The writer switches to WAL at FULL and takes its level after: see `ROLLBACK_JOURNAL_SYNC`.
    let synchronous = match opts.role {
        Role::Writer => ROLLBACK_JOURNAL_SYNC,
        Role::Reader => opts.synchronous.pragma(),
    };
    conn.exec(&format!(
        "PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -8192; PRAGMA synchronous = {synchronous}"
    ))?;
    let checkpoint_pages = if opts.external_checkpoints { 0 } else { WAL_CHECKPOINT_PAGES };
    conn.exec(&format!("PRAGMA wal_autocheckpoint = {checkpoint_pages}"))?;
    match opts.role {
        Role::Writer => {
            let mode = conn.query_text("PRAGMA journal_mode = WAL")?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(DbError::new(
                    code::ERR_WAL_UNAVAILABLE,
                    format!("'{}' could not be switched to WAL mode (journal_mode is '{mode}')", opts.path),
                ));
            }
            // Checkpoint policy (experiments/012, ARCHITECTURE.md "Checkpoints"): the writer runs
            // a PASSIVE checkpoint when a commit leaves the WAL above WAL_CHECKPOINT_PAGES (set
            // above; 0 with external checkpoints), and truncates the WAL file to
            // JOURNAL_SIZE_LIMIT when it next starts over after a complete checkpoint.
            conn.exec(&format!(
                "PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}; PRAGMA synchronous = {}",
                opts.synchronous.pragma()
            ))?;
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
        let schema = quoted_schema(name);
        conn.exec(&format!("ATTACH DATABASE '{}' AS {schema}", path.replace('\'', "''")))
            .map_err(|e| DbError { message: format!("cannot attach '{path}' as {name}: {}", e.message), ..e })?;
        if opts.role == Role::Writer {
            let mode = conn.query_text(&format!("PRAGMA {schema}.journal_mode = WAL"))?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(DbError::new(
                    code::ERR_WAL_UNAVAILABLE,
                    format!("attached '{path}' could not be switched to WAL mode (journal_mode is '{mode}')"),
                ));
            }
            conn.exec(&format!("PRAGMA {schema}.journal_size_limit = {JOURNAL_SIZE_LIMIT}"))?;
        }
        conn.exec(&format!("PRAGMA {schema}.synchronous = {}", opts.synchronous.pragma()))?;
    }
    Ok(())
}

/// `PRAGMA synchronous` of each schema of `conn` (main, then `attach`'s), as a user's
/// `PRAGMA synchronous = …` may have left them: a connection that replaces this one (the
/// writer after a rekey) takes them on with `restore_synchronous`, so none is lost.
pub fn synchronous_levels(conn: &Connection, attach: &[(String, String)]) -> DbResult<Vec<(String, i64)>> {
    std::iter::once("main")
        .chain(attach.iter().map(|(name, _)| name.as_str()))
        .map(|name| {
            let schema = quoted_schema(name);
            Ok((schema.clone(), conn.query_int(&format!("PRAGMA {schema}.synchronous"))?))
        })
        .collect()
}

/// A schema name as SQL reads it in `PRAGMA <schema>.…` and `ATTACH … AS <schema>`.
fn quoted_schema(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Sets the levels `synchronous_levels` read.
pub fn restore_synchronous(conn: &Connection, levels: &[(String, i64)]) -> DbResult<()> {
    for (schema, level) in levels {
        conn.exec(&format!("PRAGMA {schema}.synchronous = {level}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::immutable_uri;

    #[test]
    fn an_immutable_uri_escapes_what_a_uri_would_read_otherwise() {
        assert_eq!(immutable_uri("/tmp/a.db"), "file:///tmp/a.db?immutable=1");
        assert_eq!(immutable_uri("rel/a.db"), "file:rel/a.db?immutable=1");
        assert_eq!(immutable_uri("//x/a%20b?c#d.db"), "file:////x/a%2520b%3fc%23d.db?immutable=1");
    }
}
