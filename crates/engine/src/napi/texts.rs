//! `texts(buffer, from, to, collect)`: the TEXT cells of a result's cells [from, to) as JS
//! strings, each its own, so that a value a user keeps keeps only itself alive — a slice of
//! one string made for the whole result would keep all of it (experiments/033). Short ASCII
//! cells (TAG_SHORT_TEXT) come joined in one string instead, which JS slices: V8 copies a slice
//! that short, so it keeps nothing else alive either. JS asks for them as it decodes rows
//! (src/decode.ts), a bounded range at a time, so a huge result's strings are made across
//! event-loop turns like its rows. They reach JS as the arguments of one call of `collect` (a
//! rest-parameter function), which makes them one array: the short cells' string, then the
//! other cells' strings in cell order.

use std::ptr;

use napi::sys;

use crate::encode::rows::ASCII;
use crate::error::code;
use crate::js::args::{throw, u32_arg};
use crate::protocol::{TAG_SHORT_TEXT, TAG_TEXT};

/// More cells than this in one call are refused: their strings are one call's arguments, on the
/// JS thread's stack.
pub const MAX_CELLS: usize = 8192;

/// A u32 of the result's header (encode/rows.rs).
fn word(buffer: &[u8], index: usize) -> usize {
    buffer.get(index * 4..index * 4 + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

/// The strings, or what was wrong with the arguments.
unsafe fn strings(env: sys::napi_env, argv: &[sys::napi_value; 4]) -> Result<Vec<sys::napi_value>, &'static str> {
    let (mut data, mut length) = (ptr::null_mut(), 0);
    if sys::napi_get_arraybuffer_info(env, argv[0], &mut data, &mut length) != sys::Status::napi_ok || data.is_null() {
        return Err("texts: expected a result's ArrayBuffer");
    }
    let buffer = std::slice::from_raw_parts(data as *const u8, length);
    let (from, to) = (u32_arg(env, argv[1])? as usize, u32_arg(env, argv[2])? as usize);
    let cells = word(buffer, 0) * word(buffer, 1);
    let (tags, slots, arena) = (word(buffer, 2), word(buffer, 3), word(buffer, 4));
    if from > to || to > cells || slots + cells * 8 > length || tags + cells > slots || arena > length {
        return Err("texts: the range or the buffer does not hold a result's cells");
    }
    if to - from > MAX_CELLS {
        return Err("texts: too many cells in one call");
    }
    let mut out = Vec::with_capacity(1 + (to - from));
    out.push(ptr::null_mut()); // the short cells' string, made last
    let mut short = Vec::with_capacity((to - from) * 8);
    let slots = buffer[slots + from * 8..slots + to * 8].chunks_exact(8);
    for (&tag, slot) in buffer[tags + from..tags + to].iter().zip(slots) {
        if tag != TAG_TEXT && tag != TAG_SHORT_TEXT {
            continue;
        }
        let slot = u64::from_le_bytes([slot[0], slot[1], slot[2], slot[3], slot[4], slot[5], slot[6], slot[7]]);
        let (start, len) = (arena + (slot & 0xffff_ffff) as usize, ((slot & !ASCII) >> 32) as usize);
        let Some(bytes) = buffer.get(start..start + len) else { return Err("texts: a cell lies outside the buffer") };
        if tag == TAG_SHORT_TEXT {
            short.extend_from_slice(bytes);
            continue;
        }
        let mut value = ptr::null_mut();
        // ASCII is copied as Latin-1; other text the reader made UTF-16 (encode/rows.rs).
        let status = if slot & ASCII != 0 {
            sys::napi_create_string_latin1(env, bytes.as_ptr() as *const _, len as isize, &mut value)
        } else if cfg!(target_endian = "little") && (bytes.as_ptr() as usize).is_multiple_of(2) {
            sys::napi_create_string_utf16(env, bytes.as_ptr() as *const u16, (len / 2) as isize, &mut value)
        } else {
            // The arena holds UTF-16LE, 2-aligned: memory that is not (or a big-endian CPU)
            // goes through a copy.
            let units: Vec<u16> = bytes.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
            sys::napi_create_string_utf16(env, units.as_ptr(), units.len() as isize, &mut value)
        };
        if status != sys::Status::napi_ok {
            return Err("texts: a value is longer than a JavaScript string can hold");
        }
        out.push(value);
    }
    if sys::napi_create_string_latin1(env, short.as_ptr() as *const _, short.len() as isize, &mut out[0])
        != sys::Status::napi_ok
    {
        return Err("texts: the short values are longer than a JavaScript string can hold");
    }
    Ok(out)
}

pub(super) unsafe extern "C" fn texts(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argv = [ptr::null_mut(); 4];
    let mut argc = argv.len();
    sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut());
    if argc < argv.len() {
        return throw(env, "expected (buffer, from, to, collect)");
    }
    match strings(env, &argv) {
        Ok(values) => {
            let (mut undefined, mut result) = (ptr::null_mut(), ptr::null_mut());
            sys::napi_get_undefined(env, &mut undefined);
            sys::napi_call_function(env, undefined, argv[3], values.len(), values.as_ptr(), &mut result);
            result
        }
        // The only failure: a value V8 cannot hold as a string. Thrown with the code decode.ts
        // turns into the result's ResqliteError.
        Err(message) => {
            let message = std::ffi::CString::new(message).unwrap_or_default();
            let too_large = std::ffi::CString::new(code::ERR_RESULT_TOO_LARGE).unwrap_or_default();
            sys::napi_throw_range_error(env, too_large.as_ptr(), message.as_ptr());
            ptr::null_mut()
        }
    }
}
