//! Stepping a bound statement: the loop both result encoders share.

use std::borrow::Cow;
use std::ffi::CStr;
use std::os::raw::c_int;

use sqlite3mc_sys as ffi;

use crate::error::{code, DbError, DbResult};
use crate::sqlite::connection::{Connection, InvalidUtf8};

/// One cell, borrowed from SQLite until the next step.
pub enum Cell<'a> {
    Null,
    Int(i64),
    Float(f64),
    /// The text (owned only when invalid UTF-8 was replaced), and whether all of it is ASCII.
    Text(Cow<'a, str>, bool),
    Blob(&'a [u8]),
}

pub fn column_names(stmt: *mut ffi::sqlite3_stmt) -> Vec<String> {
    // SAFETY: stmt is a valid prepared statement; names are copied at once.
    unsafe {
        (0..ffi::sqlite3_column_count(stmt))
            .map(|i| {
                let p = ffi::sqlite3_column_name(stmt, i);
                if p.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(p).to_string_lossy().into_owned()
                }
            })
            .collect()
    }
}

/// Reads column `i` of the current row. TEXT that is not valid UTF-8 is an error, or with
/// `InvalidUtf8::Replace` a copy with U+FFFD in place of each invalid sequence.
///
/// # Safety
/// `stmt` must be positioned on a row (the last step returned SQLITE_ROW).
pub unsafe fn cell<'a>(
    stmt: *mut ffi::sqlite3_stmt,
    i: c_int,
    names: &[String],
    row: usize,
    invalid_utf8: InvalidUtf8,
) -> DbResult<Cell<'a>> {
    // One sqlite3_column_value per cell, then the sqlite3_value_* accessors: each
    // sqlite3_column_* call repeats the column lookup and the (no-op) mutex enter/leave
    // (experiments/003). The value is unprotected, which is safe here: only this thread uses
    // the connection.
    let v = ffi::sqlite3_column_value(stmt, i);
    Ok(match ffi::sqlite3_value_type(v) {
        ffi::SQLITE_INTEGER => Cell::Int(ffi::sqlite3_value_int64(v)),
        ffi::SQLITE_FLOAT => Cell::Float(ffi::sqlite3_value_double(v)),
        ffi::SQLITE_TEXT => {
            let p = ffi::sqlite3_value_text(v);
            let n = ffi::sqlite3_value_bytes(v) as usize;
            let bytes = if p.is_null() { &[][..] } else { std::slice::from_raw_parts(p, n) };
            // ASCII (most text) needs no other check; then simdutf8's fast check; the standard
            // one only to locate an error.
            if bytes.is_ascii() {
                return Ok(Cell::Text(Cow::Borrowed(std::str::from_utf8_unchecked(bytes)), true));
            }
            if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
                return Ok(Cell::Text(Cow::Borrowed(text), false));
            }
            if invalid_utf8 == InvalidUtf8::Replace {
                return Ok(Cell::Text(Cow::Owned(String::from_utf8_lossy(bytes).into_owned()), false));
            }
            let text = std::str::from_utf8(bytes).map_err(|e| {
                DbError::new(
                    code::ERR_INVALID_UTF8,
                    format!(
                        "column '{}' of row {} holds TEXT that is not valid UTF-8 (at byte {}); \
                         read it as bytes with CAST({} AS BLOB), or open with invalidUtf8: 'replace'",
                        names[i as usize],
                        row + 1,
                        e.valid_up_to(),
                        names[i as usize]
                    ),
                )
            })?;
            Cell::Text(Cow::Borrowed(text), false)
        }
        ffi::SQLITE_BLOB => {
            let p = ffi::sqlite3_value_blob(v);
            let n = ffi::sqlite3_value_bytes(v) as usize;
            Cell::Blob(if p.is_null() { &[][..] } else { std::slice::from_raw_parts(p as *const u8, n) })
        }
        _ => Cell::Null,
    })
}

/// Steps `stmt` once: `true` on a row, `false` when done. Read column names only after the
/// first step: a schema change re-prepares the statement there, and may change its columns.
pub fn step(conn: &Connection, stmt: *mut ffi::sqlite3_stmt) -> DbResult<bool> {
    // SAFETY: stmt is valid and bound.
    match unsafe { ffi::sqlite3_step(stmt) } {
        ffi::SQLITE_ROW => Ok(true),
        ffi::SQLITE_DONE => Ok(false),
        _ => Err(conn.last_error()),
    }
}
