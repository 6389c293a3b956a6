//! Reading the arguments of the per-job calls (job_calls.rs, inline_calls.rs) straight from
//! N-API values, and throwing a TypeError for a bad one.

use std::cell::{Cell, RefCell};
use std::ptr;

use napi::sys;

pub unsafe fn u32_arg(env: sys::napi_env, value: sys::napi_value) -> Result<u32, &'static str> {
    let mut out = 0;
    match sys::napi_get_value_uint32(env, value, &mut out) {
        sys::Status::napi_ok => Ok(out),
        _ => Err("expected a number"),
    }
}

pub unsafe fn bool_arg(env: sys::napi_env, value: sys::napi_value) -> Result<bool, &'static str> {
    let mut out = false;
    match sys::napi_get_value_bool(env, value, &mut out) {
        sys::Status::napi_ok => Ok(out),
        _ => Err("expected a boolean"),
    }
}

pub unsafe fn string_arg(env: sys::napi_env, value: sys::napi_value) -> Result<String, &'static str> {
    let mut text = String::new();
    read_string(env, value, &mut text)?;
    Ok(text)
}

/// Reads a JS string into `text` (replacing what it held), reusing its capacity.
unsafe fn read_string(env: sys::napi_env, value: sys::napi_value, text: &mut String) -> Result<(), &'static str> {
    // Most SQL fits a first guess: one pass, without measuring the string first.
    const GUESS: usize = 256;
    let mut bytes = std::mem::take(text).into_bytes();
    bytes.clear();
    bytes.reserve(GUESS);
    let capacity = bytes.capacity();
    let mut len = 0;
    if sys::napi_get_value_string_utf8(env, value, bytes.as_mut_ptr() as *mut _, capacity, &mut len)
        != sys::Status::napi_ok
    {
        return Err("sql: expected a string");
    }
    // N-API stops early only at the end of the buffer, before a character of up to 4 bytes.
    if len + 4 >= capacity {
        sys::napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut len);
        bytes.reserve(len + 1);
        sys::napi_get_value_string_utf8(env, value, bytes.as_mut_ptr() as *mut _, len + 1, &mut len);
    }
    bytes.set_len(len);
    // SAFETY: N-API writes UTF-8 (lone surrogates become U+FFFD).
    *text = String::from_utf8_unchecked(bytes);
    Ok(())
}

thread_local! {
    /// The SQL of the running per-job call, kept between calls for its capacity.
    static SQL: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

/// A call's SQL text, read into a buffer the JS thread reuses (a call made while another runs,
/// from a handler it calls, gets a buffer of its own).
pub struct SqlText(String);

impl SqlText {
    pub unsafe fn read(env: sys::napi_env, value: sys::napi_value) -> Result<SqlText, &'static str> {
        let mut text = SqlText(SQL.take());
        read_string(env, value, &mut text.0)?;
        Ok(text)
    }
}

impl std::ops::Deref for SqlText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Drop for SqlText {
    fn drop(&mut self) {
        SQL.set(std::mem::take(&mut self.0));
    }
}

/// A call's SQL and params as `readInline` takes them: left out for the same as last time. JS then
/// skips handing over what the native side already has (the same statement run again, with
/// parameters packed into the same scratch buffer): reading the SQL text and the typed array's
/// info was about 5 % of a point select's instructions (experiments/059). Only the JS thread
/// uses it. The buffer stays alive because JS holds it while it leaves it out (src/js-thread/inline.ts
/// `InlineRunner.read`), and its bytes do not move (V8 moves no typed array's bytes once they
/// were handed out, which `uint8_array` does).
pub struct LastArgs {
    sql: RefCell<String>,
    params: Cell<(*const u8, usize)>,
}

impl Default for LastArgs {
    fn default() -> Self {
        LastArgs { sql: RefCell::new(String::new()), params: Cell::new((ptr::null(), 0)) }
    }
}

impl LastArgs {
    /// The SQL and params given, remembered; or, not given, the last ones.
    pub unsafe fn read<'a>(
        &self,
        env: sys::napi_env,
        sql: Option<sys::napi_value>,
        params: Option<sys::napi_value>,
    ) -> Result<(SqlText, &'a [u8]), &'static str> {
        let text = match sql {
            Some(sql) => {
                let text = SqlText::read(env, sql)?;
                self.sql.borrow_mut().clone_from(&text.0);
                text
            }
            None => {
                let mut text = SqlText(SQL.take());
                text.0.clone_from(&self.sql.borrow());
                text
            }
        };
        let bytes = match params {
            Some(params) => {
                let bytes = uint8_array(env, params).ok_or(PARAMS_EXPECTED)?;
                self.params.set((bytes.as_ptr(), bytes.len()));
                bytes
            }
            None => match self.params.get() {
                (_, 0) => &[],
                (data, len) => std::slice::from_raw_parts(data, len),
            },
        };
        Ok((text, bytes))
    }
}

pub const PARAMS_EXPECTED: &str = "params: expected a Uint8Array holding paramsLength bytes";

/// The first `len` bytes of a Uint8Array, copied.
pub unsafe fn bytes_arg(env: sys::napi_env, value: sys::napi_value, len: usize) -> Result<Vec<u8>, &'static str> {
    bytes_view(env, value, len).map(<[u8]>::to_vec)
}

/// The first `len` bytes of a Uint8Array, borrowed: valid until JS runs again.
pub unsafe fn bytes_view<'a>(env: sys::napi_env, value: sys::napi_value, len: usize) -> Result<&'a [u8], &'static str> {
    uint8_array(env, value).and_then(|bytes| bytes.get(..len)).ok_or(PARAMS_EXPECTED)
}

/// A Uint8Array's bytes, borrowed (valid until JS runs again); None for any other value.
pub unsafe fn uint8_array<'a>(env: sys::napi_env, value: sys::napi_value) -> Option<&'a [u8]> {
    let (mut kind, mut length, mut data, mut buffer, mut offset) = (0, 0, ptr::null_mut(), ptr::null_mut(), 0);
    if sys::napi_get_typedarray_info(env, value, &mut kind, &mut length, &mut data, &mut buffer, &mut offset)
        != sys::Status::napi_ok
        || kind != sys::TypedarrayType::uint8_array
    {
        return None;
    }
    if length == 0 {
        return Some(&[]);
    }
    Some(std::slice::from_raw_parts(data as *const u8, length))
}

pub unsafe fn throw(env: sys::napi_env, message: &str) -> sys::napi_value {
    let message = std::ffi::CString::new(message).unwrap_or_default();
    sys::napi_throw_type_error(env, ptr::null(), message.as_ptr());
    ptr::null_mut()
}
