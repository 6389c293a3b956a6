//! JS values made from Rust ones on the JS thread, for the calls that hand results over
//! (napi/inline_calls.rs, handoff/mailbox.rs, functions/); args.rs reads them. N-API's status is
//! not checked: these only fail with an exception already pending, which the caller's return
//! reports.

use std::ptr;

use napi::sys;

pub mod args;

/// The largest integer a JS number holds exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE: i64 = (1 << 53) - 1;

pub unsafe fn number(env: sys::napi_env, n: u32) -> sys::napi_value {
    let mut value = ptr::null_mut();
    sys::napi_create_uint32(env, n, &mut value);
    value
}

pub unsafe fn double(env: sys::napi_env, n: f64) -> sys::napi_value {
    let mut value = ptr::null_mut();
    sys::napi_create_double(env, n, &mut value);
    value
}

pub unsafe fn bigint(env: sys::napi_env, n: i64) -> sys::napi_value {
    let mut value = ptr::null_mut();
    sys::napi_create_bigint_int64(env, n, &mut value);
    value
}

pub unsafe fn boolean(env: sys::napi_env, b: bool) -> sys::napi_value {
    let mut value = ptr::null_mut();
    sys::napi_get_boolean(env, b, &mut value);
    value
}

pub unsafe fn string(env: sys::napi_env, s: &str) -> sys::napi_value {
    let mut value = ptr::null_mut();
    sys::napi_create_string_utf8(env, s.as_ptr() as _, s.len() as isize, &mut value);
    value
}

/// As `string`, skipping V8's UTF-8 decoder for ASCII (column names nearly always are).
pub unsafe fn ascii_or_utf8(env: sys::napi_env, s: &str) -> sys::napi_value {
    if !s.is_ascii() {
        return string(env, s);
    }
    let mut value = ptr::null_mut();
    sys::napi_create_string_latin1(env, s.as_ptr() as _, s.len() as isize, &mut value);
    value
}
