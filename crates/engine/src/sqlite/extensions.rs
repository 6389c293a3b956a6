//! Loading the extensions of `Database.open(path, { extensions })` on a connection while it
//! opens. Loading is switched on for the C call only and off again at once, so SQL's
//! `load_extension()` is never available.

use std::ffi::{CStr, CString};
use std::os::raw::c_int;
use std::ptr;

use sqlite3mc_sys as ffi;

use super::connection::Connection;
use crate::error::{code, DbError, DbResult};

/// An extension library and its entry point (`None`: SQLite derives it from the file name).
pub struct Extension {
    pub path: String,
    pub entry_point: Option<String>,
}

/// Loads every extension on `conn`, in order; the first that fails is the error, naming its file.
pub fn load_all(conn: &Connection, extensions: &[Extension]) -> DbResult<()> {
    if extensions.is_empty() {
        return Ok(());
    }
    set_loading(conn, true);
    let result = extensions.iter().try_for_each(|e| load(conn, e));
    set_loading(conn, false);
    result
}

fn set_loading(conn: &Connection, on: bool) {
    // SAFETY: db is open; this dbconfig op takes (int, int*). It enables the C API only, never
    // the SQL function.
    unsafe {
        ffi::sqlite3_db_config(
            conn.raw(),
            ffi::SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION,
            on as c_int,
            ptr::null_mut::<c_int>(),
        );
    }
}

fn load(conn: &Connection, extension: &Extension) -> DbResult<()> {
    let fail = |message: &str| {
        DbError::new(code::ERR_EXTENSION, format!("cannot load extension '{}': {message}", extension.path))
    };
    let path = CString::new(extension.path.as_str()).map_err(|_| fail("the path contains a NUL character"))?;
    let entry = extension
        .entry_point
        .as_deref()
        .map(CString::new)
        .transpose()
        .map_err(|_| fail("the entry point contains a NUL character"))?;
    let mut errmsg = ptr::null_mut();
    // SAFETY: valid C strings (or null for the entry point); errmsg is freed below.
    let rc = unsafe {
        ffi::sqlite3_load_extension(
            conn.raw(),
            path.as_ptr(),
            entry.as_ref().map_or(ptr::null(), |e| e.as_ptr()),
            &mut errmsg,
        )
    };
    if rc == ffi::SQLITE_OK {
        return Ok(());
    }
    let message = if errmsg.is_null() {
        conn.sqlite_error().message
    } else {
        // SAFETY: SQLite's NUL-terminated message, copied, then freed once.
        unsafe {
            let text = CStr::from_ptr(errmsg).to_string_lossy().into_owned();
            ffi::sqlite3_free(errmsg as *mut _);
            text
        }
    };
    Err(fail(&message))
}
