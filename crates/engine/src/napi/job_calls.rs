//! The calls JS makes once per job — `read`, `write`, and `ref`/`unref` around pending jobs —
//! written against N-API directly. napi-rs's method wrapper (unwrapping `this`, checking its
//! type tag, registering the borrow) cost more than the rest of a round trip's native work
//! (experiments/021, 030).
//!
//! They are plain functions whose data pointer is the `NativeDatabase`; JS keeps them next to
//! that object (src/engine.ts), so they cannot be called once it is gone. `NativeDatabase`'s
//! `jobCalls()` hands them out; `request` maps the job kinds JS sends (protocol.rs).

use std::ffi::c_void;
use std::ptr;

use napi::bindgen_prelude::{Env, FromNapiValue, Unknown};
use napi::sys;
use napi_derive::napi;

use crate::js::args::{bytes_arg, string_arg, throw, u32_arg};
use crate::napi::database::{call_args, NativeDatabase};
use crate::napi::inline_calls::{
    begin_group_inline, control_inline, live_start_inline, read_inline, read_slice, share_numbers, write_inline,
};
use crate::napi::texts::texts;
use crate::protocol::{
    JOB_KIND_BATCH, JOB_KIND_COLUMNS, JOB_KIND_CONTROL, JOB_KIND_DATA_VERSION, JOB_KIND_DESCRIBE, JOB_KIND_EXECUTE,
    JOB_KIND_PANIC, JOB_KIND_SELECT, JOB_KIND_SELECT_BYTES, JOB_KIND_SELECT_ONE, JOB_KIND_SERIALIZE, JOB_KIND_TRACED,
};
use crate::threads::job::{Job, Request};

#[napi]
impl NativeDatabase {
    /// `{ read, readInline, readSlice, shareNumbers, controlInline, beginGroupInline, writeInline, liveStartInline, write, ref, unref, texts }`, the calls made per job (below). Keep them with this
    /// object: they use it without holding it.
    #[napi]
    pub fn job_calls(&self, env: Env) -> napi::Result<Unknown<'_>> {
        // SAFETY: JS thread; the contract above keeps `self` alive while they are callable.
        unsafe { Unknown::from_napi_value(env.raw(), job_calls(env.raw(), self)) }
    }
}

/// `{ read, readInline, readSlice, shareNumbers, controlInline, beginGroupInline, writeInline, liveStartInline, write, ref, unref, texts }` bound to `db`.
///
/// # Safety
/// JS thread; `db` must outlive every call of the returned functions.
unsafe fn job_calls(env: sys::napi_env, db: *const NativeDatabase) -> sys::napi_value {
    let mut object = ptr::null_mut();
    sys::napi_create_object(env, &mut object);
    let calls: [(&std::ffi::CStr, sys::napi_callback); 12] = [
        (c"read", Some(read)),
        (c"readInline", Some(read_inline)),
        (c"readSlice", Some(read_slice)),
        (c"shareNumbers", Some(share_numbers)),
        (c"controlInline", Some(control_inline)),
        (c"beginGroupInline", Some(begin_group_inline)),
        (c"writeInline", Some(write_inline)),
        (c"liveStartInline", Some(live_start_inline)),
        (c"write", Some(write)),
        (c"ref", Some(keep_alive)),
        (c"unref", Some(let_exit)),
        (c"texts", Some(texts)),
    ];
    for (name, callback) in calls {
        let mut function = ptr::null_mut();
        sys::napi_create_function(
            env,
            name.as_ptr(),
            name.count_bytes() as isize,
            callback,
            db as *mut c_void,
            &mut function,
        );
        sys::napi_set_named_property(env, object, name.as_ptr(), function);
    }
    object
}

/// `read(id, kind, sql, params, paramsLength, cancellable)`: queues a read on the reader pool.
/// `kind` may carry `JOB_KIND_TRACED` (as may `write`'s): the job's wait in the queue is reported.
unsafe extern "C" fn read(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let (db, job, cancellable) = match job_args(env, info) {
        Ok(v) => v,
        Err(message) => return throw(env, &message),
    };
    db.pool.read(Job { cancellable, ..job });
    ptr::null_mut()
}

/// `write(id, kind, sql, params, paramsLength, inTransaction)`: queues a job on the writer;
/// false when there is no writer (read-only, or closed).
unsafe extern "C" fn write(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let (db, job, in_transaction) = match job_args(env, info) {
        Ok(v) => v,
        Err(message) => return throw(env, &message),
    };
    let sent = db.pool.write(Job { in_transaction, ..job });
    if sent {
        db.poll_for_completions();
    }
    let mut result = ptr::null_mut();
    sys::napi_get_boolean(env, sent, &mut result);
    result
}

/// `ref()`: pending jobs keep the process alive.
unsafe extern "C" fn keep_alive(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    set_keep_alive(env, info, true)
}

/// `unref()`: nothing pending keeps the process alive any more.
unsafe extern "C" fn let_exit(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    set_keep_alive(env, info, false)
}

unsafe fn set_keep_alive(env: sys::napi_env, info: sys::napi_callback_info, on: bool) -> sys::napi_value {
    let (mut argc, mut data) = (0, ptr::null_mut());
    sys::napi_get_cb_info(env, info, &mut argc, ptr::null_mut(), ptr::null_mut(), &mut data);
    if (*(data as *const NativeDatabase)).keep_alive(env, on) != sys::Status::napi_ok {
        return throw(env, "the engine's wake-up function could not be (un)referenced");
    }
    ptr::null_mut()
}

/// The six arguments of `read` and `write`: the job (neither flag set) and the last argument.
unsafe fn job_args<'a>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Result<(&'a NativeDatabase, Job, bool), String> {
    let (argv, argc, db) = call_args::<6>(env, info);
    if argc < argv.len() {
        return Err("expected (id, kind, sql, params, paramsLength, flag)".into());
    }
    let id = u32_arg(env, argv[0])?;
    let kind = u32_arg(env, argv[1])?;
    let request = request(kind & !JOB_KIND_TRACED)?;
    let sql = string_arg(env, argv[2])?;
    let params = bytes_arg(env, argv[3], u32_arg(env, argv[4])? as usize)?;
    let mut flag = false;
    if sys::napi_get_value_bool(env, argv[5], &mut flag) != sys::Status::napi_ok {
        return Err("flag: expected a boolean".into());
    }
    // Only a traced call's job reads the clock here (tracing's `threadQueuedMs`).
    let queued = (kind & JOB_KIND_TRACED != 0).then(std::time::Instant::now);
    let job = Job { id, request, sql, params, cancellable: false, in_transaction: false, queued };
    Ok((db, job, flag))
}

/// The request for a job kind JS sends (src/native.ts `JobKind`); an unknown kind is an error,
/// never run as something else.
fn request(kind: u32) -> Result<Request, String> {
    Ok(match kind {
        JOB_KIND_EXECUTE => Request::Execute,
        JOB_KIND_BATCH => Request::Batch,
        JOB_KIND_SELECT => Request::Select { max_rows: usize::MAX, json: false },
        JOB_KIND_SELECT_ONE => Request::Select { max_rows: 1, json: false },
        JOB_KIND_SELECT_BYTES => Request::Select { max_rows: usize::MAX, json: true },
        JOB_KIND_CONTROL => Request::Control,
        JOB_KIND_DATA_VERSION => Request::DataVersion,
        JOB_KIND_SERIALIZE => Request::Serialize,
        JOB_KIND_COLUMNS => Request::Columns,
        JOB_KIND_DESCRIBE => Request::Describe,
        JOB_KIND_PANIC => Request::Panic,
        _ => return Err(format!("kind: unknown job kind {kind}")),
    })
}
