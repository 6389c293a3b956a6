//! Values crossing between SQLite and a JavaScript function, as they do for rows and
//! parameters: arguments become JS values (`argument`), and what the function returned comes
//! back as an `Outcome`, set as the call's result on the thread that runs the statement.

use std::ffi::CString;
use std::os::raw::c_void;
use std::ptr;

use napi::sys;
use sqlite3mc_sys as ffi;

use crate::js::args::{string_arg, uint8_array};
use crate::js::{self, MAX_SAFE};

/// What a call of a JavaScript function produced.
pub enum Outcome {
    Null,
    Integer(i64),
    Real(f64),
    Text(Vec<u8>),
    Blob(Vec<u8>),
    /// Nothing to return (an aggregate's step).
    Nothing,
    /// The statement fails with this message.
    Error(String),
}

impl Outcome {
    /// Sets the call's result.
    ///
    /// # Safety
    /// `ctx` is the context of the call being answered, on the thread running the statement.
    pub unsafe fn apply(self, ctx: *mut ffi::sqlite3_context) {
        match self {
            Outcome::Null | Outcome::Nothing => ffi::sqlite3_result_null(ctx),
            Outcome::Integer(i) => ffi::sqlite3_result_int64(ctx, i),
            Outcome::Real(f) => ffi::sqlite3_result_double(ctx, f),
            Outcome::Text(bytes) => ffi::sqlite3_result_text64(
                ctx,
                bytes.as_ptr() as _,
                bytes.len() as u64,
                ffi::sqlite_transient(),
                ffi::SQLITE_UTF8,
            ),
            Outcome::Blob(bytes) => ffi::sqlite3_result_blob64(
                ctx,
                if bytes.is_empty() { c"".as_ptr() as *const c_void } else { bytes.as_ptr() as *const c_void },
                bytes.len() as u64,
                ffi::sqlite_transient(),
            ),
            Outcome::Error(message) => {
                let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
                ffi::sqlite3_result_error(ctx, message.as_ptr(), -1);
            }
        }
    }
}

/// An argument as SQLite gave it: borrowed for a call made now, or copied (`Owned`) for an
/// aggregate's step kept to be handed over with others (callbacks.rs).
pub enum Arg<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(&'a [u8]),
    Blob(&'a [u8]),
}

/// An argument copied out of SQLite.
pub enum Owned {
    Null,
    Integer(i64),
    Real(f64),
    Text(Vec<u8>),
    Blob(Vec<u8>),
}

impl Owned {
    pub fn as_arg(&self) -> Arg<'_> {
        match self {
            Owned::Null => Arg::Null,
            Owned::Integer(i) => Arg::Integer(*i),
            Owned::Real(f) => Arg::Real(*f),
            Owned::Text(t) => Arg::Text(t),
            Owned::Blob(b) => Arg::Blob(b),
        }
    }
}

/// `value` as an `Arg`.
///
/// # Safety
/// `value` is a live argument; the borrow ends before SQLite may change or free it.
pub unsafe fn arg<'a>(value: *mut ffi::sqlite3_value) -> Arg<'a> {
    let bytes = |p: *const u8| {
        let len = ffi::sqlite3_value_bytes(value) as usize;
        if p.is_null() || len == 0 {
            &[][..]
        } else {
            std::slice::from_raw_parts(p, len)
        }
    };
    match ffi::sqlite3_value_type(value) {
        ffi::SQLITE_INTEGER => Arg::Integer(ffi::sqlite3_value_int64(value)),
        ffi::SQLITE_FLOAT => Arg::Real(ffi::sqlite3_value_double(value)),
        ffi::SQLITE_TEXT => Arg::Text(bytes(ffi::sqlite3_value_text(value))),
        ffi::SQLITE_BLOB => Arg::Blob(bytes(ffi::sqlite3_value_blob(value) as *const u8)),
        _ => Arg::Null,
    }
}

/// `value` copied.
///
/// # Safety
/// As `arg`.
pub unsafe fn owned(value: *mut ffi::sqlite3_value) -> Owned {
    match arg(value) {
        Arg::Null => Owned::Null,
        Arg::Integer(i) => Owned::Integer(i),
        Arg::Real(f) => Owned::Real(f),
        Arg::Text(t) => Owned::Text(t.to_vec()),
        Arg::Blob(b) => Owned::Blob(b.to_vec()),
    }
}

/// Argument `value` as a JS value: INTEGER as a number (a bigint with `safe_integers`; beyond
/// ±(2^53−1) without it, an error: no silent precision loss), REAL as a number, TEXT as a
/// string (not valid UTF-8: an error, or U+FFFD replacements with `replace_invalid_utf8`), BLOB
/// as a Buffer, NULL as null. `Err` holds the message the statement fails with.
///
/// # Safety
/// JS thread; `value` is an argument of a call whose statement's thread waits for it.
pub unsafe fn argument(
    env: sys::napi_env,
    value: Arg,
    index: usize,
    safe_integers: bool,
    replace_invalid_utf8: bool,
) -> Result<sys::napi_value, String> {
    let mut out = ptr::null_mut();
    match value {
        Arg::Integer(i) => {
            if safe_integers {
                return Ok(js::bigint(env, i));
            }
            if !(-MAX_SAFE..=MAX_SAFE).contains(&i) {
                return Err(format!(
                    "argument {} is an INTEGER beyond ±(2^53−1), which a number cannot hold exactly; open the database with safeIntegers: true to receive it as a bigint",
                    index + 1
                ));
            }
            return Ok(js::double(env, i as f64));
        }
        Arg::Real(f) => return Ok(js::double(env, f)),
        Arg::Text(bytes) => {
            match simdutf8::basic::from_utf8(bytes) {
                Ok(s) => return Ok(js::ascii_or_utf8(env, s)),
                Err(_) if replace_invalid_utf8 => {
                    // V8 replaces each invalid sequence with U+FFFD, as the rows do.
                    sys::napi_create_string_utf8(env, bytes.as_ptr() as _, bytes.len() as isize, &mut out);
                }
                Err(_) => {
                    return Err(format!(
                        "argument {} is TEXT that is not valid UTF-8 (pass CAST(… AS BLOB), or open with invalidUtf8: 'replace')",
                        index + 1
                    ))
                }
            }
        }
        Arg::Blob(bytes) => {
            let data = if bytes.is_empty() { c"".as_ptr() as *const c_void } else { bytes.as_ptr() as *const c_void };
            sys::napi_create_buffer_copy(env, bytes.len(), data, ptr::null_mut(), &mut out);
        }
        Arg::Null => {
            sys::napi_get_null(env, &mut out);
        }
    }
    Ok(out)
}

/// What a JS function returned, as an `Outcome`. src/functions.ts has already refused what
/// cannot be stored, turning it into an object with a `message` (as it does a thrown error):
/// any object but a Uint8Array is that failure.
///
/// # Safety
/// JS thread; `value` is live.
pub unsafe fn returned(env: sys::napi_env, value: sys::napi_value) -> Outcome {
    let mut kind = 0;
    sys::napi_typeof(env, value, &mut kind);
    match kind {
        sys::ValueType::napi_undefined | sys::ValueType::napi_null => Outcome::Null,
        sys::ValueType::napi_number => {
            let mut f = 0.0;
            sys::napi_get_value_double(env, value, &mut f);
            // As a parameter binds: integral within 64 bits (not -0) → INTEGER, else REAL.
            if f.fract() == 0.0
                && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f)
                && !(f == 0.0 && f.is_sign_negative())
            {
                Outcome::Integer(f as i64)
            } else {
                Outcome::Real(f)
            }
        }
        sys::ValueType::napi_bigint => {
            let (mut i, mut lossless) = (0, false);
            sys::napi_get_value_bigint_int64(env, value, &mut i, &mut lossless);
            if lossless {
                Outcome::Integer(i)
            } else {
                Outcome::Error("a bigint outside the 64-bit integer range was returned".into())
            }
        }
        sys::ValueType::napi_string => Outcome::Text(string_arg(env, value).unwrap_or_default().into_bytes()),
        sys::ValueType::napi_object => {
            if let Some(bytes) = uint8_array(env, value) {
                return Outcome::Blob(bytes.to_vec());
            }
            Outcome::Error(message_of(env, value))
        }
        _ => Outcome::Error("the function returned a value that cannot be stored".into()),
    }
}

/// The `message` property of a failure src/functions.ts made.
unsafe fn message_of(env: sys::napi_env, value: sys::napi_value) -> String {
    let mut message = ptr::null_mut();
    sys::napi_get_named_property(env, value, c"message".as_ptr(), &mut message);
    string_arg(env, message).unwrap_or_else(|_| "the function failed".into())
}
