//! While a write is in flight, the JS thread's event loop keeps turning instead of sleeping in
//! epoll, and a libuv idle handle takes finished jobs from the mailbox each turn and hands them
//! to the JS handler (experiments/019, 021, 023). Waking a sleeping loop costs more than a
//! short write; an idle handle also makes the loop poll with a zero timeout, so other events
//! are still handled every turn.
//!
//! The handle runs from a write being sent until nothing is in flight, or until WINDOW has
//! passed since the last write was sent or the last job completed. While it runs the engine
//! does not wake the loop (mailbox.rs: the `polling` word). Everything here happens on the JS
//! thread.
//!
//! Runtimes that are not Node have no libuv loop behind N-API's: Deno answers
//! `napi_get_uv_event_loop` and exports `uv_idle_*`, but its idle handle never runs, and a
//! loop told it needs no wake-up would then sleep forever. So the `polling` word is set only
//! once the idle handle has been seen to run (`proven`): until then the engine wakes the loop
//! through the thread-safe function as when nothing polls, and the idle handle only takes what
//! it finds. On Node the handle runs in the same turn as the first write is sent, so only that
//! first write pays for a wake-up.
//!
//! Where no libuv can be had (`napi_get_uv_event_loop` fails, or on Windows node.exe does not
//! export it: an addon is not linked against the host there, so libuv's functions are looked
//! up in the host executable), the poller has no handle and never polls: every completion
//! wakes the loop through the thread-safe function.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;
use std::sync::Weak;
use std::time::{Duration, Instant};

use napi::sys;

use crate::handoff::mailbox::{self, Mailbox};
use crate::spin::SpinPolicy;
use crate::threads::Shared;

/// How long the loop keeps turning after the last write was sent or the last job completed.
const WINDOW: Duration = Duration::from_micros(50);

/// libuv's handle type number for `uv_idle_t` (uv.h: UV_HANDLE_TYPE_MAP order).
const UV_IDLE: i32 = 6;

/// The least memory given to the handle (libuv's `uv_idle_t` is 120 bytes on 64-bit Linux).
const HANDLE_MIN: usize = 256;

type Callback = unsafe extern "C" fn(*mut c_void);

/// The libuv functions the poller calls.
struct Uv {
    handle_size: unsafe extern "C" fn(i32) -> usize,
    idle_init: unsafe extern "C" fn(*mut c_void, *mut c_void) -> i32,
    idle_start: unsafe extern "C" fn(*mut c_void, Callback) -> i32,
    idle_stop: unsafe extern "C" fn(*mut c_void) -> i32,
    close: unsafe extern "C" fn(*mut c_void, Callback),
    unref: unsafe extern "C" fn(*mut c_void),
}

/// libuv as the host process exports it: resolved when the addon is loaded (Unix).
#[cfg(not(windows))]
fn uv() -> Option<&'static Uv> {
    extern "C" {
        fn uv_handle_size(kind: i32) -> usize;
        fn uv_idle_init(uv_loop: *mut c_void, handle: *mut c_void) -> i32;
        fn uv_idle_start(handle: *mut c_void, cb: Callback) -> i32;
        fn uv_idle_stop(handle: *mut c_void) -> i32;
        fn uv_close(handle: *mut c_void, cb: Callback);
        fn uv_unref(handle: *mut c_void);
    }
    static UV: Uv = Uv {
        handle_size: uv_handle_size,
        idle_init: uv_idle_init,
        idle_start: uv_idle_start,
        idle_stop: uv_idle_stop,
        close: uv_close,
        unref: uv_unref,
    };
    Some(&UV)
}

/// libuv as the host executable exports it, looked up once (Windows: the addon is not linked
/// against node.exe; napi-rs looks N-API up the same way). None if any is missing.
#[cfg(windows)]
fn uv() -> Option<&'static Uv> {
    static UV: std::sync::OnceLock<Option<Uv>> = std::sync::OnceLock::new();
    UV.get_or_init(|| {
        let host = libloading::os::windows::Library::this().ok()?;
        // SAFETY: each name is libuv's function of that signature (uv.h).
        let uv = unsafe {
            Uv {
                handle_size: *host.get(b"uv_handle_size\0").ok()?,
                idle_init: *host.get(b"uv_idle_init\0").ok()?,
                idle_start: *host.get(b"uv_idle_start\0").ok()?,
                idle_stop: *host.get(b"uv_idle_stop\0").ok()?,
                close: *host.get(b"uv_close\0").ok()?,
                unref: *host.get(b"uv_unref\0").ok()?,
            }
        };
        std::mem::forget(host); // the executable stays loaded: keep its functions' module
        Some(uv)
    })
    .as_ref()
}

pub struct Poller {
    env: sys::napi_env,
    /// libuv, and the `uv_idle_t`, its first field (`data`) pointing back here; None when no
    /// libuv can be had (then the poller never polls).
    uv: Option<(&'static Uv, *mut c_void)>,
    handler: sys::napi_ref,
    context: sys::napi_async_context,
    shared: Weak<Shared>,
    mailbox: Mailbox,
    running: Cell<bool>,
    /// The idle handle has run at least once: this loop does turn it (not so under Deno).
    proven: Cell<bool>,
    spin: SpinPolicy,
    closing: Cell<bool>,
    /// Inside `napi_make_callback`.
    calling: Cell<bool>,
    until: Cell<Instant>,
}

impl Poller {
    /// A stopped poller on the JS thread's loop, calling `handler` with completions. Freed by
    /// `close` (through libuv's close callback, if it has a handle), never otherwise.
    ///
    /// # Safety
    /// JS thread; `handler` a function.
    pub unsafe fn start(
        env: sys::napi_env,
        handler: sys::napi_value,
        shared: Weak<Shared>,
        mailbox: Mailbox,
    ) -> Result<*const Poller, String> {
        let mut uv_loop = ptr::null_mut();
        let uv = uv()
            .filter(|_| sys::napi_get_uv_event_loop(env, &mut uv_loop) == sys::Status::napi_ok && !uv_loop.is_null());
        let mut handler_ref = ptr::null_mut();
        sys::napi_create_reference(env, handler, 1, &mut handler_ref);
        let mut name = ptr::null_mut();
        sys::napi_create_string_utf8(env, c"resqlite".as_ptr(), 8, &mut name);
        let mut context = ptr::null_mut();
        sys::napi_async_init(env, ptr::null_mut(), name, &mut context);
        let uv = uv.map(|uv| {
            let layout = handle_layout(uv);
            let handle = std::alloc::alloc_zeroed(layout) as *mut c_void;
            if handle.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            (uv, handle)
        });
        let poller = Box::into_raw(Box::new(Poller {
            env,
            uv,
            handler: handler_ref,
            context,
            shared,
            mailbox,
            running: Cell::new(false),
            proven: Cell::new(false),
            spin: SpinPolicy::new(),
            closing: Cell::new(false),
            calling: Cell::new(false),
            until: Cell::new(Instant::now()),
        }));
        if let Some((uv, handle)) = (*poller).uv {
            (uv.idle_init)(uv_loop as *mut c_void, handle);
            *(handle as *mut *mut Poller) = poller;
            // The jobs in flight keep the process alive (the engine's ref), not this handle.
            (uv.unref)(handle);
        }
        Ok(poller)
    }

    /// A write was sent: keep the loop turning for at least WINDOW more — when the CPUs have
    /// room for it (spin.rs); otherwise the engine wakes the loop as when nothing polls.
    pub fn arm(&self) {
        let Some((uv, handle)) = self.uv else { return };
        if self.closing.get() {
            return;
        }
        let now = Instant::now();
        self.until.set(now + WINDOW);
        if !self.running.get() && self.spin.allowed(now) {
            self.running.set(true);
            // Until the handle has been seen to run, the engine still wakes the loop.
            if self.proven.get() {
                self.mailbox.set_polling(true);
            }
            // SAFETY: an initialised, open handle on this thread's loop.
            unsafe { (uv.idle_start)(handle, on_idle) };
        }
    }

    /// Stops the handle and frees it and this poller once libuv has closed it. Called from
    /// inside the handler (the database's close completing), it finishes once the handler
    /// has returned: the callback's async context is still in use until then.
    ///
    /// # Safety
    /// JS thread; once.
    pub unsafe fn close(this: *const Poller) {
        let p = &*this;
        p.closing.set(true);
        p.stop();
        if !p.calling.get() {
            Poller::finish_close(this);
        }
    }

    /// Frees the poller: at once if it has no handle, else once libuv has closed the handle.
    /// `this` is not used afterwards.
    unsafe fn finish_close(this: *const Poller) {
        let p = &*this;
        sys::napi_delete_reference(p.env, p.handler);
        sys::napi_async_destroy(p.env, p.context);
        match p.uv {
            Some((uv, handle)) => (uv.close)(handle, on_closed),
            None => drop(Box::from_raw(this as *mut Poller)),
        }
    }

    fn stop(&self) {
        if self.running.replace(false) {
            let Some((uv, handle)) = self.uv else { return };
            // SAFETY: as in arm.
            unsafe { (uv.idle_stop)(handle) };
            self.mailbox.set_polling(false);
        }
    }

    /// Hands every queued completion to the handler; true if there were any.
    unsafe fn deliver(&self) -> bool {
        let Some(shared) = self.shared.upgrade() else { return false };
        !self.closing.get()
            && self.mailbox.queued()
            && mailbox::deliver(self.env, &shared, self.mailbox, &mut |argv| {
                self.call_handler(argv);
                !self.closing.get()
            })
    }

    /// Calls the handler as a callback from the event loop: the microtasks it queues run
    /// before this returns, and a throw is an uncaught exception, as from any callback.
    unsafe fn call_handler(&self, argv: &[sys::napi_value]) {
        let (mut handler, mut global, mut result) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        sys::napi_get_reference_value(self.env, self.handler, &mut handler);
        sys::napi_get_global(self.env, &mut global);
        self.calling.set(true);
        let status =
            sys::napi_make_callback(self.env, self.context, global, handler, argv.len(), argv.as_ptr(), &mut result);
        self.calling.set(false);
        if status == sys::Status::napi_pending_exception {
            let mut error = ptr::null_mut();
            sys::napi_get_and_clear_last_exception(self.env, &mut error);
            sys::napi_fatal_exception(self.env, error);
        }
        if self.closing.get() {
            // Closed from inside the handler (only the idle handle calls it: a poller with one).
            Poller::finish_close(self);
        }
    }
}

/// Each turn of the loop while running: take what finished; stop when the window has passed
/// with nothing in flight or completing.
unsafe extern "C" fn on_idle(handle: *mut c_void) {
    let p = &**(handle as *const *const Poller);
    if !p.proven.replace(true) && p.running.get() {
        // The loop turns the handle: from now on it needs no wake-up while this runs. Set
        // before the look below, so a completion queued meanwhile is seen or woken for.
        p.mailbox.set_polling(true);
    }
    let took = p.deliver();
    if p.closing.get() {
        return;
    }
    let now = Instant::now();
    if took {
        p.until.set(now + WINDOW);
    }
    if (took || p.mailbox.writes_in_flight() > 0) && now < p.until.get() {
        return;
    }
    p.stop();
    // `polling` is cleared before this last look (the engine sets `queued` before it reads
    // `polling`): a completion queued meanwhile is either seen here or woken for.
    p.deliver();
    if !p.closing.get() {
        // Tell JS polling ended (it may let the process exit now): a call without a batch.
        let mut scope = ptr::null_mut();
        sys::napi_open_handle_scope(p.env, &mut scope);
        p.call_handler(&[]);
        sys::napi_close_handle_scope(p.env, scope);
    }
}

unsafe extern "C" fn on_closed(handle: *mut c_void) {
    let poller = *(handle as *const *mut Poller);
    let (uv, _) = (*poller).uv.expect("a closed handle");
    drop(Box::from_raw(poller));
    std::alloc::dealloc(handle as *mut u8, handle_layout(uv));
}

/// Memory for a `uv_idle_t`, whose size only libuv knows. At least HANDLE_MIN bytes: a
/// runtime's stand-in for libuv may answer less (or nothing) and still write the handle.
fn handle_layout(uv: &Uv) -> std::alloc::Layout {
    // SAFETY: a plain query of a constant.
    let size = unsafe { (uv.handle_size)(UV_IDLE) };
    std::alloc::Layout::from_size_align(size.max(HANDLE_MIN), 16).expect("uv_idle_t size")
}
