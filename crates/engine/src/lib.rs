//! resqlite's native engine, exposed to JS as `NativeDatabase` (see src/native.ts for the
//! JS-side contract). Jobs go in through `read`/`write`; finished jobs come back in batches
//! through one thread-safe function call per batch.

mod connection;
mod encryption;
mod engine;
mod error;
mod job_calls;
mod jobs;
mod json_encoder;
mod live;
mod params;
mod row_encoder;
mod statement_cache;
mod step;

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use crate::encryption::KeyConfig;
use crate::engine::{Engine, EngineOptions, Job, Request, Shared, Waker};
use crate::jobs::Outcome;
use crate::row_encoder::{EncodedRows, Text};

/// Completion kinds in the flat array handed to JS: `[id, kind, a, b, id, kind, a, b, …]`.
const DONE_ROWS: u32 = 0; // a: ArrayBuffer (row_encoder layout), b: string (text block)
const DONE_JSON: u32 = 1; // a: ArrayBuffer (JSON text)
const DONE_CHANGES: u32 = 2; // a: changes, b: lastInsertRowid (number, or bigint beyond 2^53)
const DONE_VOID: u32 = 3;
const DONE_ERROR: u32 = 4; // a: code, b: message
const DONE_ROWS_PART: u32 = 5; // as DONE_ROWS, for a part of a result: more follow
const DONE_ERROR_NO_TRANSACTION: u32 = 6; // as DONE_ERROR; the writer is outside any transaction now
const DONE_STREAM_ROWS: u32 = 7; // as DONE_ROWS, for live query `id`: its new rows
const DONE_STREAM_ERROR: u32 = 8; // as DONE_ERROR, for live query `id`: a run failed

/// Results smaller than this are copied into a V8-owned ArrayBuffer; larger ones are handed
/// over without a copy. An external buffer's finalizer and bookkeeping cost more than copying
/// a small result (experiments/011).
const EXTERNAL_MIN: usize = 64 * 1024;

/// Wakes the JS thread through a thread-safe function, unless it is polling: then it sees the
/// `queued` word of the Int32Array it handed over (experiments/021).
struct TsfnWaker {
    tsfn: sys::napi_threadsafe_function,
    /// [queued, polling] in the JS-owned Int32Array, kept alive by `NativeDatabase::signals`.
    signals: *const AtomicI32,
}
// SAFETY: napi_call_threadsafe_function is documented as callable from any thread; the words
// are atomics in memory that outlives every thread (released after they are joined).
unsafe impl Send for TsfnWaker {}
unsafe impl Sync for TsfnWaker {}

impl Waker for TsfnWaker {
    fn wake(&self) {
        // SAFETY: the function stays alive until released after the engine's final completion.
        unsafe { sys::napi_call_threadsafe_function(self.tsfn, ptr::null_mut(), sys::ThreadsafeFunctionCallMode::nonblocking) };
    }

    fn set_queued(&self, queued: bool) {
        // SAFETY: see the struct; the engine stops calling this once the environment detaches.
        unsafe { (*self.signals).store(queued as i32, Ordering::SeqCst) };
    }

    fn js_polling(&self) -> bool {
        // SAFETY: as in set_queued.
        unsafe { (*self.signals.add(1)).load(Ordering::SeqCst) != 0 }
    }
}

/// The pieces the TSFN callback needs: the shared completion queue.
struct CallbackContext {
    shared: std::sync::Weak<Shared>,
}

#[napi]
pub struct NativeDatabase {
    engine: Engine,
    tsfn: sys::napi_threadsafe_function,
    /// Keeps the JS thread's polling words (an Int32Array) alive until `release`.
    signals: sys::napi_ref,
    /// Argument of the env cleanup hook (a Weak<Shared>), removed with the hook on release.
    cleanup: *mut std::sync::Weak<Shared>,
}

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(Status::from(status), "N-API call failed"))
    }
}

#[napi]
impl NativeDatabase {
    /// Starts the threads; each opens its connection. Completion `open_id` reports the open.
    #[napi(constructor)]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        env: Env,
        path: String,
        readers: u32,
        busy_timeout: u32,
        readonly: bool,
        safe_integers: bool,
        on_complete: Unknown,
        signals: Unknown,
        open_id: u32,
        cipher: String,
        cipher_params: Vec<String>,
        cipher_values: Vec<i32>,
        key: &[u8],
        attach: Vec<String>,
    ) -> Result<Self> {
        // Checked before anything starts: a bad cipher setting must not touch the file.
        let key = KeyConfig::new(&cipher, cipher_params, cipher_values, key)
            .map_err(|e| Error::new(Status::InvalidArg, e.message))?;
        let raw_env = env.raw();
        // SAFETY: JS thread; the array's memory stays put while the reference holds it.
        let (signals_ptr, signals) = unsafe { polling_words(raw_env, signals.raw())? };
        let context = Box::into_raw(Box::new(CallbackContext { shared: std::sync::Weak::new() }));
        let mut tsfn = ptr::null_mut();
        let mut name = ptr::null_mut();
        // SAFETY: plain N-API calls on the JS thread with valid arguments.
        unsafe {
            check(sys::napi_create_string_utf8(raw_env, c"resqlite".as_ptr(), 8, &mut name))?;
            check(sys::napi_create_threadsafe_function(
                raw_env,
                on_complete.raw(),
                ptr::null_mut(),
                name,
                0,
                1,
                ptr::null_mut(),
                Some(finalize_context),
                context as *mut c_void,
                Some(deliver_completions),
                &mut tsfn,
            ))?;
            // Idle engines must not keep the process alive; JS refs it while jobs are pending.
            check(sys::napi_unref_threadsafe_function(raw_env, tsfn))?;
        }
        let engine = Engine::start(
            EngineOptions {
                path,
                readers: readers as usize,
                busy_timeout_ms: busy_timeout,
                readonly,
                safe_integers,
                key,
                // [name, path, name, path, …]
                attach: attach.chunks_exact(2).map(|p| (p[0].clone(), p[1].clone())).collect(),
            },
            open_id,
            Box::new(TsfnWaker { tsfn, signals: signals_ptr }),
        );
        // SAFETY: context lives until finalize_context. The TSFN callback runs on this (the JS)
        // thread, so it cannot run before this constructor returns and the store is seen.
        unsafe { (*context).shared = Arc::downgrade(&engine.shared) };
        // A worker thread may end without closing the database: detach from its environment
        // then, so no reader calls into a thread-safe function that no longer exists.
        let cleanup = Box::into_raw(Box::new(Arc::downgrade(&engine.shared)));
        // SAFETY: JS thread; the hook and its argument live until `release` removes them.
        check(unsafe { sys::napi_add_env_cleanup_hook(raw_env, Some(detach_on_teardown), cleanup as *mut c_void) })?;
        Ok(NativeDatabase { engine, tsfn, signals, cleanup })
    }

    /// `{ read, write, take }`, the calls made once per job (job_calls.rs). Keep them with this
    /// object: they use it without holding it.
    #[napi]
    pub fn job_calls(&self, env: Env) -> Result<Unknown<'_>> {
        // SAFETY: JS thread; the contract above keeps `self` alive while they are callable.
        unsafe { Unknown::from_napi_value(env.raw(), job_calls::job_calls(env.raw(), self)) }
    }

    /// Starts live query `id` (its first run is queued now); its results arrive as
    /// DONE_STREAM_ROWS / DONE_STREAM_ERROR completions until `stream_stop`.
    #[napi]
    pub fn stream_start(&self, id: u32, sql: String, params: &[u8], params_len: u32) {
        self.engine.stream_start(id, sql, params[..params_len as usize].to_vec());
    }

    #[napi]
    pub fn stream_stop(&self, id: u32) {
        self.engine.stream_stop(id);
    }

    /// Live-query counters and SQLite's memory use: `[queries, requeries, skippedByColumns,
    /// unchangedSuppressed, fallbackAll, pageCacheBytes, schemaBytes, statementBytes]`.
    #[napi]
    pub fn diagnostics(&self) -> Vec<f64> {
        let d = self.engine.diagnostics();
        let c = d.counters;
        vec![
            d.queries as f64,
            c.requeries as f64,
            c.skipped_by_columns as f64,
            c.unchanged_suppressed as f64,
            c.fallback_all as f64,
            d.page_cache_bytes as f64,
            d.schema_bytes as f64,
            d.statement_bytes as f64,
        ]
    }

    /// Queues a rekey on the writer: `key` empty decrypts. False when there is no writer.
    #[napi]
    pub fn rekey(&self, id: u32, cipher: String, cipher_params: Vec<String>, cipher_values: Vec<i32>, key: &[u8]) -> Result<bool> {
        let key = KeyConfig::new(&cipher, cipher_params, cipher_values, key)
            .map_err(|e| Error::new(Status::InvalidArg, e.message))?;
        let job = Job { id, request: Request::Rekey(key), sql: String::new(), params: Vec::new(), cancellable: false, in_transaction: false };
        Ok(self.engine.write(job))
    }

    #[napi]
    pub fn interrupt_writer(&self) {
        self.engine.interrupt_writer();
    }

    #[napi]
    pub fn cancel(&self, id: u32) {
        self.engine.cancel(id);
    }

    /// Keeps the process alive while jobs are pending.
    #[napi(js_name = "ref")]
    pub fn keep_alive(&self, env: Env) -> Result<()> {
        if self.tsfn.is_null() {
            return Ok(()); // released
        }
        // SAFETY: JS thread, live tsfn.
        check(unsafe { sys::napi_ref_threadsafe_function(env.raw(), self.tsfn) })
    }

    #[napi]
    pub fn unref(&self, env: Env) -> Result<()> {
        if self.tsfn.is_null() {
            return Ok(()); // released
        }
        // SAFETY: JS thread, live tsfn.
        check(unsafe { sys::napi_unref_threadsafe_function(env.raw(), self.tsfn) })
    }

    /// Finishes queued jobs, joins every thread off the JS thread, then completes `close_id`.
    #[napi]
    pub fn close(&mut self, close_id: u32) {
        self.engine.close(close_id);
    }

    /// Releases the wake-up function; call once, after the close completion arrived.
    #[napi]
    pub fn release(&mut self, env: Env) {
        if !self.tsfn.is_null() {
            // SAFETY: every thread that could call it has been joined; the hook is ours.
            unsafe {
                sys::napi_release_threadsafe_function(self.tsfn, sys::ThreadsafeFunctionReleaseMode::release);
                sys::napi_remove_env_cleanup_hook(env.raw(), Some(detach_on_teardown), self.cleanup as *mut c_void);
                drop(Box::from_raw(self.cleanup));
                sys::napi_delete_reference(env.raw(), self.signals);
            }
            self.tsfn = ptr::null_mut();
        }
    }
}

/// Job kinds as JS sends them (src/native.ts `JobKind`).
pub(crate) fn request(kind: u32) -> Request {
    match kind {
        1 => Request::Batch,
        2 => Request::Select { max_rows: usize::MAX, json: false },
        3 => Request::Select { max_rows: 1, json: false },
        4 => Request::Select { max_rows: usize::MAX, json: true },
        5 => Request::Control,
        6 => Request::DataVersion,
        99 => Request::Panic,
        _ => Request::Execute,
    }
}

unsafe extern "C" fn detach_on_teardown(arg: *mut c_void) {
    let weak = Box::from_raw(arg as *mut std::sync::Weak<Shared>);
    if let Some(shared) = weak.upgrade() {
        shared.detach();
    }
}

/// N-API passes the TSFN's context as the finalizer's hint (its data is thread_finalize_data).
unsafe extern "C" fn finalize_context(_env: sys::napi_env, _data: *mut c_void, context: *mut c_void) {
    drop(Box::from_raw(context as *mut CallbackContext));
}

/// The TSFN's JS-thread callback: takes every queued completion and calls the JS handler once
/// with them as a flat array.
unsafe extern "C" fn deliver_completions(env: sys::napi_env, js_cb: sys::napi_value, context: *mut c_void, _data: *mut c_void) {
    if env.is_null() {
        return; // the environment is shutting down
    }
    let Some(shared) = (*(context as *const CallbackContext)).shared.upgrade() else { return };
    let completions = shared.take_completions();
    if completions.is_empty() {
        return; // the polling JS thread took them first
    }
    let mut argv = [completions_array(env, completions)];
    let mut undefined = ptr::null_mut();
    sys::napi_get_undefined(env, &mut undefined);
    let mut result = ptr::null_mut();
    // An exception thrown by the handler surfaces as an uncaught exception, like any callback's.
    sys::napi_call_function(env, undefined, js_cb, 1, argv.as_mut_ptr(), &mut result);
}

/// The Int32Array [queued, polling] JS polls with: its data, and a reference that keeps it.
unsafe fn polling_words(env: sys::napi_env, value: sys::napi_value) -> Result<(*const AtomicI32, sys::napi_ref)> {
    let (mut kind, mut length, mut data, mut buffer, mut offset) = (0, 0, ptr::null_mut(), ptr::null_mut(), 0);
    let mut is_typed = false;
    check(sys::napi_is_typedarray(env, value, &mut is_typed))?;
    if is_typed {
        check(sys::napi_get_typedarray_info(env, value, &mut kind, &mut length, &mut data, &mut buffer, &mut offset))?;
    }
    if !is_typed || kind != sys::TypedarrayType::int32_array || length < 2 {
        return Err(Error::new(Status::InvalidArg, "signals must be an Int32Array of 2"));
    }
    let mut reference = ptr::null_mut();
    check(sys::napi_create_reference(env, value, 1, &mut reference))?;
    Ok((data as *const AtomicI32, reference))
}

/// Completions as the flat array `[id, kind, a, b, …]`; undefined when there are none.
pub(crate) unsafe fn completions_array(env: sys::napi_env, completions: Vec<engine::Completion>) -> sys::napi_value {
    let mut array = ptr::null_mut();
    if completions.is_empty() {
        sys::napi_get_undefined(env, &mut array);
        return array;
    }
    sys::napi_create_array_with_length(env, completions.len() * 4, &mut array);
    for (i, c) in completions.into_iter().enumerate() {
        let (kind, a, b) = match to_js(env, c.outcome) {
            Ok(v) => v,
            Err(message) => (DONE_ERROR, js_str(env, "ERR_RESULT_TOO_LARGE"), js_str(env, &message)),
        };
        let base = (i * 4) as u32;
        sys::napi_set_element(env, array, base, js_u32(env, c.id));
        sys::napi_set_element(env, array, base + 1, js_u32(env, kind));
        sys::napi_set_element(env, array, base + 2, a);
        sys::napi_set_element(env, array, base + 3, b);
    }
    array
}

unsafe fn to_js(env: sys::napi_env, outcome: Outcome) -> std::result::Result<(u32, sys::napi_value, sys::napi_value), String> {
    let mut a = ptr::null_mut();
    let mut b = ptr::null_mut();
    let kind = match outcome {
        Outcome::Rows(rows) => {
            (a, b) = rows_to_js(env, rows)?;
            DONE_ROWS
        }
        Outcome::RowsPart(rows) => {
            (a, b) = rows_to_js(env, rows)?;
            DONE_ROWS_PART
        }
        Outcome::Json(bytes) => {
            a = array_buffer(env, bytes)?;
            DONE_JSON
        }
        Outcome::Changes { changes, last_insert_rowid } => {
            sys::napi_create_double(env, changes as f64, &mut a);
            if last_insert_rowid.unsigned_abs() < (1u64 << 53) {
                sys::napi_create_double(env, last_insert_rowid as f64, &mut b);
            } else {
                sys::napi_create_bigint_int64(env, last_insert_rowid, &mut b);
            }
            DONE_CHANGES
        }
        Outcome::StreamRows(rows) => {
            (a, b) = rows_to_js(env, rows)?;
            DONE_STREAM_ROWS
        }
        Outcome::StreamError(e) => {
            a = js_str(env, &e.code);
            b = js_str(env, &e.message);
            DONE_STREAM_ERROR
        }
        Outcome::StreamRan { .. } => unreachable!("the registry turns a run into rows or an error"),
        Outcome::Done => DONE_VOID,
        Outcome::Error(e) => {
            a = js_str(env, &e.code);
            b = js_str(env, &e.message);
            if e.no_transaction {
                DONE_ERROR_NO_TRANSACTION
            } else {
                DONE_ERROR
            }
        }
    };
    if a.is_null() {
        sys::napi_get_undefined(env, &mut a);
    }
    if b.is_null() {
        sys::napi_get_undefined(env, &mut b);
    }
    Ok((kind, a, b))
}

/// A row_encoder result as (ArrayBuffer, text string).
unsafe fn rows_to_js(env: sys::napi_env, rows: EncodedRows) -> std::result::Result<(sys::napi_value, sys::napi_value), String> {
    let buffer = array_buffer(env, rows.buffer)?;
    let mut text = ptr::null_mut();
    let status = match &rows.text {
        Text::OneByte(t) => sys::napi_create_string_latin1(env, t.as_ptr() as _, t.len() as isize, &mut text),
        Text::TwoByte(t) => sys::napi_create_string_utf16(env, t.as_ptr(), t.len() as isize, &mut text),
    };
    if status != sys::Status::napi_ok {
        clear_exception(env);
        return Err("the result's text is longer than a JavaScript string can hold".into());
    }
    Ok((buffer, text))
}

unsafe fn clear_exception(env: sys::napi_env) {
    let mut pending = false;
    sys::napi_is_exception_pending(env, &mut pending);
    if pending {
        let mut e = ptr::null_mut();
        sys::napi_get_and_clear_last_exception(env, &mut e);
    }
}

unsafe extern "C" fn free_vec(_env: sys::napi_env, _data: *mut c_void, hint: *mut c_void) {
    drop(Box::from_raw(hint as *mut Vec<u8>));
}

unsafe fn array_buffer(env: sys::napi_env, bytes: Vec<u8>) -> std::result::Result<sys::napi_value, String> {
    let mut value = ptr::null_mut();
    if bytes.len() < EXTERNAL_MIN {
        let mut data = ptr::null_mut();
        if sys::napi_create_arraybuffer(env, bytes.len(), &mut data, &mut value) != sys::Status::napi_ok {
            clear_exception(env);
            return Err("out of memory for the result".into());
        }
        ptr::copy_nonoverlapping(bytes.as_ptr(), data as *mut u8, bytes.len());
    } else {
        let boxed = Box::new(bytes);
        let (ptr_, len) = (boxed.as_ptr() as *mut c_void, boxed.len());
        let hint = Box::into_raw(boxed) as *mut c_void;
        if sys::napi_create_external_arraybuffer(env, ptr_, len, Some(free_vec), hint, &mut value) != sys::Status::napi_ok {
            drop(Box::from_raw(hint as *mut Vec<u8>));
            clear_exception(env);
            return Err("out of memory for the result".into());
        }
    }
    Ok(value)
}

unsafe fn js_u32(env: sys::napi_env, v: u32) -> sys::napi_value {
    let mut out = ptr::null_mut();
    sys::napi_create_uint32(env, v, &mut out);
    out
}

unsafe fn js_str(env: sys::napi_env, s: &str) -> sys::napi_value {
    let mut out = ptr::null_mut();
    sys::napi_create_string_utf8(env, s.as_ptr() as _, s.len() as isize, &mut out);
    out
}
