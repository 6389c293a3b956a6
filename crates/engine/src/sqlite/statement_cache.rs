//! Per-connection LRU cache of prepared statements, keyed by SQL text. What the connection's
//! owner learns about a statement while SQLite compiles it (live/hooks.rs: what it reads and
//! does, from the authorizer) is kept with it as its `facts`, whose type the owner chooses
//! (`Compiling`): `sqlite` needs nothing from the layers above it.

use std::cell::{Cell, RefCell};
use std::ffi::CStr;
use std::num::NonZeroUsize;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use lru::LruCache;
use sqlite3mc_sys as ffi;

use crate::error::{code, DbError, DbResult};
use crate::sqlite::connection::Connection;
use crate::sqlite::step::column_names;

/// Statements kept prepared per connection; the original's measured working-set size.
pub const STATEMENT_CACHE_CAPACITY: usize = 128;

/// What a connection's owner learns about each statement it compiles.
pub trait Compiling {
    type Facts;
    /// Before SQLite compiles the statement.
    fn start(&self);
    /// After SQLite compiled the text's first statement.
    fn facts(&self, conn: &Connection) -> Self::Facts;
    /// An error that refuses the statement, reported instead of SQLite's own (an authorizer's
    /// refusal fails the compile) or after a successful compile.
    fn take_refusal(&self) -> Option<DbError>;
    /// Whether a statement compiled with these facts may run again as it is (no schema change
    /// since).
    fn current(&self, facts: &Self::Facts) -> bool;
}

/// Owners keep their hooks boxed (SQLite holds their address).
impl<C: Compiling> Compiling for Box<C> {
    type Facts = C::Facts;
    fn start(&self) {
        (**self).start()
    }
    fn facts(&self, conn: &Connection) -> C::Facts {
        (**self).facts(conn)
    }
    fn take_refusal(&self) -> Option<DbError> {
        (**self).take_refusal()
    }
    fn current(&self, facts: &C::Facts) -> bool {
        (**self).current(facts)
    }
}

/// A prepared statement and what we learned about it at prepare time.
pub struct Statement<F> {
    pub raw: *mut ffi::sqlite3_stmt,
    /// Parameter names without their `:`/`@`/`$` prefix; `None` for `?` and `?NNN`.
    pub param_names: Vec<Option<Box<str>>>,
    pub readonly: bool,
    /// What its owner learned while it compiled (`Compiling`).
    pub facts: F,
    /// More statements follow this one in the SQL text.
    pub has_tail: bool,
    /// Sizes of this statement's last result, to allocate the next one's buffers once
    /// instead of regrowing them (experiments/004).
    pub last_size: Cell<ResultSize>,
    /// How long its last run on a reader took (µs; 0: not run there yet). A read known to be
    /// slow runs outside a batch (threads/reader.rs).
    pub last_micros: Cell<u32>,
    /// On the JS thread's connection (js_thread/runs.rs): how it backs off after overrunning its budget
    /// there, run whole, and run a slice at a time (a select calling JavaScript functions).
    pub inline: Backoff,
    pub sliced: Backoff,
    /// On the writer's connection: whether its program is bounded (bounded.rs), judged when
    /// SQLite had re-prepared it the given number of times.
    pub bounded: Cell<Option<(i32, bool)>>,
    /// Whether it calls a JavaScript function (bounded.rs `calls_js_function`), judged as
    /// `bounded` is.
    pub calls_js: Cell<Option<(i32, bool)>>,
    /// Its column names, for runs on the JS thread (js_thread/runs.rs), read again after a re-prepare.
    names: RefCell<Option<Rc<ColumnNames>>>,
    /// Which parameters are bound to bytes in the job's parameter buffer (text and blobs, bound
    /// without a copy): bit i for parameter i + 1, bit 63 for the 64th and every later one.
    /// `ResetOnDrop` unbinds just these (experiments/068).
    pub pointer_params: Cell<u64>,
}

/// A statement's column names, and joined by NUL (as a result's names reach JS).
pub struct ColumnNames {
    pub list: Vec<String>,
    pub joined: String,
    /// Unique in the process: a JS thread that was handed these names last time can be told
    /// "the same again" instead of being given a new string (napi/inline_calls.rs).
    pub id: u64,
    /// SQLite's re-prepare count when they were read.
    reprepared: i32,
}

impl<F> Statement<F> {
    /// How many times SQLite has re-prepared it (after schema changes): its program and its
    /// columns may have changed since.
    pub fn reprepared(&self) -> i32 {
        // SAFETY: valid statement.
        unsafe { ffi::sqlite3_stmt_status(self.raw, ffi::SQLITE_STMTSTATUS_REPREPARE, 0) }
    }

    /// Its column names: read once, and again after SQLite re-prepared it. Call after the first
    /// step (where a re-prepare happens).
    pub fn column_names(&self) -> Rc<ColumnNames> {
        let reprepared = self.reprepared();
        if let Some(names) = self.names.borrow().as_ref().filter(|n| n.reprepared == reprepared) {
            return names.clone();
        }
        let list = column_names(self.raw);
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let names = Rc::new(ColumnNames { joined: list.join("\0"), list, id, reprepared });
        *self.names.borrow_mut() = Some(names.clone());
        names
    }
}

#[derive(Clone, Copy, Default)]
pub struct ResultSize {
    pub cells: usize,
    /// TEXT and BLOB bytes.
    pub arena: usize,
    pub json: usize,
}

impl ResultSize {
    /// Hints above this are not trusted: one huge result should not make every later
    /// small one allocate as much.
    const MAX_HINT: usize = 64 << 20;

    pub fn capped(self) -> ResultSize {
        let cap = |n: usize| n.min(Self::MAX_HINT);
        ResultSize { cells: cap(self.cells), arena: cap(self.arena), json: cap(self.json) }
    }
}

impl<F> Drop for Statement<F> {
    fn drop(&mut self) {
        // SAFETY: `raw` came from sqlite3_prepare_v3 and is finalized exactly once.
        unsafe { ffi::sqlite3_finalize(self.raw) };
    }
}

pub struct StatementCache<F> {
    lru: LruCache<Box<str>, Statement<F>>,
}

impl<F> StatementCache<F> {
    pub fn new() -> Self {
        StatementCache { lru: LruCache::new(NonZeroUsize::new(STATEMENT_CACHE_CAPACITY).unwrap()) }
    }

    /// How long `sql`'s last run took (µs), if it is cached and has run.
    pub fn last_micros(&self, sql: &str) -> u32 {
        self.lru.peek(sql).map_or(0, |stmt| stmt.last_micros.get())
    }

    /// Records how long a run of `sql` took, if it is cached.
    pub fn record_micros(&self, sql: &str, micros: u32) {
        if let Some(stmt) = self.lru.peek(sql) {
            stmt.last_micros.set(micros.max(1));
        }
    }

    /// The cached statement for `sql`, preparing it on a miss, or again when the schema may
    /// have changed since it was (its effects name tables and columns by the old schema). An
    /// evicted or replaced statement is finalized by its Drop.
    pub fn get<C: Compiling<Facts = F>>(&mut self, conn: &Connection, hooks: &C, sql: &str) -> DbResult<&Statement<F>> {
        conn.sync_functions();
        // The most recently used statement is found without hashing the SQL, and is the one
        // asked for when a statement runs again and again (experiments/059). Otherwise `get`
        // makes the one found the most recently used, as `put` does a new one.
        let again = self.lru.peek_mru().is_some_and(|(cached, _)| **cached == *sql);
        let current = (again || self.lru.get(sql).is_some())
            && self.lru.peek_mru().is_some_and(|(_, stmt)| hooks.current(&stmt.facts));
        if !current {
            self.lru.put(sql.into(), prepare(conn, hooks, sql)?);
        }
        Ok(self.lru.peek_mru().expect("just used or inserted").1)
    }
}

/// A statement outside any cache (an iteration's: encode/pages.rs), or for the cache.
pub fn prepare<C: Compiling>(conn: &Connection, hooks: &C, sql: &str) -> DbResult<Statement<C::Facts>> {
    let bytes = sql.as_bytes();
    super::connection::refuse_nul(sql)?;
    hooks.start();
    let (stmt, consumed) = conn
        .prepare_at(bytes, ffi::SQLITE_PREPARE_PERSISTENT)
        .map_err(|e| hooks.take_refusal().unwrap_or(e))?
        .ok_or_else(|| DbError::new(code::ERR_EMPTY_STATEMENT, "the SQL holds no statement"))?;
    let facts = hooks.facts(conn);
    // Anything but whitespace and comments after the first statement is another statement
    // (one that fails to prepare now, e.g. on a table the first creates, counts too). One the
    // authorizer refuses (a key PRAGMA) is refused before the first runs.
    let has_tail = conn.prepare_at(&bytes[consumed..], 0).map_or(true, |next| next.is_some());
    if let Some(refusal) = hooks.take_refusal() {
        return Err(refusal);
    }
    let raw = stmt.into_raw();
    // SAFETY: raw is a valid statement; parameter names are copied at once.
    let (param_names, readonly) = unsafe {
        let names = (1..=ffi::sqlite3_bind_parameter_count(raw))
            .map(|i| {
                let name = ffi::sqlite3_bind_parameter_name(raw, i);
                if name.is_null() {
                    return None;
                }
                let name = CStr::from_ptr(name).to_string_lossy();
                // `?NNN` parameters are reported with their `?`: they are positional.
                if name.starts_with('?') {
                    None
                } else {
                    Some(name[1..].into())
                }
            })
            .collect();
        (names, ffi::sqlite3_stmt_readonly(raw) != 0)
    };
    Ok(Statement {
        raw,
        param_names,
        readonly,
        facts,
        has_tail,
        last_size: Cell::default(),
        last_micros: Cell::new(0),
        inline: Backoff::default(),
        sliced: Backoff::default(),
        bounded: Cell::new(None),
        pointer_params: Cell::new(0),
        calls_js: Cell::new(None),
        names: RefCell::new(None),
    })
}

/// Runs still to send straight to a thread since the statement last overran its budget on the
/// JS thread, and how many it skips after its next overrun (js_thread/runs.rs `back_off`).
#[derive(Default)]
pub struct Backoff {
    pub skip: Cell<u32>,
    pub backoff: Cell<u32>,
}

/// Resets a statement when the job is done with it, on every path (including a panic), and
/// unbinds the parameters bound to the job's parameter buffer, so no binding outlives it.
///
/// Numbers stay bound: `sqlite3_clear_bindings` expires every statement whose plan SQLite
/// weighs by a bound value (a `col = ?` term beside a join or an ORDER BY), and its next run
/// would compile it again even for the same value (experiments/068).
///
/// It keeps a pointer, not a borrow, so the job can still use its worker.
pub struct ResetOnDrop<F>(*const Statement<F>);

impl<F> ResetOnDrop<F> {
    pub fn new(stmt: &Statement<F>) -> Self {
        ResetOnDrop(stmt)
    }
}

impl<F> Drop for ResetOnDrop<F> {
    fn drop(&mut self) {
        // SAFETY: the statement is alive in the cache (at its address: the cache boxes its
        // entries) for the duration of the job.
        unsafe {
            let stmt = &*self.0;
            let raw = stmt.raw;
            ffi::sqlite3_reset(raw);
            match stmt.pointer_params.replace(0) {
                0 => {}
                mask if mask & (1 << 63) != 0 => {
                    ffi::sqlite3_clear_bindings(raw);
                }
                mut mask => {
                    while mask != 0 {
                        ffi::sqlite3_bind_null(raw, mask.trailing_zeros() as std::ffi::c_int + 1);
                        mask &= mask - 1;
                    }
                }
            }
        }
    }
}
