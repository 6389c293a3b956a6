//! The C callbacks SQLite calls for a JavaScript function, on whichever thread runs the
//! statement: each makes a `Call` and hands it to the database's `FunctionHost`.

use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use sqlite3mc_sys as ffi;

use super::host::{Call, Callers, FunctionHost, Op};
use super::registry::{Definition, Kind};
use super::values::Outcome;

/// What SQLite keeps as a registered function's user data (freed by `destroy`).
struct Registered {
    host: Arc<FunctionHost>,
    callers: Arc<Callers>,
}

/// Registers `definition` on `db`; SQLite's result code.
///
/// # Safety
/// `db` is open and used by the calling thread only.
pub(super) unsafe fn register(db: *mut ffi::sqlite3, definition: &Definition, host: &Arc<FunctionHost>) -> c_int {
    let app = Box::into_raw(Box::new(Registered { host: host.clone(), callers: definition.callers.clone() }));
    let (name, n_arg, app) = (definition.name.as_ptr(), definition.n_arg, app as *mut c_void);
    let text_rep = ffi::SQLITE_UTF8 as c_int | definition.flags;
    // SQLite calls `destroy` when the function is replaced or the connection closes, and also
    // when registering fails.
    match definition.kind {
        Kind::Scalar => {
            ffi::sqlite3_create_function_v2(db, name, n_arg, text_rep, app, Some(scalar), None, None, Some(destroy))
        }
        Kind::Aggregate => ffi::sqlite3_create_function_v2(
            db,
            name,
            n_arg,
            text_rep,
            app,
            None,
            Some(step),
            Some(finish),
            Some(destroy),
        ),
        Kind::Window => ffi::sqlite3_create_window_function(
            db,
            name,
            n_arg,
            text_rep,
            app,
            Some(step),
            Some(finish),
            Some(value),
            Some(inverse),
            Some(destroy),
        ),
    }
}

unsafe extern "C" fn destroy(app: *mut c_void) {
    drop(Box::from_raw(app as *mut Registered));
}

unsafe fn registered<'a>(ctx: *mut ffi::sqlite3_context) -> &'a Registered {
    &*(ffi::sqlite3_user_data(ctx) as *const Registered)
}

unsafe fn call(ctx: *mut ffi::sqlite3_context, op: Op, instance: u64, argc: c_int, argv: *mut *mut ffi::sqlite3_value) {
    let app = registered(ctx);
    let outcome = app.host.call(Call { op, callers: &*app.callers, instance, argc, argv });
    outcome.apply(ctx);
}

unsafe extern "C" fn scalar(ctx: *mut ffi::sqlite3_context, argc: c_int, argv: *mut *mut ffi::sqlite3_value) {
    call(ctx, Op::Scalar, 0, argc, argv);
}

/// An aggregate's instance (one per group, or per window partition): a number SQLite keeps in
/// its aggregate context, under which JS keeps the accumulator. 0 when no row was stepped.
unsafe fn instance(ctx: *mut ffi::sqlite3_context, create: bool) -> Option<u64> {
    let slot = ffi::sqlite3_aggregate_context(ctx, if create { 8 } else { 0 }) as *mut u64;
    if slot.is_null() {
        return (!create).then_some(0);
    }
    if *slot == 0 {
        *slot = registered(ctx).host.next_instance();
    }
    Some(*slot)
}

unsafe fn step_as(op: Op, ctx: *mut ffi::sqlite3_context, argc: c_int, argv: *mut *mut ffi::sqlite3_value) {
    match instance(ctx, true) {
        Some(instance) => call(ctx, op, instance, argc, argv),
        None => Outcome::Error("out of memory".into()).apply(ctx),
    }
}

unsafe extern "C" fn step(ctx: *mut ffi::sqlite3_context, argc: c_int, argv: *mut *mut ffi::sqlite3_value) {
    step_as(Op::Step, ctx, argc, argv);
}

unsafe extern "C" fn inverse(ctx: *mut ffi::sqlite3_context, argc: c_int, argv: *mut *mut ffi::sqlite3_value) {
    step_as(Op::Inverse, ctx, argc, argv);
}

unsafe extern "C" fn value(ctx: *mut ffi::sqlite3_context) {
    let instance = instance(ctx, false).unwrap_or(0);
    call(ctx, Op::Value, instance, 0, std::ptr::null_mut());
}

unsafe extern "C" fn finish(ctx: *mut ffi::sqlite3_context) {
    let instance = instance(ctx, false).unwrap_or(0);
    call(ctx, Op::Final, instance, 0, std::ptr::null_mut());
}
