//! Encryption at rest (SQLite3 Multiple Ciphers): keying a connection, and `rekey`.
//!
//! Key material lives here only: a `KeyConfig` holds the passphrase (or `raw:` key bytes) in
//! a buffer zeroed on drop, and is shared by `Arc` between the connections that need it, so it
//! is wiped once the last thread of a closed database lets go of it. Keys reach SQLite through
//! `sqlite3_key_v2` / `sqlite3_rekey_v2`, never through SQL text.
//!
//! Rekey does not rewrite the live file in place. SQLite3 Multiple Ciphers refuses to encrypt
//! a plaintext database in WAL mode, and (reading its source) an in-place rekey in
//! rollback-journal mode is not crash-safe: it writes page 1 with a new KDF salt while the hot journal holds pages
//! encrypted under the old salt, so after a crash neither key derives the key the journal
//! needs. Instead the writer (readers parked, connections closed) copies the checkpointed file
//! to `<path>-rekey`, re-encrypts that private copy, checks it, and renames it over the
//! database: the only change to the live path is one atomic rename, so a crash leaves either
//! the old file (old key) or the new one (new key).

use std::ffi::{CStr, CString};
use std::os::raw::{c_int, c_void};
use std::path::Path;
use std::ptr;
use std::sync::Arc;

use sqlite3mc_sys as ffi;
use zeroize::Zeroizing;

use super::connection::Connection;
use crate::error::{code, DbError, DbResult};

/// A cipher, its parameters and the key, as `Database.open` / `rekey` validated them.
pub struct KeyConfig {
    cipher: CString,
    /// sqlite3mc parameter names and values, applied in order (SQLCipher's `legacy` first:
    /// it resets the other parameters to that version's defaults).
    params: Vec<(CString, c_int)>,
    /// The passphrase bytes, or `raw:` followed by the key bytes (sqlite3mc's raw-key form).
    key: Zeroizing<Vec<u8>>,
}

impl KeyConfig {
    /// `None` for an empty key (no encryption).
    pub fn new(cipher: &str, names: Vec<String>, values: Vec<i32>, key: &[u8]) -> DbResult<Option<Arc<KeyConfig>>> {
        if key.is_empty() {
            return Ok(None);
        }
        let invalid = || DbError::new(code::ERR_INVALID_ARG_VALUE, "invalid cipher settings");
        if names.len() != values.len() {
            return Err(invalid());
        }
        let cipher = CString::new(cipher).map_err(|_| invalid())?;
        // SAFETY: a valid C string; sqlite3mc only reads it.
        if unsafe { ffi::sqlite3mc_cipher_index(cipher.as_ptr()) } < 0 {
            return Err(invalid());
        }
        let params = names
            .into_iter()
            .zip(values)
            .map(|(n, v)| Ok((CString::new(n).map_err(|_| invalid())?, v)))
            .collect::<DbResult<Vec<_>>>()?;
        Ok(Some(Arc::new(KeyConfig { cipher, params, key: Zeroizing::new(key.to_vec()) })))
    }

    /// Makes this the cipher (with its parameters) that `sqlite3_key_v2` / `sqlite3_rekey_v2`
    /// use on `db` next. Per connection: sqlite3mc keeps these settings per handle.
    fn select_cipher(&self, db: *mut ffi::sqlite3) -> DbResult<()> {
        // SAFETY: db is an open handle owned by the calling thread; the strings are valid.
        unsafe {
            let index = ffi::sqlite3mc_cipher_index(self.cipher.as_ptr());
            if index < 0 || ffi::sqlite3mc_config(db, c"cipher".as_ptr(), index) != index {
                return Err(DbError::new(code::ERR_ENCRYPTION_CONFIG, "the cipher could not be selected"));
            }
            for (name, value) in &self.params {
                if ffi::sqlite3mc_config_cipher(db, self.cipher.as_ptr(), name.as_ptr(), *value) != *value {
                    return Err(DbError::new(
                        code::ERR_ENCRYPTION_CONFIG,
                        format!("the cipher parameter '{}' was refused", name.to_string_lossy()),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The page size this cipher needs (its legacy page size), if it needs one.
    fn required_page_size(&self, db: *mut ffi::sqlite3) -> Option<i64> {
        // SAFETY: as in select_cipher; a negative value reads the parameter.
        let (legacy, size) = unsafe {
            (
                ffi::sqlite3mc_config_cipher(db, self.cipher.as_ptr(), c"legacy".as_ptr(), -1),
                ffi::sqlite3mc_config_cipher(db, self.cipher.as_ptr(), c"legacy_page_size".as_ptr(), -1),
            )
        };
        (legacy > 0 && size > 0).then_some(size as i64)
    }

    /// Whether this cipher leaves the start of page 1 in plaintext (`plaintextHeaderSize`).
    fn has_plaintext_header(&self) -> bool {
        self.params.iter().any(|(name, value)| name.as_bytes() == b"plaintext_header_size" && *value > 0)
    }

    fn key_len(&self) -> c_int {
        self.key.len() as c_int
    }
}

/// Keys a freshly opened connection: the first thing done with it, before any read.
pub fn key_connection(db: *mut ffi::sqlite3, config: &KeyConfig) -> DbResult<()> {
    config.select_cipher(db)?;
    // SAFETY: valid handle; the key buffer outlives the call (sqlite3mc derives and copies).
    let rc =
        unsafe { ffi::sqlite3_key_v2(db, c"main".as_ptr(), config.key.as_ptr() as *const c_void, config.key_len()) };
    if rc != ffi::SQLITE_OK {
        return Err(DbError::sqlite(rc, format!("setting the encryption key failed: {}", errmsg(db))));
    }
    Ok(())
}

/// The open's first read (of page 1 and the schema) failed. When page 1's header is on disk
/// in plaintext, a mismatch of key or cipher settings reaches SQLite as garbage rather than as
/// a failed MAC, and SQLite's code then depends on the garbage's bytes (`SQLITE_ERROR`
/// "unsupported file format", `SQLITE_CORRUPT`, …). Such a failure is made the `SQLITE_NOTADB`
/// a mismatch gives otherwise, saying why, and `explain_open_error` explains it as it does that
/// one (`ERR_ENCRYPTION_KEY` with a key):
/// - with a key whose cipher keeps no plaintext header, a plaintext header on disk means the
///   file was written without encryption or with `plaintextHeaderSize`;
/// - without a key, a plaintext header whose pages keep reserved bytes is what an encrypted
///   database with a plaintext header looks like;
/// - with a key whose cipher keeps a plaintext header, "unsupported file format" (or, for about
///   1 file in 50, `SQLITE_CORRUPT`) means the
///   header fields read past the plaintext part were decrypted into garbage: a
///   `plaintextHeaderSize` other than the one the file was written with (issue 43: 16 for a file
///   written with 32 was a bare `SQLITE_ERROR`, after the real open had made `-wal` and `-shm`).
///
/// Any other failure is returned as it is. `path` is `None` when the database is not a local
/// file (another VFS).
pub fn explain_first_read_error(error: DbError, path: Option<&str>, key: Option<&KeyConfig>) -> DbError {
    if error.code == "SQLITE_NOTADB" {
        return error;
    }
    let Some(reserved) = path.and_then(plaintext_header_reserve) else {
        return error;
    };
    let why = match key {
        Some(key) if !key.has_plaintext_header() => {
            "its header is plaintext, so it was written without encryption or with cipher plaintextHeaderSize"
                .to_string()
        }
        Some(key)
            if key.has_plaintext_header()
                && (error.message.contains("unsupported file format") || error.code.starts_with("SQLITE_CORRUPT")) =>
        {
            "its header's fields do not read as a database's under this plaintextHeaderSize, so it was written with \
             other cipher settings"
                .to_string()
        }
        None if reserved > 0 => format!(
            "its header is plaintext but its pages keep {reserved} reserved bytes, as an encrypted database's with a \
             plaintext header do"
        ),
        _ => return error,
    };
    DbError {
        code: "SQLITE_NOTADB".into(),
        message: format!("file is not a database: {why} (SQLite read: {})", error.message),
        ..error
    }
}

/// The reserved bytes per page that `path`'s header names, when the file starts with SQLite's
/// plaintext header (`None` when it does not, or cannot be read).
pub(crate) fn plaintext_header_reserve(path: &str) -> Option<u8> {
    use std::io::Read;
    if path.is_empty() || path == ":memory:" {
        return None;
    }
    let mut header = [0u8; 21];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut header)).ok()?;
    (&header[..16] == b"SQLite format 3\0").then_some(header[20])
}

/// The open's first read failed: say what a key has to do with it. SQLite's own message for a
/// wrong key is "file is not a database"; the key itself is never part of any message.
pub fn explain_open_error(error: DbError, keyed: bool) -> DbError {
    if error.code != "SQLITE_NOTADB" {
        return error;
    }
    if keyed {
        DbError::new(
            code::ERR_ENCRYPTION_KEY,
            format!(
                "the encryption key or cipher settings do not match this database, or it is not a database ({})",
                error.message
            ),
        )
    } else {
        DbError {
            message: format!("{} (if it is encrypted, open it with its encryptionKey and cipher)", error.message),
            ..error
        }
    }
}

fn errmsg(db: *mut ffi::sqlite3) -> String {
    // SAFETY: valid handle; the message is copied at once.
    unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(db)).to_string_lossy().into_owned() }
}

/// The private copy a rekey works on, next to the database.
pub fn rekey_path(path: &str) -> String {
    format!("{path}-rekey")
}

/// Removes what an interrupted rekey left behind (the copy and its journal). Never the database.
pub fn remove_rekey_leftovers(path: &str) {
    let tmp = rekey_path(path);
    let _ = std::fs::remove_file(format!("{tmp}-journal"));
    let _ = std::fs::remove_file(&tmp);
}

/// A connection to the rekey copy: plain calls, their errors worded as the rekey's.
struct Scratch(Connection);

impl Scratch {
    fn open(path: &str) -> DbResult<Scratch> {
        let flags = ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_NOMUTEX | ffi::SQLITE_OPEN_EXRESCODE;
        let (conn, rc) = Connection::open(path, flags, 0)?;
        let scratch = Scratch(conn);
        if rc != ffi::SQLITE_OK {
            return Err(scratch.error("opening the rekey copy"));
        }
        Ok(scratch)
    }

    fn db(&self) -> *mut ffi::sqlite3 {
        self.0.raw()
    }

    fn exec(&self, sql: &str) -> DbResult<()> {
        self.0.exec(sql).map_err(|_| self.error(sql))
    }

    /// The first column of the first row, as text.
    fn text(&self, sql: &str) -> DbResult<String> {
        self.0.query_text(sql).map_err(|_| self.error(sql))
    }

    /// The connection's current error (what just failed left it there), as the rekey's.
    fn error(&self, what: &str) -> DbError {
        let error = self.0.sqlite_error();
        if self.db().is_null() {
            return error; // out of memory
        }
        DbError { message: format!("rekey ({what}): {}", error.message), ..error }
    }
}

/// Opens the copy with `key`, failing if the key does not read it.
fn open_keyed(path: &str, key: Option<&KeyConfig>) -> DbResult<Scratch> {
    let scratch = Scratch::open(path)?;
    if let Some(key) = key {
        key_connection(scratch.db(), key)?;
    }
    scratch.text("SELECT count(*) FROM sqlite_schema")?;
    Ok(scratch)
}

/// Builds `<path>-rekey`: a copy of the database (already checkpointed, in rollback-journal
/// mode, with writes held off by the caller) re-encrypted from `old` to `new`, verified, and
/// synced to disk. The database itself is only read.
pub fn build_rekeyed_copy(path: &str, old: Option<&KeyConfig>, new: Option<&KeyConfig>) -> DbResult<String> {
    let tmp = rekey_path(path);
    remove_rekey_leftovers(path);
    let io = |what: &str, e: std::io::Error| DbError::new("SQLITE_IOERR", format!("rekey: {what}: {e}"));
    std::fs::copy(path, &tmp).map_err(|e| io("copying the database", e))?;
    let result = (|| {
        {
            let scratch = open_keyed(&tmp, old)?;
            let mode = scratch.text("PRAGMA journal_mode = DELETE")?;
            if !mode.eq_ignore_ascii_case("delete") {
                return Err(DbError::new(code::ERR_REKEY, format!("rekey: the copy stayed in journal_mode '{mode}'")));
            }
            match new {
                Some(new) => {
                    new.select_cipher(scratch.db())?;
                    // A plaintext database can take the page size a legacy cipher needs; an
                    // encrypted one cannot change it (sqlite3mc refuses, and says so below).
                    if let (None, Some(size)) = (old, new.required_page_size(scratch.db())) {
                        if scratch.text("PRAGMA page_size")?.parse::<i64>().ok() != Some(size) {
                            scratch.exec(&format!("PRAGMA page_size = {size}; VACUUM"))?;
                        }
                    }
                    // SAFETY: valid handle; the key buffer outlives the call.
                    let rc = unsafe {
                        ffi::sqlite3_rekey_v2(
                            scratch.db(),
                            c"main".as_ptr(),
                            new.key.as_ptr() as *const c_void,
                            new.key_len(),
                        )
                    };
                    if rc != ffi::SQLITE_OK {
                        return Err(scratch.error("re-encrypting"));
                    }
                }
                None => {
                    // SAFETY: valid handle; a null key decrypts.
                    if unsafe { ffi::sqlite3_rekey_v2(scratch.db(), c"main".as_ptr(), ptr::null(), 0) }
                        != ffi::SQLITE_OK
                    {
                        return Err(scratch.error("decrypting"));
                    }
                }
            }
        }
        // Read every page back with the new key before the copy may replace the database.
        let check = open_keyed(&tmp, new)?.text("PRAGMA quick_check")?;
        if check != "ok" {
            return Err(DbError::new(
                code::ERR_REKEY,
                format!("rekey: the re-encrypted copy failed its check: {check}"),
            ));
        }
        std::fs::File::open(&tmp).and_then(|f| f.sync_all()).map_err(|e| io("syncing the copy", e))?;
        Ok(())
    })();
    match result {
        Ok(()) => Ok(tmp),
        Err(e) => {
            remove_rekey_leftovers(path);
            Err(e)
        }
    }
}

/// Replaces the database with the rekeyed copy: one atomic rename, then the directory synced
/// so the rename itself is durable.
pub fn swap_in(path: &str, tmp: &str) -> DbResult<()> {
    let io = |what: &str, e: std::io::Error| DbError::new("SQLITE_IOERR", format!("rekey: {what}: {e}"));
    std::fs::rename(tmp, path).map_err(|e| io("replacing the database with its rekeyed copy", e))?;
    let dir = Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
