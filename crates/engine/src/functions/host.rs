//! Where a JavaScript function's calls run: always on the JS thread of the database that
//! defined it. A statement running there (a read or write on the JS thread, js_thread/runs.rs) calls
//! the function at once. A statement on an engine thread hands each call over (`hop`) and
//! waits: the JS thread takes the calls in slices of at most `SLICE`, waiting a moment between
//! calls for the next, then gives its event loop a turn (`serve`; experiments/054).

use std::cell::{Cell, UnsafeCell};
use std::collections::VecDeque;
use std::os::raw::{c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread::Thread;
use std::time::{Duration, Instant};

use napi::sys;
use sqlite3mc_sys as ffi;

use super::values::{self, Outcome};
use crate::js;
use crate::spin::SpinPolicy;

/// The longest the JS thread serves handed-over calls before its event loop gets a turn (the
/// functions' own time included).
const SLICE: Duration = Duration::from_millis(1);
/// How long the JS thread waits for the next call once the queue is empty, before it returns
/// to its loop: a statement stepping rows calls again within microseconds.
const JS_WAITS: Duration = Duration::from_micros(50);
/// How long an engine thread spins for its call's result before it sleeps until woken.
const ENGINE_SPINS: Duration = Duration::from_micros(200);

thread_local! {
    /// The N-API environment of the JS thread this is, if it is one.
    static JS_ENV: Cell<usize> = const { Cell::new(0) };
    /// Whether waiting by spinning pays on this thread now (spin.rs): on a crowded
    /// machine the two threads would take turns on one CPU instead.
    static SPIN: SpinPolicy = SpinPolicy::new();
}

fn may_spin() -> bool {
    SPIN.with(|s| s.allowed(Instant::now()))
}

/// Marks the calling thread as the JS thread of `env` (each database's constructor does).
pub fn set_js_env(env: sys::napi_env) {
    JS_ENV.with(|e| e.set(env as usize));
}

/// What a function's definition calls in JS (src/functions.ts makes them): a scalar's caller;
/// an aggregate's `step`, `inverse` (windows only), `result`, and `steps` (kept steps, handed
/// over together). Referenced until the database is released.
pub struct Callers {
    refs: Vec<sys::napi_ref>,
}

// SAFETY: the references are created, used and deleted on the JS thread only; other threads
// only carry the pointer to a Call the JS thread runs.
unsafe impl Send for Callers {}
unsafe impl Sync for Callers {}

impl Callers {
    /// # Safety
    /// JS thread; `functions` are JS functions.
    pub unsafe fn new(env: sys::napi_env, functions: &[sys::napi_value]) -> Callers {
        let refs = functions
            .iter()
            .map(|f| {
                let mut r = ptr::null_mut();
                sys::napi_create_reference(env, *f, 1, &mut r);
                r
            })
            .collect();
        Callers { refs }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Scalar,
    Step,
    Inverse,
    /// An aggregate's steps kept by an engine thread, handed over together (callbacks.rs).
    Steps,
    Value,
    Final,
}

/// An aggregate's steps (and inverses) kept to be handed over together: which each is, and
/// their arguments, `argc` each, in order.
#[derive(Default)]
pub struct Kept {
    pub inverse: Vec<bool>,
    pub argc: usize,
    pub args: Vec<values::Owned>,
}

/// One call of a JS function, made by the thread running the statement.
pub struct Call {
    pub op: Op,
    pub callers: *const Callers,
    /// The aggregate's instance (callbacks.rs `instance`); 0 for a scalar.
    pub instance: u64,
    pub argc: c_int,
    pub argv: *mut *mut ffi::sqlite3_value,
    /// `Op::Steps`: the steps kept.
    pub steps: *const Kept,
}

/// A call handed over to the JS thread (`hand`), where it stays (on the stack of the thread
/// waiting for it, or boxed) until it is `done`.
pub struct Handed {
    call: Call,
    outcome: UnsafeCell<Outcome>,
    done: AtomicBool,
    waiter: Thread,
}

impl Handed {
    pub fn new(call: Call) -> Handed {
        Handed {
            call,
            outcome: UnsafeCell::new(Outcome::Nothing),
            done: AtomicBool::new(false),
            waiter: std::thread::current(),
        }
    }
}

/// The JS side of one database's functions: runs their calls on its JS thread.
pub struct FunctionHost {
    env: sys::napi_env,
    safe_integers: bool,
    replace_invalid_utf8: bool,
    /// Calls handed over, oldest first (pointers to `Handed` on waiting threads' stacks).
    queue: Mutex<VecDeque<usize>>,
    /// The JS thread will look at the queue: no need to wake it.
    scheduled: AtomicBool,
    /// Wakes the JS thread to serve the queue; null until the first function is defined, and
    /// again once released.
    tsfn: AtomicPtr<sys::napi_threadsafe_function__>,
    /// The JS thread will serve no more calls: its environment ended, or the database closed.
    closed: AtomicBool,
    next_instance: AtomicU64,
    /// Every definition's callers, released with the database.
    callers: Mutex<Vec<std::sync::Arc<Callers>>>,
}

// SAFETY: `env` is used on its JS thread only (`call` checks); the rest is synchronized.
unsafe impl Send for FunctionHost {}
unsafe impl Sync for FunctionHost {}

impl FunctionHost {
    pub fn new(env: sys::napi_env, safe_integers: bool, replace_invalid_utf8: bool) -> FunctionHost {
        FunctionHost {
            env,
            safe_integers,
            replace_invalid_utf8,
            queue: Mutex::default(),
            scheduled: AtomicBool::new(false),
            tsfn: AtomicPtr::new(ptr::null_mut()),
            closed: AtomicBool::new(false),
            next_instance: AtomicU64::new(1),
            callers: Mutex::default(),
        }
    }

    pub fn next_instance(&self) -> u64 {
        self.next_instance.fetch_add(1, Ordering::Relaxed)
    }

    /// Keeps `callers` until release.
    pub fn keep(&self, callers: std::sync::Arc<Callers>) {
        self.callers.lock().unwrap().push(callers);
    }

    /// The first definition: `later` is the JS function that serves the queue on a later turn of
    /// the event loop (`setImmediate`); the thread-safe function made here wakes the JS thread.
    ///
    /// # Safety
    /// JS thread; `host` outlives the thread-safe function (it holds a strong count, dropped by
    /// the finalizer).
    pub unsafe fn enable(
        host: &std::sync::Arc<FunctionHost>,
        env: sys::napi_env,
        later: sys::napi_value,
    ) -> sys::napi_status {
        if !host.tsfn.load(Ordering::Acquire).is_null() {
            return sys::Status::napi_ok;
        }
        let mut name = ptr::null_mut();
        sys::napi_create_string_utf8(env, c"resqlite functions".as_ptr(), 18, &mut name);
        let context = std::sync::Arc::into_raw(host.clone()) as *mut c_void;
        let mut tsfn = ptr::null_mut();
        let status = sys::napi_create_threadsafe_function(
            env,
            later,
            ptr::null_mut(),
            name,
            0,
            1,
            ptr::null_mut(),
            Some(finalize),
            context,
            Some(serve_from_tsfn),
            &mut tsfn,
        );
        if status != sys::Status::napi_ok {
            drop(std::sync::Arc::from_raw(context as *const FunctionHost));
            return status;
        }
        // Waiting calls keep their statement's job pending, which keeps the process alive.
        sys::napi_unref_threadsafe_function(env, tsfn);
        host.tsfn.store(tsfn, Ordering::Release);
        sys::Status::napi_ok
    }

    /// Whether this is the JS thread (a call made here runs at once).
    pub fn on_js_thread(&self) -> bool {
        JS_ENV.with(|e| e.get()) == self.env as usize
    }

    /// Runs a call: at once on the JS thread, else handed over to it.
    pub fn call(&self, call: Call) -> Outcome {
        if self.on_js_thread() {
            // SAFETY: this is the JS thread; the call's values are this statement's.
            unsafe { self.invoke(&call) }
        } else {
            self.hop(call)
        }
    }

    fn hop(&self, call: Call) -> Outcome {
        let handed = Handed::new(call);
        // SAFETY: `handed` stays here until `wait` has seen it done.
        unsafe { self.hand(&handed) };
        self.wait(&handed)
    }

    /// Queues `handed` for the JS thread without waiting for it (`wait` does).
    ///
    /// # Safety
    /// `handed` stays where it is, alive, until `wait` returns for it.
    pub unsafe fn hand(&self, handed: &Handed) {
        {
            let mut queue = self.queue.lock().unwrap();
            if self.closed.load(Ordering::Acquire) {
                *handed.outcome.get() = ended();
                handed.done.store(true, Ordering::Release);
                return;
            }
            queue.push_back(handed as *const Handed as usize);
        }
        if !self.scheduled.swap(true, Ordering::AcqRel) {
            let tsfn = self.tsfn.load(Ordering::Acquire);
            // SAFETY: a live thread-safe function (released only after `close` drained the queue).
            let status = if tsfn.is_null() {
                sys::Status::napi_closing
            } else {
                unsafe {
                    sys::napi_call_threadsafe_function(
                        tsfn,
                        ptr::null_mut(),
                        sys::ThreadsafeFunctionCallMode::nonblocking,
                    )
                }
            };
            if status != sys::Status::napi_ok {
                self.scheduled.store(false, Ordering::Release);
                self.close(); // the JS thread is gone: fails every waiting call, this one included
            }
        }
    }

    /// Waits for a handed call to be done, and takes what it produced.
    pub fn wait(&self, handed: &Handed) -> Outcome {
        let started = Instant::now();
        let spins = may_spin();
        while !handed.done.load(Ordering::Acquire) {
            if spins && started.elapsed() < ENGINE_SPINS {
                std::hint::spin_loop();
            } else {
                std::thread::park();
            }
        }
        // SAFETY: done: the JS thread no longer touches it.
        unsafe { std::mem::replace(&mut *handed.outcome.get(), Outcome::Nothing) }
    }

    /// Serves handed-over calls for at most SLICE; true when calls are still waiting (the caller
    /// has JS serve again on a later turn).
    ///
    /// # Safety
    /// The JS thread of `env`.
    pub unsafe fn serve(&self, env: sys::napi_env) -> bool {
        debug_assert_eq!(env, self.env);
        // `scheduled` stays set while this serves: a call handed over meanwhile is taken here,
        // without waking the thread-safe function again (each wake would queue another serve).
        let started = Instant::now();
        let waits = if may_spin() { JS_WAITS } else { Duration::ZERO };
        let mut idle_since: Option<Instant> = None;
        loop {
            let next = self.queue.lock().unwrap().pop_front();
            let now = Instant::now();
            match next {
                Some(handed) => {
                    let handed = &*(handed as *const Handed);
                    *handed.outcome.get() = self.invoke(&handed.call);
                    finish(handed);
                    idle_since = None;
                }
                None if idle_since.is_some_and(|t| now - t >= waits) => break,
                None => {
                    idle_since.get_or_insert(now);
                    std::hint::spin_loop();
                }
            }
            if now - started > SLICE {
                break;
            }
        }
        if !self.queue.lock().unwrap().is_empty() {
            return true; // still scheduled: served again on a later turn
        }
        self.scheduled.store(false, Ordering::Release);
        // A call handed over between the look and the store saw `scheduled` set and woke no one.
        !self.queue.lock().unwrap().is_empty() && !self.scheduled.swap(true, Ordering::AcqRel)
    }

    /// No more calls will be served: every waiting call fails, and so does every later one.
    pub fn close(&self) {
        let waiting: Vec<usize> = {
            let mut queue = self.queue.lock().unwrap();
            self.closed.store(true, Ordering::Release);
            queue.drain(..).collect()
        };
        for handed in waiting {
            // SAFETY: a handed call stays on its thread's stack until `done`.
            unsafe {
                let handed = &*(handed as *const Handed);
                *handed.outcome.get() = ended();
                finish(handed);
            }
        }
    }

    /// After the database closed (no statement runs any more): releases the thread-safe
    /// function and the callers' references.
    ///
    /// # Safety
    /// The JS thread of `env`.
    pub unsafe fn release(&self, env: sys::napi_env) {
        self.close();
        let tsfn = self.tsfn.swap(ptr::null_mut(), Ordering::AcqRel);
        if !tsfn.is_null() {
            sys::napi_release_threadsafe_function(tsfn, sys::ThreadsafeFunctionReleaseMode::release);
        }
        for callers in self.callers.lock().unwrap().drain(..) {
            for r in &callers.refs {
                sys::napi_delete_reference(env, *r);
            }
        }
    }

    /// Calls the JS function for `call` and reads what it returned.
    ///
    /// # Safety
    /// The JS thread; the thread running the call's statement waits (or is this one).
    unsafe fn invoke(&self, call: &Call) -> Outcome {
        let callers = &*call.callers;
        match call.op {
            Op::Scalar => {
                self.call_js(callers, 0, &[], (0..call.argc.max(0) as usize).map(|i| values::arg(*call.argv.add(i))))
            }
            Op::Step | Op::Inverse => {
                let which = if call.op == Op::Step { 0 } else { 1 };
                let instance = js::double(self.env, call.instance as f64);
                let args = (0..call.argc.max(0) as usize).map(|i| values::arg(*call.argv.add(i)));
                step_outcome(self.call_js(callers, which, &[instance], args))
            }
            Op::Steps => self.hand_kept(callers, call.instance, &*call.steps),
            Op::Value | Op::Final => {
                let lead = [js::double(self.env, call.instance as f64), js::boolean(self.env, call.op == Op::Final)];
                self.call_js(callers, callers.refs.len() - 2, &lead, std::iter::empty())
            }
        }
    }

    /// The kept steps, in one call of the `steps` caller: `(instance, inverse[], args[], argc)`.
    ///
    /// # Safety
    /// As `invoke`.
    unsafe fn hand_kept(&self, callers: &Callers, instance: u64, kept: &Kept) -> Outcome {
        let env = self.env;
        let (mut inverse, mut args) = (ptr::null_mut(), ptr::null_mut());
        sys::napi_create_array_with_length(env, kept.inverse.len(), &mut inverse);
        sys::napi_create_array_with_length(env, kept.args.len(), &mut args);
        for (i, &undo) in kept.inverse.iter().enumerate() {
            sys::napi_set_element(env, inverse, i as u32, js::boolean(env, undo));
        }
        for (i, arg) in kept.args.iter().enumerate() {
            match values::argument(
                env,
                arg.as_arg(),
                i % kept.argc.max(1),
                self.safe_integers,
                self.replace_invalid_utf8,
            ) {
                Ok(v) => sys::napi_set_element(env, args, i as u32, v),
                Err(message) => return Outcome::Error(message),
            };
        }
        let lead = [js::double(env, instance as f64), inverse, args, js::number(env, kept.argc as u32)];
        step_outcome(self.call_js(callers, callers.refs.len() - 1, &lead, std::iter::empty()))
    }

    /// Calls caller `which` with `lead` and then `args` as JS values, and reads what it returned.
    ///
    /// # Safety
    /// As `invoke`.
    unsafe fn call_js<'a>(
        &self,
        callers: &Callers,
        which: usize,
        lead: &[sys::napi_value],
        args: impl Iterator<Item = values::Arg<'a>>,
    ) -> Outcome {
        let env = self.env;
        let Some(&reference) = callers.refs.get(which) else {
            return Outcome::Error("the function has no such callback".into());
        };
        let mut function = ptr::null_mut();
        sys::napi_get_reference_value(env, reference, &mut function);
        if function.is_null() {
            return Outcome::Error("the function was released".into());
        }
        let mut argv: Vec<sys::napi_value> = Vec::with_capacity(lead.len() + 4);
        argv.extend_from_slice(lead);
        for (i, arg) in args.enumerate() {
            match values::argument(env, arg, i, self.safe_integers, self.replace_invalid_utf8) {
                Ok(v) => argv.push(v),
                Err(message) => return Outcome::Error(message),
            }
        }
        let mut undefined = ptr::null_mut();
        sys::napi_get_undefined(env, &mut undefined);
        let mut result = ptr::null_mut();
        let status = sys::napi_call_function(env, undefined, function, argv.len(), argv.as_ptr(), &mut result);
        if status != sys::Status::napi_ok {
            // The callers catch what the user's function throws; this is the engine's own
            // trouble (a stack overflow, a terminating worker).
            let mut exception = ptr::null_mut();
            sys::napi_get_and_clear_last_exception(env, &mut exception);
            return Outcome::Error("the JavaScript function could not be called".into());
        }
        values::returned(env, result)
    }
}

/// An aggregate step returns nothing, or its failure.
fn step_outcome(outcome: Outcome) -> Outcome {
    match outcome {
        Outcome::Error(e) => Outcome::Error(e),
        _ => Outcome::Nothing,
    }
}

fn ended() -> Outcome {
    Outcome::Error("the database's JavaScript thread no longer runs its functions (it closed or ended)".into())
}

/// Marks a handed call done and wakes its thread.
///
/// # Safety
/// `handed` is waiting; after `done` is set its thread may return and free it.
unsafe fn finish(handed: &Handed) {
    let waiter = handed.waiter.clone();
    handed.done.store(true, Ordering::Release);
    waiter.unpark();
}

/// The thread-safe function's callback: has JS serve the queue from `setImmediate` (`later`), so
/// the calls are served once per turn of the event loop. Served here instead, a call handed
/// over while Node dispatches the thread-safe function's queue would be served in the same
/// turn, and the next, and so on: a stall of many slices (experiments/054).
unsafe extern "C" fn serve_from_tsfn(env: sys::napi_env, later: sys::napi_value, _: *mut c_void, _: *mut c_void) {
    if env.is_null() {
        return; // the environment is ending
    }
    let (mut undefined, mut result) = (ptr::null_mut(), ptr::null_mut());
    sys::napi_get_undefined(env, &mut undefined);
    sys::napi_call_function(env, undefined, later, 0, ptr::null(), &mut result);
}

unsafe extern "C" fn finalize(_env: sys::napi_env, _data: *mut c_void, context: *mut c_void) {
    let host = std::sync::Arc::from_raw(context as *const FunctionHost);
    host.close();
}
