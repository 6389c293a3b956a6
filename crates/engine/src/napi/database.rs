//! `NativeDatabase`, the object JS holds (see src/native.ts for the JS-side contract): it
//! starts the threads, and hands them what JS asks for beyond the per-job calls.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use crate::functions::{set_js_env, Callers, FunctionHost, Functions, Kind};
use crate::handoff::mailbox::{deliver_completions, finalize_context, CallbackContext, Mailbox, TsfnWaker};
use crate::handoff::poller::Poller;
use crate::js::args::LastArgs;
use crate::js::ascii_or_utf8;
use crate::sqlite::connection::InvalidUtf8;
use crate::sqlite::encryption::KeyConfig;
use crate::sqlite::extensions::Extension;
use crate::sqlite::setup::Synchronous;
use crate::sqlite::statement_cache::ColumnNames;
use crate::threads::job::{IterateStep, Job, Request};
use crate::threads::{Pool, PoolOptions, Shared};

#[napi]
pub struct NativeDatabase {
    pub(super) pool: Pool,
    tsfn: sys::napi_threadsafe_function,
    /// Keeps the mailbox's ArrayBuffer alive until `release`.
    mailbox_ref: sys::napi_ref,
    /// Takes completions while writes are in flight; null once released.
    poller: *const Poller,
    /// Argument of the env cleanup hook, removed with the hook on release.
    cleanup: *mut Teardown,
    /// `db.function` and `db.aggregate` definitions (functions/).
    functions: Arc<Functions>,
    /// The id of the column names `readInline` last handed to JS as a string (0: none yet).
    last_names: Cell<u64>,
    /// The SQL and params `readInline` was last given.
    pub(super) last_args: LastArgs,
    /// The vector `readInline` collects its handler's arguments in, kept between calls for its
    /// capacity: one allocated and freed per call was about 2 % of a point select's time
    /// (experiments/059). A call made while another runs (from a handler) makes its own.
    pub(super) handler_args: Cell<Vec<sys::napi_value>>,
    /// The Float64Array JS shares for results of numbers (`readInline`, `writeInline`;
    /// `shareNumbers`), as its address and length. JS keeps it for as long as it can call them
    /// (src/js-thread/inline.ts), and its bytes do not move (an off-heap typed array's never do).
    numbers: Cell<(*mut f64, usize)>,
}

/// What the env cleanup hook detaches when a worker's environment ends before `close()`.
struct Teardown {
    shared: std::sync::Weak<Shared>,
    poller: *const Poller,
    functions: Arc<FunctionHost>,
}

/// What the constructor takes besides the completion handler (src/native.ts `OpenOptions`).
#[napi(object, object_to_js = false)]
pub struct OpenOptions<'a> {
    pub path: String,
    pub readers: u32,
    pub busy_timeout: u32,
    pub readonly: bool,
    pub safe_integers: bool,
    /// The ArrayBuffer shared with JS (handoff/mailbox.rs; protocol.rs `MAILBOX_*`).
    pub mailbox: Unknown<'a>,
    pub open_id: u32,
    /// None: no encryption.
    pub encryption: Option<Encryption>,
    /// Attached on every connection: [schema name, file path] pairs.
    pub attach: Vec<(String, String)>,
    /// Open a read-only connection for reads on the JS thread (js_thread/runs.rs). Default false.
    pub inline: Option<bool>,
    /// Leave checkpoints to another process (e.g. Litestream): none from any connection. Default false.
    pub external_checkpoints: Option<bool>,
    /// Loaded on every connection as it opens (sqlite/extensions.rs).
    pub extensions: Option<Vec<ExtensionSpec>>,
    /// TEXT that is not valid UTF-8 reads with U+FFFD replacements instead of failing
    /// (sqlite/step.rs `InvalidUtf8`). Default false.
    pub replace_invalid_utf8: Option<bool>,
    /// Reader connections unused this many milliseconds close (threads/executor.rs); u32::MAX:
    /// never.
    pub idle_timeout: u32,
    /// Every connection opens through the VFS of this name (sqlite/vfs.rs). Default: SQLite's.
    pub vfs: Option<String>,
    /// `'normal'` or `'full'`: `PRAGMA synchronous` on every connection (sqlite/setup.rs).
    /// Default `'normal'`.
    pub synchronous: Option<String>,
}

/// An extension library and its entry point (none: SQLite derives it from the file name).
#[napi(object, object_to_js = false)]
pub struct ExtensionSpec {
    pub path: String,
    pub entry_point: Option<String>,
}

/// A cipher and its key, checked on the JS side (src/cipher.ts); the engine copies the key.
#[napi(object, object_to_js = false)]
pub struct Encryption {
    pub cipher: Cipher,
    /// Empty: no encryption.
    pub key: Uint8Array,
}

/// A cipher's name, and sqlite3mc's parameter names and values for it, in order.
#[napi(object, object_to_js = false)]
pub struct Cipher {
    pub name: String,
    pub names: Vec<String>,
    pub values: Vec<i32>,
}

/// What `diagnostics()` reports.
#[napi(object)]
pub struct EngineDiagnostics {
    /// Live queries running.
    pub queries: f64,
    pub requeries: f64,
    pub skipped_by_columns: f64,
    pub unchanged_suppressed: f64,
    pub fallback_all: f64,
    pub page_cache_bytes: f64,
    pub schema_bytes: f64,
    pub statement_bytes: f64,
    /// Group commits, and the writes they committed.
    pub groups: f64,
    pub grouped_writes: f64,
    /// Times an engine thread stepped aside for the JS thread (threads/step_aside.rs).
    pub stepped_aside: f64,
    /// How long a snapshot has kept the WAL from starting over (threads/checkpoint.rs), ms.
    pub wal_held_ms: f64,
}

/// The rows writes changed since the last take (`takeRowChanges`, sqlite/row_changes.rs): row
/// `i` is `kinds[i]` (0 insert, 1 update, 2 delete) of row `rowids[i]` in table
/// `tables[tableOf[i]]`, given as "schema\0table".
#[napi(object)]
pub struct RowChangesTaken {
    pub tables: Vec<String>,
    pub kinds: Uint8Array,
    pub table_of: Uint32Array,
    /// As node-sqlite3 gives them: numbers (a rowid beyond ±(2^53 − 1) is rounded).
    pub rowids: Float64Array,
    /// Rows changed past the rows kept (`MAX_PENDING`): not delivered.
    pub dropped: f64,
}

/// The key settings to open or rekey with (`None`: none, unencrypted).
fn key_config(encryption: Option<Encryption>) -> Result<Option<Arc<KeyConfig>>> {
    let Some(Encryption { cipher, key }) = encryption else { return Ok(None) };
    KeyConfig::new(&cipher.name, cipher.names, cipher.values, &key)
        .map_err(|e| Error::new(Status::InvalidArg, e.message))
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
    /// Opens the database on an engine thread. Completion `options.open_id` reports the
    /// open; `on_complete` is the handler every batch of completions is handed to
    /// (handoff/mailbox.rs).
    #[napi(constructor)]
    pub fn new(env: Env, options: OpenOptions, on_complete: Unknown) -> Result<Self> {
        let OpenOptions {
            path,
            readers,
            busy_timeout,
            readonly,
            safe_integers,
            mailbox,
            open_id,
            encryption,
            attach,
            inline,
            external_checkpoints,
            extensions,
            replace_invalid_utf8,
            idle_timeout,
            vfs,
            synchronous,
        } = options;
        // Checked before anything starts: a bad cipher setting must not touch the file.
        let key = key_config(encryption)?;
        let synchronous = match synchronous.as_deref() {
            None => Synchronous::Normal,
            Some(value) => Synchronous::parse(value)
                .ok_or_else(|| Error::new(Status::InvalidArg, "synchronous must be 'normal' or 'full'"))?,
        };
        let raw_env = env.raw();
        set_js_env(raw_env);
        let replace_invalid_utf8 = replace_invalid_utf8.unwrap_or(false);
        let functions =
            Arc::new(Functions::new(Arc::new(FunctionHost::new(raw_env, safe_integers, replace_invalid_utf8))));
        // SAFETY: JS thread; the buffer's memory stays put while the reference holds it.
        let (mailbox, mailbox_ref) = unsafe { Mailbox::from_js(raw_env, mailbox.raw()) }
            .map_err(|message| Error::new(Status::InvalidArg, message))?;
        let context = Box::into_raw(Box::new(CallbackContext { shared: std::sync::Weak::new(), mailbox }));
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
        let pool = Pool::start(
            PoolOptions {
                path,
                readers: readers as usize,
                busy_timeout_ms: busy_timeout,
                readonly,
                safe_integers,
                key,
                attach,
                extensions: extensions
                    .unwrap_or_default()
                    .into_iter()
                    .map(|e| Extension { path: e.path, entry_point: e.entry_point })
                    .collect(),
                inline: inline.unwrap_or(false),
                external_checkpoints: external_checkpoints.unwrap_or(false),
                invalid_utf8: if replace_invalid_utf8 { InvalidUtf8::Replace } else { InvalidUtf8::Error },
                functions: Some(functions.clone()),
                idle_timeout: match idle_timeout {
                    u32::MAX => std::time::Duration::MAX, // Infinity: never
                    ms => std::time::Duration::from_millis(ms.into()),
                },
                vfs,
                synchronous,
            },
            open_id,
            Box::new(TsfnWaker { tsfn, mailbox }),
        );
        // SAFETY: context lives until finalize_context. The TSFN callback runs on this (the JS)
        // thread, so it cannot run before this constructor returns and the store is seen.
        unsafe { (*context).shared = Arc::downgrade(&pool.shared) };
        // SAFETY: JS thread; on_complete is the handler function.
        let poller = unsafe { Poller::start(raw_env, on_complete.raw(), Arc::downgrade(&pool.shared), mailbox) }
            .map_err(|message| Error::new(Status::GenericFailure, message))?;
        // A worker thread may end without closing the database: detach from its environment
        // then, so no reader calls into a thread-safe function that no longer exists.
        let cleanup = Box::into_raw(Box::new(Teardown {
            shared: Arc::downgrade(&pool.shared),
            poller,
            functions: functions.host().clone(),
        }));
        // SAFETY: JS thread; the hook and its argument live until `release` removes them.
        check(unsafe { sys::napi_add_env_cleanup_hook(raw_env, Some(detach_on_teardown), cleanup as *mut c_void) })?;
        Ok(NativeDatabase {
            pool,
            tsfn,
            mailbox_ref,
            poller,
            cleanup,
            functions,
            last_names: Cell::new(0),
            last_args: LastArgs::default(),
            handler_args: Cell::new(Vec::new()),
            numbers: Cell::new((ptr::null_mut(), 0)),
        })
    }

    /// Defines a JavaScript function for every connection, or replaces one of the same name and
    /// `n_arg` (-1: any number). `kind`: 0 scalar, 1 aggregate, 2 window. `callers`, as
    /// src/functions.ts makes them: a scalar's caller; an aggregate's step, [inverse,] result,
    /// and the caller of steps handed over together.
    /// `later` serves calls handed over from engine threads on a later turn of the loop.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn define_function(
        &self,
        env: Env,
        name: String,
        n_arg: i32,
        kind: u32,
        deterministic: bool,
        direct_only: bool,
        callers: Vec<Unknown>,
        later: Unknown,
    ) -> Result<()> {
        let kind = match (kind, callers.len()) {
            (0, 1) => Kind::Scalar,
            (1, 3) => Kind::Aggregate,
            (2, 4) => Kind::Window,
            _ => {
                return Err(Error::new(
                    Status::InvalidArg,
                    format!("defineFunction: kind {kind}, {} callers", callers.len()),
                ))
            }
        };
        let name = std::ffi::CString::new(name)
            .map_err(|_| Error::new(Status::InvalidArg, "the name holds a NUL character"))?;
        // The connections run with trusted_schema off (sqlite/setup.rs), where SQLite refuses a
        // function in a trigger, view, index or CHECK unless it is innocuous. The application
        // defined it, so it is, unless it asked for directOnly (docs/api.md "Functions").
        let flags = if deterministic { sqlite3mc_sys::SQLITE_DETERMINISTIC } else { 0 }
            | if direct_only { sqlite3mc_sys::SQLITE_DIRECTONLY } else { sqlite3mc_sys::SQLITE_INNOCUOUS };
        let host = self.functions.host();
        // SAFETY: JS thread; `later` and the callers are JS functions (src/functions.ts).
        unsafe {
            check(FunctionHost::enable(host, env.raw(), later.raw()))?;
            let raw: Vec<sys::napi_value> = callers.iter().map(|c| c.raw()).collect();
            let callers = Arc::new(Callers::new(env.raw(), &raw));
            host.keep(callers.clone());
            self.functions.define(name, n_arg, flags, kind, callers);
        }
        // A read calling it runs on the JS thread's own connection, a slice at a time: that
        // connection opens now, not on such a read (which would go to a reader meanwhile).
        self.pool.shared.open_inline_later();
        Ok(())
    }

    /// Serves JavaScript function calls handed over by engine threads, for one slice; true when
    /// more wait (JS calls again on a later turn).
    #[napi]
    pub fn serve_function_calls(&self, env: Env) -> bool {
        // SAFETY: the JS thread that made the database.
        unsafe { self.functions.host().serve(env.raw()) }
    }

    /// Starts live query `id` (its first run is queued now); its results arrive as
    /// DONE_LIVE_ROWS / DONE_LIVE_ERROR completions until `live_stop`.
    #[napi]
    pub fn live_start(&self, id: u32, sql: String, params: &[u8], params_len: u32) {
        self.pool.live_start(id, sql, params[..params_len as usize].to_vec());
    }

    #[napi]
    pub fn live_stop(&self, id: u32) {
        self.pool.live_stop(id);
    }

    /// A step of iteration `cursor` (threads/iterate.rs) as job `id`: 0 starts it (`sql`,
    /// `params`, `page_rows`; `id` is then the cursor's), 1 asks for the next page, 2 ends it.
    /// Pages arrive as DONE_PAGE, the last as DONE_ROWS. `in_transaction`: on the writer's
    /// connection, inside the open transaction; false when there is no writer.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn iterate(
        &self,
        id: u32,
        cursor: u32,
        step: u32,
        sql: String,
        params: &[u8],
        params_len: u32,
        page_rows: u32,
        in_transaction: bool,
    ) -> Result<bool> {
        let step = match step {
            0 if page_rows > 0 => IterateStep::Start { page_rows: page_rows as usize },
            1 => IterateStep::Next,
            2 => IterateStep::End,
            _ => return Err(Error::new(Status::InvalidArg, format!("iterate: step {step}, pageRows {page_rows}"))),
        };
        let params = params.get(..params_len as usize).unwrap_or_default().to_vec();
        let job = Job {
            id,
            request: Request::Iterate { cursor, step },
            sql,
            params,
            cancellable: false,
            in_transaction,
            queued: None,
        };
        if in_transaction {
            let sent = self.pool.write(job);
            if sent {
                self.poll_for_completions();
            }
            return Ok(sent);
        }
        self.pool.read(job);
        Ok(true)
    }

    /// Live-query counters, SQLite's memory use and group commits.
    #[napi]
    pub fn diagnostics(&self) -> EngineDiagnostics {
        let d = self.pool.diagnostics();
        let c = d.counters;
        EngineDiagnostics {
            queries: d.queries as f64,
            requeries: c.requeries as f64,
            skipped_by_columns: c.skipped_by_columns as f64,
            unchanged_suppressed: c.unchanged_suppressed as f64,
            fallback_all: c.fallback_all as f64,
            page_cache_bytes: d.page_cache_bytes as f64,
            schema_bytes: d.schema_bytes as f64,
            statement_bytes: d.statement_bytes as f64,
            groups: d.group_commits.groups as f64,
            grouped_writes: d.group_commits.writes as f64,
            stepped_aside: d.stepped_aside as f64,
            wal_held_ms: d.wal_held_ms as f64,
        }
    }

    /// Queues a rekey on the writer: no `encryption` (or an empty key) decrypts. False when
    /// there is no writer.
    #[napi]
    pub fn rekey(&self, id: u32, encryption: Option<Encryption>) -> Result<bool> {
        let key = key_config(encryption)?;
        let job = Job {
            id,
            request: Request::Rekey(key),
            sql: String::new(),
            params: Vec::new(),
            cancellable: false,
            in_transaction: false,
            queued: None,
        };
        Ok(self.pool.write(job))
    }

    /// Starts (or stops) recording the rows the writer's connection changes, for resqlite/sqlite3's
    /// 'change' event; taken with `take_row_changes`.
    #[napi]
    pub fn listen_row_changes(&self, on: bool) {
        self.pool.shared.row_changes.listen(on);
    }

    /// The rows changed since the last take, or null.
    #[napi]
    pub fn take_row_changes(&self) -> Option<RowChangesTaken> {
        let taken = self.pool.shared.row_changes.take()?;
        Some(RowChangesTaken {
            tables: taken.tables.into_iter().map(|(schema, table)| format!("{schema}\0{table}")).collect(),
            kinds: Uint8Array::new(taken.kinds),
            table_of: Uint32Array::new(taken.table_of),
            rowids: Float64Array::new(taken.rowids.into_iter().map(|r| r as f64).collect()),
            dropped: taken.dropped as f64,
        })
    }

    /// Starts a backup into the new file `destination`; PROGRESS completions report its steps.
    #[napi]
    pub fn backup(&self, id: u32, destination: String) {
        self.pool.backup(id, destination);
    }

    /// Starts a backup into the new file `destination` that pauses between the steps asked for
    /// (resqlite/sqlite3's Backup); `id` completes once it is ready, and names it afterwards.
    #[napi]
    pub fn backup_start(&self, id: u32, destination: String) {
        self.pool.backup_start(id, destination);
    }

    /// Job `id`: a step of up to `pages` pages of paused backup `backup` (all left when
    /// negative): a PROGRESS completion, then STEPPED or the error.
    #[napi]
    pub fn backup_step(&self, id: u32, backup: u32, pages: i32) {
        self.pool.backup_step(id, backup, pages);
    }

    /// Job `id`: finishes paused backup `backup`.
    #[napi]
    pub fn backup_finish(&self, id: u32, backup: u32) {
        self.pool.backup_finish(id, backup);
    }

    #[napi]
    pub fn interrupt_writer(&self) {
        self.pool.interrupt_writer();
    }

    #[napi]
    pub fn cancel(&self, id: u32) {
        self.pool.cancel(id);
    }

    /// Finishes queued jobs, joins every thread off the JS thread, then completes `close_id`.
    #[napi]
    pub fn close(&mut self, close_id: u32) {
        self.pool.close(close_id);
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
                Poller::close(self.poller);
                sys::napi_delete_reference(env.raw(), self.mailbox_ref);
                self.functions.host().release(env.raw());
            }
            self.tsfn = ptr::null_mut();
            self.poller = ptr::null();
        }
    }
}

impl NativeDatabase {
    /// Keeps the process alive while jobs are pending (`on`), or lets it exit.
    ///
    /// # Safety
    /// JS thread.
    pub(crate) unsafe fn keep_alive(&self, env: sys::napi_env, on: bool) -> sys::napi_status {
        if self.tsfn.is_null() {
            return sys::Status::napi_ok; // released
        }
        if on {
            sys::napi_ref_threadsafe_function(env, self.tsfn)
        } else {
            sys::napi_unref_threadsafe_function(env, self.tsfn)
        }
    }

    /// A result's column names as `readInline` hands them to its handler: null when they are
    /// the ones it handed over last time (the statement run again, most often), which JS still
    /// holds (src/js-thread/inline.ts `handle`), else joined by NUL. Making the string was about 2 % of a
    /// point select's instructions (experiments/059).
    ///
    /// # Safety
    /// JS thread, inside a call from JS.
    pub(super) unsafe fn names_for_js(&self, env: sys::napi_env, names: Option<&ColumnNames>) -> sys::napi_value {
        let id = names.map_or(0, |n| n.id);
        if id != 0 && id == self.last_names.get() {
            let mut null = ptr::null_mut();
            sys::napi_get_null(env, &mut null);
            return null;
        }
        self.last_names.set(id);
        ascii_or_utf8(env, names.map_or("", |n| &n.joined))
    }

    /// Shares `len` numbers at `data` with JS (`shareNumbers`).
    pub(super) fn share_numbers(&self, data: *mut f64, len: usize) {
        self.numbers.set((data, len));
    }

    /// The numbers JS shares, if it does: valid for the `readInline` or `writeInline` call that
    /// asks.
    pub(super) fn shared_numbers<'a>(&self) -> Option<&'a mut [f64]> {
        let (data, len) = self.numbers.get();
        // SAFETY: JS keeps the array alive while it can call readInline and writeInline; only
        // they write it, and JS reads it after the call returns.
        (!data.is_null() && len > 1).then(|| unsafe { std::slice::from_raw_parts_mut(data, len) })
    }

    /// The id of the column names JS holds from `readInline` (0: none).
    pub(super) fn names_held(&self) -> u64 {
        self.last_names.get()
    }

    /// A write was sent: the loop polls for its completion (handoff/poller.rs).
    pub(super) fn poll_for_completions(&self) {
        if !self.poller.is_null() {
            // SAFETY: not yet released, so the poller is alive; JS thread.
            unsafe { (*self.poller).arm() };
        }
    }
}

unsafe extern "C" fn detach_on_teardown(arg: *mut c_void) {
    let teardown = Box::from_raw(arg as *mut Teardown);
    if let Some(shared) = teardown.shared.upgrade() {
        shared.completions.detach();
    }
    teardown.functions.close();
    Poller::close(teardown.poller);
}

/// What `Database.processDiagnostics()` reports: the engine's threads, shared by every database
/// in the process, and the open databases' connections and queues (threads/executor.rs).
#[napi(object)]
#[cfg_attr(test, allow(dead_code))] // called from JS only
pub struct ProcessDiagnostics {
    pub threads: f64,
    pub idle_threads: f64,
    pub max_threads: f64,
    pub threads_started: f64,
    pub sessions_waiting: f64,
    pub databases: f64,
    pub connections: f64,
    pub idle_closed: f64,
    pub reads_queued: f64,
    pub writes_queued: f64,
}

#[napi]
#[cfg_attr(test, allow(dead_code))] // called from JS only
pub fn process_diagnostics() -> ProcessDiagnostics {
    let d = crate::threads::executor::diagnostics();
    ProcessDiagnostics {
        threads: d.threads as f64,
        idle_threads: d.idle_threads as f64,
        max_threads: d.max_threads as f64,
        threads_started: d.threads_started as f64,
        sessions_waiting: d.sessions_waiting as f64,
        databases: d.databases as f64,
        connections: d.connections as f64,
        idle_closed: d.idle_closed as f64,
        reads_queued: d.reads_queued as f64,
        writes_queued: d.writes_queued as f64,
    }
}
/// What a failed `load_extension_process_wide` reports; JS rejects with it as a ResqliteError.
// The unit tests call sqlite/vfs.rs directly: these JS entry points are dead code there.
#[cfg_attr(test, allow(dead_code))]
#[napi(object)]
pub struct LoadFailure {
    pub code: String,
    pub message: String,
}

/// `load_extension_process_wide`'s work, on libuv's thread pool: loading runs the library's
/// initialisers (Litestream's starts the Go runtime), which the event loop need not wait for.
#[cfg_attr(test, allow(dead_code))]
pub struct LoadProcessWide(Option<Extension>);

impl Task for LoadProcessWide {
    type Output = Option<LoadFailure>;
    type JsValue = Option<LoadFailure>;

    fn compute(&mut self) -> Result<Self::Output> {
        let extension = self.0.take().expect("computed once");
        Ok(crate::sqlite::vfs::load_process_wide(&extension)
            .err()
            .map(|e| LoadFailure { code: e.code.into_owned(), message: e.message }))
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output)
    }
}

/// Loads an extension once for the whole process (sqlite/vfs.rs): for one that registers a VFS,
/// before a database opens through it. Resolves with what failed, or null.
#[cfg_attr(test, allow(dead_code))]
#[napi(ts_return_type = "Promise<LoadFailure | null>")]
pub fn load_extension_process_wide(path: String, entry_point: Option<String>) -> AsyncTask<LoadProcessWide> {
    AsyncTask::new(LoadProcessWide(Some(Extension { path, entry_point })))
}

/// A per-job call's first `N` arguments (undefined for those not given), how many JS gave, and
/// the database the call is bound to (`job_calls`).
///
/// # Safety
/// JS thread, inside a call of a function `job_calls` made.
pub(super) unsafe fn call_args<'a, const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> ([sys::napi_value; N], usize, &'a NativeDatabase) {
    let mut argv = [ptr::null_mut(); N];
    let mut argc = N;
    let mut data = ptr::null_mut();
    sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data);
    (argv, argc, &*(data as *const NativeDatabase))
}
