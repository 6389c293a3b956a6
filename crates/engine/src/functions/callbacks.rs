//! The C callbacks SQLite calls for a JavaScript function, on whichever thread runs the
//! statement: each makes a `Call` and hands it to the database's `FunctionHost`. A function's
//! definition, as registered here, is kept by registry.rs.

use std::ffi::CString;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use sqlite3mc_sys as ffi;

use super::host::{Call, Callers, FunctionHost, Handed, Kept, Op};
use super::values::{self, Outcome};

/// What a definition is: a scalar function, an aggregate, or an aggregate that is also a window
/// function (it has an `inverse`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Scalar,
    Aggregate,
    Window,
}

pub(super) struct Definition {
    pub(super) name: CString,
    pub(super) n_arg: c_int,
    /// SQLITE_DETERMINISTIC, SQLITE_DIRECTONLY.
    pub(super) flags: c_int,
    pub(super) kind: Kind,
    pub(super) callers: Arc<Callers>,
    /// `Functions::version` when this definition was made.
    pub(super) version: u64,
}

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

/// Runs the call on the JS thread (at once, or handed over) and returns what it produced.
unsafe fn call(
    ctx: *mut ffi::sqlite3_context,
    op: Op,
    instance: u64,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) -> Outcome {
    let app = registered(ctx);
    app.host.call(Call { op, callers: &*app.callers, instance, argc, argv, steps: std::ptr::null() })
}

unsafe extern "C" fn scalar(ctx: *mut ffi::sqlite3_context, argc: c_int, argv: *mut *mut ffi::sqlite3_value) {
    call(ctx, Op::Scalar, 0, argc, argv).apply(ctx);
}

/// How many steps of an aggregate an engine thread keeps before it hands them over together.
/// A step returns nothing SQLite needs until the result, so they need not be handed over one
/// by one, nor waited for: the engine thread keeps stepping while the JS thread runs the last
/// batch (experiments/054).
const KEEP_STEPS: usize = 2048;

/// An aggregate instance's state (one per group, or per window partition), in SQLite's
/// aggregate context: the number under which JS keeps its accumulator, and, on an engine
/// thread, the steps kept for the JS thread and the batch it is running.
#[repr(C)]
struct Aggregate {
    instance: u64,
    kept: *mut Kept,
    flight: *mut Flight,
    /// A step failed: the statement fails, and nothing more is called.
    failed: bool,
}

/// A batch of steps handed over and not yet waited for: the call refers to its `kept`.
struct Flight {
    kept: Kept,
    handed: Option<Handed>,
}

/// The instance's state; null when none was made (`create` false: no row was stepped).
unsafe fn aggregate(ctx: *mut ffi::sqlite3_context, create: bool) -> *mut Aggregate {
    let size = if create { std::mem::size_of::<Aggregate>() as c_int } else { 0 };
    let state = ffi::sqlite3_aggregate_context(ctx, size) as *mut Aggregate;
    if !state.is_null() && (*state).instance == 0 {
        (*state).instance = registered(ctx).host.next_instance();
    }
    state
}

unsafe fn step_as(op: Op, ctx: *mut ffi::sqlite3_context, argc: c_int, argv: *mut *mut ffi::sqlite3_value) {
    let state = aggregate(ctx, true);
    if state.is_null() {
        return Outcome::Error("out of memory".into()).apply(ctx);
    }
    if (*state).failed {
        return;
    }
    let app = registered(ctx);
    if app.host.on_js_thread() {
        if let error @ Outcome::Error(_) = call(ctx, op, (*state).instance, argc, argv) {
            (*state).failed = true;
            error.apply(ctx);
        }
        return;
    }
    if (*state).kept.is_null() {
        (*state).kept = Box::into_raw(Box::default());
    }
    let argc = argc.max(0) as usize;
    if !(*(*state).kept).inverse.is_empty() && (*(*state).kept).argc != argc {
        send_kept(ctx, state); // the kept steps share one argument count
    }
    let kept = &mut *(*state).kept;
    kept.argc = argc;
    kept.inverse.push(op == Op::Inverse);
    kept.args.extend((0..argc).map(|i| values::owned(*argv.add(i))));
    if kept.inverse.len() >= KEEP_STEPS {
        send_kept(ctx, state);
    }
}

/// Waits for the batch in flight, if any; a failure fails the statement. Whether all went well.
unsafe fn land(ctx: *mut ffi::sqlite3_context, state: *mut Aggregate) -> bool {
    let flight = (*state).flight;
    if flight.is_null() {
        return true;
    }
    // Waited for where it is: the JS thread holds its address until it is done.
    let Some(handed) = (*flight).handed.as_ref() else { return true };
    let outcome = registered(ctx).host.wait(handed);
    (*flight).handed = None;
    if let error @ Outcome::Error(_) = outcome {
        (*state).failed = true;
        error.apply(ctx);
        return false;
    }
    true
}

/// Hands the kept steps over to the JS thread without waiting for them: the batch before, if
/// any, is waited for first (steps run in order), and its buffer keeps the next steps.
unsafe fn send_kept(ctx: *mut ffi::sqlite3_context, state: *mut Aggregate) {
    if !land(ctx, state) {
        return;
    }
    let kept = (*state).kept;
    if kept.is_null() || (*kept).inverse.is_empty() {
        return;
    }
    if (*state).flight.is_null() {
        (*state).flight = Box::into_raw(Box::new(Flight { kept: Kept::default(), handed: None }));
    }
    let flight = &mut *(*state).flight;
    flight.kept.inverse.clear();
    flight.kept.args.clear();
    std::ptr::swap(&mut flight.kept, kept);
    let app = registered(ctx);
    let call = Call {
        op: Op::Steps,
        callers: &*app.callers,
        instance: (*state).instance,
        argc: 0,
        argv: std::ptr::null_mut(),
        steps: &flight.kept,
    };
    let handed = flight.handed.insert(Handed::new(call));
    // SAFETY: the flight is boxed and stays until `land` has waited for it (`release`).
    app.host.hand(handed);
}

/// Every kept step run: sent, and waited for. Whether all went well.
unsafe fn run_kept(ctx: *mut ffi::sqlite3_context, state: *mut Aggregate) -> bool {
    send_kept(ctx, state);
    !(*state).failed && land(ctx, state)
}

/// Frees what the instance's state holds, once nothing in flight refers to it.
unsafe fn release(ctx: *mut ffi::sqlite3_context, state: *mut Aggregate) {
    land(ctx, state);
    if !(*state).flight.is_null() {
        drop(Box::from_raw((*state).flight));
        (*state).flight = std::ptr::null_mut();
    }
    if !(*state).kept.is_null() {
        drop(Box::from_raw((*state).kept));
        (*state).kept = std::ptr::null_mut();
    }
}

unsafe extern "C" fn step(ctx: *mut ffi::sqlite3_context, argc: c_int, argv: *mut *mut ffi::sqlite3_value) {
    step_as(Op::Step, ctx, argc, argv);
}

unsafe extern "C" fn inverse(ctx: *mut ffi::sqlite3_context, argc: c_int, argv: *mut *mut ffi::sqlite3_value) {
    step_as(Op::Inverse, ctx, argc, argv);
}

/// A window function's current value: the steps kept so far, then the result.
unsafe extern "C" fn value(ctx: *mut ffi::sqlite3_context) {
    result(ctx, Op::Value);
}

/// The aggregate's result, and the end of its instance.
unsafe extern "C" fn finish(ctx: *mut ffi::sqlite3_context) {
    result(ctx, Op::Final);
    let state = aggregate(ctx, false);
    if !state.is_null() {
        release(ctx, state);
    }
}

unsafe fn result(ctx: *mut ffi::sqlite3_context, op: Op) {
    let state = aggregate(ctx, false);
    if state.is_null() {
        return call(ctx, op, 0, 0, std::ptr::null_mut()).apply(ctx); // no row: the result of `start`
    }
    if !(*state).failed && run_kept(ctx, state) {
        call(ctx, op, (*state).instance, 0, std::ptr::null_mut()).apply(ctx);
    }
}
