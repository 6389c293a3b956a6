//! Reading the arguments of the per-job calls (job_calls.rs, inline_calls.rs) straight from
//! N-API values, and throwing a TypeError for a bad one.

use std::ptr;

use napi::sys;

pub unsafe fn u32_arg(env: sys::napi_env, value: sys::napi_value) -> Result<u32, &'static str> {
    let mut out = 0;
    match sys::napi_get_value_uint32(env, value, &mut out) {
        sys::Status::napi_ok => Ok(out),
        _ => Err("expected a number"),
    }
}

pub unsafe fn string_arg(env: sys::napi_env, value: sys::napi_value) -> Result<String, &'static str> {
    // Most SQL fits a first guess: one pass, without measuring the string first.
    const GUESS: usize = 256;
    let mut bytes = Vec::<u8>::with_capacity(GUESS);
    let mut len = 0;
    if sys::napi_get_value_string_utf8(env, value, bytes.as_mut_ptr() as *mut _, GUESS, &mut len)
        != sys::Status::napi_ok
    {
        return Err("sql: expected a string");
    }
    // N-API stops early only at the end of the buffer, before a character of up to 4 bytes.
    if len + 4 < GUESS {
        bytes.set_len(len);
        // SAFETY: N-API writes UTF-8 (lone surrogates become U+FFFD).
        return Ok(String::from_utf8_unchecked(bytes));
    }
    sys::napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut len);
    let mut bytes = Vec::<u8>::with_capacity(len + 1);
    sys::napi_get_value_string_utf8(env, value, bytes.as_mut_ptr() as *mut _, len + 1, &mut len);
    bytes.set_len(len);
    // SAFETY: N-API writes UTF-8 (lone surrogates become U+FFFD).
    Ok(String::from_utf8_unchecked(bytes))
}

/// The first `len` bytes of a Uint8Array, copied.
pub unsafe fn bytes_arg(env: sys::napi_env, value: sys::napi_value, len: usize) -> Result<Vec<u8>, &'static str> {
    bytes_view(env, value, len).map(<[u8]>::to_vec)
}

/// The first `len` bytes of a Uint8Array, borrowed: valid until JS runs again.
pub unsafe fn bytes_view<'a>(env: sys::napi_env, value: sys::napi_value, len: usize) -> Result<&'a [u8], &'static str> {
    let (mut kind, mut length, mut data, mut buffer, mut offset) = (0, 0, ptr::null_mut(), ptr::null_mut(), 0);
    if sys::napi_get_typedarray_info(env, value, &mut kind, &mut length, &mut data, &mut buffer, &mut offset)
        != sys::Status::napi_ok
        || kind != sys::TypedarrayType::uint8_array
        || len > length
    {
        return Err("params: expected a Uint8Array holding paramsLength bytes");
    }
    if len == 0 {
        return Ok(&[]);
    }
    Ok(std::slice::from_raw_parts(data as *const u8, len))
}

pub unsafe fn throw(env: sys::napi_env, message: &str) -> sys::napi_value {
    let message = std::ffi::CString::new(message).unwrap_or_default();
    sys::napi_throw_type_error(env, ptr::null(), message.as_ptr());
    ptr::null_mut()
}
