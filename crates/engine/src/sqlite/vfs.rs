//! Opening through a VFS other than the default (`Database.open(path, { vfs })`), and loading
//! the extension that registers one (`Database.loadExtension`): once for the whole process,
//! before any connection opens through it, since SQLite picks a connection's VFS when it opens
//! and a VFS is registered process-wide (docs/replication.md "Litestream's VFS").

use std::collections::HashSet;
use std::ffi::CString;
use std::sync::Mutex;

use sqlite3mc_sys as ffi;

use super::connection::Connection;
use super::extensions::{self, Extension};
use crate::error::{code, DbError, DbResult};

/// The (path, entry point) pairs loaded process-wide so far: each loads once.
type Loaded = HashSet<(String, Option<String>)>;
static LOADED: Mutex<Option<Loaded>> = Mutex::new(None);

/// Loads `extension` once for the process, on a private connection that is never closed:
/// closing it would unload a library that did not ask to stay loaded while the VFS it
/// registered is still in use. Loading the same path and entry point again does nothing.
pub fn load_process_wide(extension: &Extension) -> DbResult<()> {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    let key = (extension.path.clone(), extension.entry_point.clone());
    if loaded.as_ref().is_some_and(|l| l.contains(&key)) {
        return Ok(());
    }
    let flags = ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_EXRESCODE;
    let (conn, rc) = Connection::open(":memory:", flags, 0)?;
    if rc != ffi::SQLITE_OK {
        return Err(conn.last_error());
    }
    pin(&extension.path);
    extensions::load_all(&conn, std::slice::from_ref(extension))?;
    std::mem::forget(conn);
    loaded.get_or_insert_with(HashSet::new).insert(key);
    Ok(())
}

/// Opens the library once more, never to be unloaded: when SQLite's load then fails (a wrong
/// entry point) it closes its handle, and a library that started threads when it was opened (a
/// Go runtime: Litestream's) would be unmapped under them and crash the process. A path that
/// does not open as it is given is left to SQLite, which also tries it with the suffix and
/// reports the failure.
#[cfg(unix)]
fn pin(path: &str) {
    if let Ok(c_path) = CString::new(path) {
        // SAFETY: a valid C string; the handle is deliberately never closed.
        unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NODELETE) };
    }
}

#[cfg(not(unix))]
fn pin(_path: &str) {}

/// The VFS named `name`, as a C string for `sqlite3_open_v2`; `ERR_VFS_NOT_FOUND` naming it
/// when no VFS of that name is registered in this process.
pub fn find(name: &str) -> DbResult<CString> {
    let missing = || {
        DbError::new(
            code::ERR_VFS_NOT_FOUND,
            format!(
                "no VFS named '{name}' is registered in this process: load the extension that registers it \
                 with Database.loadExtension() before opening"
            ),
        )
    };
    let c_name = CString::new(name).map_err(|_| missing())?;
    // SAFETY: a valid C string; sqlite3_vfs_find only reads the registry.
    if unsafe { ffi::sqlite3_vfs_find(c_name.as_ptr()) }.is_null() {
        return Err(missing());
    }
    Ok(c_name)
}

#[cfg(test)]
mod tests {
    use super::{find, load_process_wide};
    use crate::sqlite::extensions::Extension;

    #[test]
    fn a_library_that_does_not_load_is_an_extension_error_naming_it() {
        let e = load_process_wide(&Extension { path: "/no/such/library.so".into(), entry_point: None }).unwrap_err();
        assert_eq!(e.code, crate::error::code::ERR_EXTENSION);
        assert!(e.message.contains("'/no/such/library.so'"), "{}", e.message);
    }

    #[test]
    fn a_registered_vfs_is_found_and_an_unknown_one_is_named() {
        assert!(find("unix").is_ok());
        let e = find("no-such-vfs").unwrap_err();
        assert_eq!(e.code, crate::error::code::ERR_VFS_NOT_FOUND);
        assert!(e.message.contains("'no-such-vfs'"), "{}", e.message);
    }
}
