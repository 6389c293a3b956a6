//! Binds parameters from the one buffer JS packs per call (the original's experiment 109:
//! one buffer, no per-value objects crossing the boundary).
//!
//! Layout, little-endian, one parameter set:
//!   u8 kind (0 none, 1 positional, 2 named), u32 count, then `count` values, each
//!   [named only: u32 name length, name bytes] u8 tag, payload:
//!   0 null · 1 int64 (8) · 2 float64 (8) · 3 text (u32 length, UTF-8) · 4 blob (u32 length, bytes)
//! JS has already type-checked every value; this side checks the shape against the statement.

use std::os::raw::c_int;

use sqlite3mc_sys as ffi;

use crate::error::{DbError, DbResult};
use crate::sqlite::statement_cache::Statement;

const NONE: u8 = 0;
const POSITIONAL: u8 = 1;
const NAMED: u8 = 2;

pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn take(&mut self, n: usize) -> DbResult<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or_else(malformed)?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    pub fn u8(&mut self) -> DbResult<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn u32(&mut self) -> DbResult<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }

    fn u64(&mut self) -> DbResult<[u8; 8]> {
        Ok(self.take(8)?.try_into().unwrap())
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// True when the next parameter set has no values.
    pub fn peek_is_empty_set(&self) -> bool {
        self.buf.get(self.pos).is_none_or(|&k| k == NONE)
            || self.buf.get(self.pos + 1..self.pos + 5).is_some_and(|c| c == [0, 0, 0, 0])
    }
}

fn malformed() -> DbError {
    DbError::new("ERR_INTERNAL", "malformed parameter buffer")
}

enum Value<'a> {
    Null,
    Int(i64),
    Float(f64),
    Text(&'a [u8]),
    Blob(&'a [u8]),
}

fn read_value<'a>(r: &mut Reader<'a>) -> DbResult<Value<'a>> {
    Ok(match r.u8()? {
        0 => Value::Null,
        1 => Value::Int(i64::from_le_bytes(r.u64()?)),
        2 => Value::Float(f64::from_le_bytes(r.u64()?)),
        3 => {
            let n = r.u32()? as usize;
            Value::Text(r.take(n)?)
        }
        4 => {
            let n = r.u32()? as usize;
            Value::Blob(r.take(n)?)
        }
        _ => return Err(malformed()),
    })
}

/// Binds one parameter set from `r` to `stmt`. Text and blob bytes are bound without a copy
/// (SQLITE_STATIC): the caller keeps the buffer alive until the statement is reset and its
/// bindings cleared.
pub fn bind(stmt: &Statement, r: &mut Reader) -> DbResult<()> {
    bind_with(stmt, r, &mut Vec::new())
}

/// `bind` with a caller-owned scratch for named parameters, so a batch binding thousands of
/// sets allocates it once.
pub fn bind_with(stmt: &Statement, r: &mut Reader, bound: &mut Vec<bool>) -> DbResult<()> {
    let expected = stmt.param_names.len();
    let kind = if r.is_empty() { NONE } else { r.u8()? };
    let count = if kind == NONE { 0 } else { r.u32()? as usize };
    match kind {
        NONE | POSITIONAL => {
            if count != expected {
                return Err(DbError::new(
                    "ERR_PARAMETER_COUNT",
                    format!(
                        "the statement takes {expected} parameter{}, {count} {} given",
                        if expected == 1 { "" } else { "s" },
                        if count == 1 { "was" } else { "were" }
                    ),
                ));
            }
            for i in 0..count {
                let v = read_value(r)?;
                bind_value(stmt, i as c_int + 1, v)?;
            }
        }
        NAMED => {
            bound.clear();
            bound.resize(expected, false);
            for _ in 0..count {
                let len = r.u32()? as usize;
                let name = r.take(len)?;
                let v = read_value(r)?;
                let index = stmt
                    .param_names
                    .iter()
                    .position(|n| n.as_deref().map(str::as_bytes) == Some(name))
                    .ok_or_else(|| {
                        let name = String::from_utf8_lossy(name);
                        DbError::new(
                            "ERR_PARAMETER_NAME",
                            format!("the statement has no parameter named '{name}' (as :{name}, @{name} or ${name})"),
                        )
                    })?;
                bound[index] = true;
                bind_value(stmt, index as c_int + 1, v)?;
            }
            if let Some(missing) = bound.iter().position(|b| !b) {
                return Err(match &stmt.param_names[missing] {
                    Some(name) => {
                        DbError::new("ERR_PARAMETER_NAME", format!("missing a value for the named parameter '{name}'"))
                    }
                    None => DbError::new(
                        "ERR_PARAMETER_NAME",
                        format!(
                            "parameter {} is positional (?); pass the parameters as an array, not an object",
                            missing + 1
                        ),
                    ),
                });
            }
        }
        _ => return Err(malformed()),
    }
    Ok(())
}

fn bind_value(stmt: &Statement, index: c_int, value: Value) -> DbResult<()> {
    let s = stmt.raw;
    // SAFETY: s is a valid statement; text/blob pointers stay valid while the statement runs
    // (see `bind`); lengths are exact.
    let rc = unsafe {
        match value {
            Value::Null => ffi::sqlite3_bind_null(s, index),
            Value::Int(v) => ffi::sqlite3_bind_int64(s, index, v),
            Value::Float(v) => ffi::sqlite3_bind_double(s, index, v),
            Value::Text(b) => {
                ffi::sqlite3_bind_text64(s, index, b.as_ptr() as _, b.len() as u64, None, ffi::SQLITE_UTF8)
            }
            // A zero-length blob with a null pointer would bind NULL: use a dangling non-null one.
            Value::Blob(b) => ffi::sqlite3_bind_blob64(s, index, b.as_ptr() as _, b.len() as u64, None),
        }
    };
    if rc != ffi::SQLITE_OK {
        return Err(DbError::sqlite(rc, format!("cannot bind parameter {index}")));
    }
    Ok(())
}
