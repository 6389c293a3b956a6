//! How finished jobs reach the JS thread (experiments/021).
//!
//! The engine and the JS thread share a mailbox: a small ArrayBuffer the JS side allocated.
//! Its first words are signals — `queued` (the engine has completions) and `polling` (the JS
//! thread's loop is polling for them, so it needs no wake-up) — and the rest holds the numbers of the
//! completions being handed over: `[id, kind, a, b]` per completion. Values that are not
//! numbers (row buffers, texts, error messages, a bigint rowid) are the handler's arguments,
//! in completion order. While the loop polls (poller.rs) an idle handle takes completions each
//! turn; otherwise a thread-safe function wakes the loop and calls the handler. The completion
//! kinds and the mailbox's layout are in protocol.rs.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Weak;

use napi::sys;

use crate::encode::rows::EncodedRows;
use crate::error::code;
use crate::js::{bigint, string};
use crate::protocol::{
    DONE_CHANGES, DONE_CHANGES_BIG, DONE_ERROR, DONE_ERROR_NO_TRANSACTION, DONE_JSON, DONE_LIVE_ERROR, DONE_LIVE_ROWS,
    DONE_PAGE, DONE_PROGRESS, DONE_QUEUED, DONE_RETURNED, DONE_ROWS, DONE_ROWS_PART, DONE_STEPPED, DONE_VOID,
    MAILBOX_BYTES, MAILBOX_COUNT, MAILBOX_POLLING, MAILBOX_QUEUED, MAILBOX_SLOTS, MAILBOX_WORDS,
    MAILBOX_WRITES_IN_FLIGHT, MAILBOX_WRITES_RUNNING,
};
use crate::threads::job::Outcome;
use crate::threads::{Completion, Shared, Waker};

/// Results smaller than this are copied into a V8-owned ArrayBuffer; larger ones are handed
/// over without a copy. An external buffer's finalizer and bookkeeping cost more than copying
/// a small result (experiments/011).
const EXTERNAL_MIN: usize = 64 * 1024;

/// The mailbox's memory. The signal words are shared with every thread; the count and slots
/// are written and read on the JS thread only.
#[derive(Clone, Copy)]
pub struct Mailbox(*mut u8);

// SAFETY: the memory is kept alive by a reference the NativeDatabase holds until `release`,
// after every engine thread has been joined; cross-thread access is through atomics only.
unsafe impl Send for Mailbox {}
unsafe impl Sync for Mailbox {}

impl Mailbox {
    /// The ArrayBuffer JS handed over, and a reference that keeps it.
    ///
    /// # Safety
    /// JS thread.
    pub unsafe fn from_js(env: sys::napi_env, value: sys::napi_value) -> Result<(Mailbox, sys::napi_ref), String> {
        let mut is_buffer = false;
        let (mut data, mut length) = (ptr::null_mut(), 0);
        sys::napi_is_arraybuffer(env, value, &mut is_buffer);
        if !is_buffer
            || sys::napi_get_arraybuffer_info(env, value, &mut data, &mut length) != sys::Status::napi_ok
            || length != MAILBOX_BYTES
        {
            return Err(format!("the mailbox must be an ArrayBuffer of {MAILBOX_BYTES} bytes"));
        }
        let mut reference = ptr::null_mut();
        if sys::napi_create_reference(env, value, 1, &mut reference) != sys::Status::napi_ok {
            return Err("cannot keep the mailbox".into());
        }
        Ok((Mailbox(data as *mut u8), reference))
    }

    fn word(&self, index: usize) -> &AtomicI32 {
        // SAFETY: in bounds (checked size), 4-aligned (V8 aligns ArrayBuffer data), alive.
        unsafe { &*(self.0 as *const AtomicI32).add(index) }
    }

    /// Completions are queued.
    pub fn queued(&self) -> bool {
        self.word(MAILBOX_QUEUED).load(Ordering::SeqCst) != 0
    }

    /// Engine: completions are queued, or no longer.
    fn set_queued(&self, queued: bool) {
        self.word(MAILBOX_QUEUED).store(queued as i32, Ordering::SeqCst);
    }

    /// The JS thread's loop is polling: it needs no wake-up.
    fn polling(&self) -> bool {
        self.word(MAILBOX_POLLING).load(Ordering::SeqCst) != 0
    }

    /// JS thread: the loop is polling (the engine need not wake it) or no longer.
    pub fn set_polling(&self, on: bool) {
        self.word(MAILBOX_POLLING).store(on as i32, Ordering::SeqCst);
    }

    /// JS thread: writer jobs in flight, as JS counts them.
    pub fn writes_in_flight(&self) -> i32 {
        self.word(MAILBOX_WRITES_IN_FLIGHT).load(Ordering::Relaxed)
    }

    /// JS thread only: completion `slot`'s four numbers.
    unsafe fn set_slot(&self, slot: usize, values: [f64; 4]) {
        let at = (self.0.add(MAILBOX_WORDS * 4) as *mut f64).add(slot * 4);
        ptr::copy_nonoverlapping(values.as_ptr(), at, 4);
    }
}

/// Wakes the JS thread through a thread-safe function, unless it is polling.
pub struct TsfnWaker {
    pub tsfn: sys::napi_threadsafe_function,
    pub mailbox: Mailbox,
}

// SAFETY: napi_call_threadsafe_function may be called from any thread; Mailbox as above.
unsafe impl Send for TsfnWaker {}
unsafe impl Sync for TsfnWaker {}

impl Waker for TsfnWaker {
    fn wake(&self) {
        // SAFETY: the function stays alive until released after the engine's final completion.
        unsafe {
            sys::napi_call_threadsafe_function(self.tsfn, ptr::null_mut(), sys::ThreadsafeFunctionCallMode::nonblocking)
        };
    }

    fn set_queued(&self, queued: bool) {
        self.mailbox.set_queued(queued);
    }

    fn js_polling(&self) -> bool {
        self.mailbox.polling()
    }

    fn writer_started(&self) {
        self.mailbox.word(MAILBOX_WRITES_RUNNING).fetch_add(1, Ordering::SeqCst);
    }

    fn writer_finished(&self) {
        self.mailbox.word(MAILBOX_WRITES_RUNNING).fetch_sub(1, Ordering::SeqCst);
    }
}

/// What the thread-safe function's callback needs.
pub struct CallbackContext {
    pub shared: Weak<Shared>,
    pub mailbox: Mailbox,
}

/// N-API passes the TSFN's context as the finalizer's hint (its data is thread_finalize_data).
pub unsafe extern "C" fn finalize_context(_env: sys::napi_env, _data: *mut c_void, context: *mut c_void) {
    drop(Box::from_raw(context as *mut CallbackContext));
}

/// The TSFN's JS-thread callback: hands every queued completion to the JS handler.
pub unsafe extern "C" fn deliver_completions(
    env: sys::napi_env,
    js_cb: sys::napi_value,
    context: *mut c_void,
    _data: *mut c_void,
) {
    if env.is_null() {
        return; // the environment is shutting down
    }
    let context = &*(context as *const CallbackContext);
    let Some(shared) = context.shared.upgrade() else { return };
    let mut undefined = ptr::null_mut();
    sys::napi_get_undefined(env, &mut undefined);
    // An exception thrown by the handler surfaces as an uncaught exception, like any callback's.
    deliver(env, &shared, context.mailbox, &mut |argv| {
        let mut result = ptr::null_mut();
        sys::napi_call_function(env, undefined, js_cb, argv.len(), argv.as_ptr(), &mut result) == sys::Status::napi_ok
    });
}

/// Hands every queued completion over, a mailbox-full per `call` (each batch in a handle scope
/// of its own), until none is left or `call` returns false; true if any was handed over. The
/// TSFN callback and the poller (poller.rs) both deliver through this. `call` gets the JS
/// handler's arguments: `true` (a batch), then the completions' other values.
///
/// # Safety
/// JS thread.
pub unsafe fn deliver(
    env: sys::napi_env,
    shared: &Shared,
    mailbox: Mailbox,
    call: &mut dyn FnMut(&[sys::napi_value]) -> bool,
) -> bool {
    let mut delivered = false;
    loop {
        let mut scope = ptr::null_mut();
        sys::napi_open_handle_scope(env, &mut scope);
        let (completions, more) = shared.completions.take(MAILBOX_SLOTS);
        let go_on = !completions.is_empty() && {
            delivered = true;
            call(&hand_over(env, mailbox, completions)) && more
        };
        sys::napi_close_handle_scope(env, scope);
        if !go_on {
            return delivered;
        }
    }
}

/// Writes the completions' numbers into the mailbox and returns the handler's arguments:
/// `true`, then the completions' other values. Arguments rather than an array: setting an
/// array's elements through N-API cost ~1,300 instructions each (experiments/030).
unsafe fn hand_over(env: sys::napi_env, mailbox: Mailbox, completions: Vec<Completion>) -> Vec<sys::napi_value> {
    let mut batch = ptr::null_mut();
    sys::napi_get_boolean(env, true, &mut batch);
    let mut argv = Vec::with_capacity(1 + 2 * completions.len());
    argv.push(batch);
    let mut push = |value: sys::napi_value| argv.push(value);
    mailbox.word(MAILBOX_COUNT).store(completions.len() as i32, Ordering::Relaxed);
    for (slot, c) in completions.into_iter().enumerate() {
        let (kind, a, b) = match values(env, c.outcome, &mut push) {
            Ok(v) => v,
            Err(message) => {
                push(string(env, code::ERR_RESULT_TOO_LARGE));
                push(string(env, &message));
                (DONE_ERROR, 0.0, 0.0)
            }
        };
        mailbox.set_slot(slot, [c.id as f64, kind as f64, a, b]);
    }
    argv
}

/// A completion's kind and numbers; its other values go to `push`. On an error nothing has
/// been pushed.
pub(crate) unsafe fn values(
    env: sys::napi_env,
    outcome: Outcome,
    push: &mut impl FnMut(sys::napi_value),
) -> Result<(u32, f64, f64), String> {
    let kind = match outcome {
        Outcome::Rows(rows) => push_rows(env, rows, push).map(|_| DONE_ROWS)?,
        Outcome::RowsPart(rows) => push_rows(env, rows, push).map(|_| DONE_ROWS_PART)?,
        Outcome::Page(rows) => push_rows(env, rows, push).map(|_| DONE_PAGE)?,
        Outcome::LiveRows(rows) => push_rows(env, rows, push).map(|_| DONE_LIVE_ROWS)?,
        Outcome::Json(bytes) => {
            push(array_buffer(env, bytes)?);
            DONE_JSON
        }
        Outcome::Changes { changes, last_insert_rowid } => {
            if last_insert_rowid.unsigned_abs() < (1u64 << 53) {
                return Ok((DONE_CHANGES, changes as f64, last_insert_rowid as f64));
            }
            push(bigint(env, last_insert_rowid));
            return Ok((DONE_CHANGES_BIG, changes as f64, 0.0));
        }
        Outcome::Returned { rows, changes, last_insert_rowid } => {
            push_rows(env, rows, push)?;
            if last_insert_rowid.unsigned_abs() < (1u64 << 53) {
                return Ok((DONE_RETURNED, changes as f64, last_insert_rowid as f64));
            }
            push(bigint(env, last_insert_rowid));
            return Ok((DONE_RETURNED, changes as f64, f64::NAN));
        }
        Outcome::Done => DONE_VOID,
        Outcome::Progress { remaining, total } => return Ok((DONE_PROGRESS, remaining as f64, total as f64)),
        Outcome::Stepped { rc } => return Ok((DONE_STEPPED, rc as f64, 0.0)),
        Outcome::Queued(waited) => return Ok((DONE_QUEUED, waited.as_micros() as f64, 0.0)),
        Outcome::LiveError(e) => {
            push(string(env, &e.code));
            push(string(env, &e.message));
            DONE_LIVE_ERROR
        }
        Outcome::Error(e) => {
            push(string(env, &e.code));
            push(string(env, &e.message));
            if e.no_transaction {
                DONE_ERROR_NO_TRANSACTION
            } else {
                DONE_ERROR
            }
        }
        Outcome::LiveRan { .. } => unreachable!("the registry turns a run into rows or an error"),
    };
    Ok((kind, 0.0, 0.0))
}

/// An encoded result (encode/rows.rs) as its ArrayBuffer and its column names (one string,
/// joined by NUL), both pushed or neither. Its TEXT cells become strings when JS decodes them
/// (napi/texts.rs).
unsafe fn push_rows(
    env: sys::napi_env,
    rows: EncodedRows,
    push: &mut impl FnMut(sys::napi_value),
) -> Result<(), String> {
    let buffer = array_buffer(env, rows.buffer)?;
    push(buffer);
    push(string(env, &rows.names));
    Ok(())
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

pub(crate) unsafe fn array_buffer(env: sys::napi_env, bytes: Vec<u8>) -> Result<sys::napi_value, String> {
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
        if sys::napi_create_external_arraybuffer(env, ptr_, len, Some(free_vec), hint, &mut value)
            != sys::Status::napi_ok
        {
            drop(Box::from_raw(hint as *mut Vec<u8>));
            clear_exception(env);
            return Err("out of memory for the result".into());
        }
    }
    Ok(value)
}
