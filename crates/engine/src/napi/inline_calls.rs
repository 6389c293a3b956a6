//! `readInline`, the per-job call that runs a read on the JS thread's own connection
//! (js_thread/runs.rs; experiments/032), `controlInline`, which opens a transaction or a savepoint on
//! the idle writer's connection, `beginGroupInline`, which opens a write group's transaction
//! there (experiments/049), and `writeInline`, which runs a transaction's bounded write or
//! its COMMIT there (experiments/036), and `liveStartInline`, which gives a live query its first
//! run there (experiments/037). Written against N-API directly like the other per-job calls
//! (job_calls.rs). The cells become JS values as they are stepped — each TEXT cell its own
//! string, so a kept value keeps only itself alive — and reach JS as the arguments of one call
//! of the handler JS passes, which builds the rows.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::rc::Rc;
use std::time::Duration;

use napi::sys;

use super::database::{call_args, NativeDatabase};
use crate::error::{code, DbError, DbResult};
use crate::handoff::mailbox::array_buffer;
use crate::handoff::mailbox::values;
use crate::js::args::{bool_arg, bytes_view, throw, u32_arg, SqlText, PARAMS_EXPECTED};
use crate::js::{bigint, boolean, double, number, string, MAX_SAFE};
use crate::js_thread::runs::{self, Ran, ReadsOn, RowSink, Slice};
use crate::js_thread::write_group;
use crate::protocol::{
    DONE_LIVE_ERROR, INLINE_DONE as DONE, INLINE_MOVED as MOVED, INLINE_NUMBERS as NUMBERS,
    INLINE_RESULT_CHANGES as CHANGES, INLINE_RESULT_COMMITTED as COMMITTED, INLINE_RESULT_ERROR as ERROR,
    INLINE_RESULT_JSON as JSON, INLINE_RESULT_ROWS as ROWS, INLINE_SKIPPED as SKIPPED,
    INLINE_UNAVAILABLE as UNAVAILABLE, JOB_KIND_CONTROL, JOB_KIND_EXECUTE, JOB_KIND_SELECT, JOB_KIND_SELECT_BYTES,
    JOB_KIND_SELECT_ONE, READ_ON_IDLE_WRITER, READ_ON_OWN, READ_ON_TRANSACTION,
};
use crate::sqlite::statement_cache::ColumnNames;
use crate::sqlite::step::Cell;
use crate::threads::job::Outcome;
use crate::threads::worker::PoolConnection;

/// More cells than this go to a reader: one call's arguments live on the JS thread's stack.
const MAX_CELLS: usize = 4096;

/// The handler's arguments before a result's cells: `(ROWS, names, columns, rows, …cells)`.
const HEAD: usize = 4;

/// Collects a result's cells as JS values, after HEAD slots for the handler's other arguments;
/// or, while every cell is a number or NULL and JS already holds the result's names, as numbers
/// in the array JS shares (`numbers`, NULL as NaN: SQLite never stores NaN, it makes it NULL).
/// Then no JS value is made and the handler is not called: that hand-over was about 8 % of a
/// point read in a transaction (experiments/059).
struct Values<'a> {
    env: sys::napi_env,
    safe_integers: bool,
    names: Option<Rc<ColumnNames>>,
    columns: usize,
    /// How many rows the cells may hold: a selectOne's one row reserves one row's cells.
    max_rows: usize,
    args: Vec<sys::napi_value>,
    /// The shared numbers, `[count, …cells]`, while they are used (napi/database.rs
    /// `shared_numbers`), and the id of the names JS holds (`names_held`).
    numbers: Option<&'a mut [f64]>,
    names_held: u64,
    count: usize,
}

impl Values<'_> {
    /// Makes JS values of the numbers collected so far, and goes on with JS values.
    fn leave_numbers(&mut self) -> bool {
        let Some(numbers) = self.numbers.take() else { return true };
        let env = self.env;
        for &n in &numbers[1..=self.count] {
            let mut value = ptr::null_mut();
            // SAFETY: JS thread, inside a call from JS (a handle scope is open).
            let status = unsafe {
                if n.is_nan() {
                    sys::napi_get_null(env, &mut value)
                } else {
                    sys::napi_create_double(env, n, &mut value)
                }
            };
            if status != sys::Status::napi_ok {
                return false;
            }
            self.args.push(value);
        }
        true
    }
}

impl RowSink for Values<'_> {
    fn names(&mut self, names: Rc<ColumnNames>) {
        self.columns = names.list.len();
        self.args.reserve(HEAD + (self.columns * self.max_rows.min(16)).min(MAX_CELLS));
        self.args.resize(HEAD, ptr::null_mut());
        // New names must reach JS as a string; bigints are JS values.
        if names.id != self.names_held || self.safe_integers {
            self.numbers = None;
        }
        self.names = Some(names);
    }

    fn cell(&mut self, cell: Cell) -> bool {
        if let Some(numbers) = self.numbers.as_deref_mut() {
            let n = match cell {
                Cell::Null => Some(f64::NAN),
                Cell::Int(v) if (-MAX_SAFE..=MAX_SAFE).contains(&v) => Some(v as f64),
                Cell::Float(v) => Some(v),
                _ => None,
            };
            match n {
                Some(n) if self.count + 1 < numbers.len() => {
                    self.count += 1;
                    numbers[self.count] = n;
                    return true;
                }
                // A TEXT or BLOB cell, a large integer, or no room left.
                _ if !self.leave_numbers() => return false,
                _ => {}
            }
        }
        if self.args.len() == HEAD + MAX_CELLS {
            return false;
        }
        let env = self.env;
        let mut value = ptr::null_mut();
        // SAFETY: JS thread, inside a call from JS (a handle scope is open).
        let status = unsafe {
            match cell {
                Cell::Null => sys::napi_get_null(env, &mut value),
                Cell::Int(v) if self.safe_integers => sys::napi_create_bigint_int64(env, v, &mut value),
                Cell::Int(v) if (-MAX_SAFE..=MAX_SAFE).contains(&v) => {
                    sys::napi_create_double(env, v as f64, &mut value)
                }
                // Beyond ±(2^53−1) without safeIntegers: the reader's path reports it.
                Cell::Int(_) => return false,
                Cell::Float(v) => sys::napi_create_double(env, v, &mut value),
                // ASCII is copied as is, skipping V8's UTF-8 decoder (as napi/texts.rs).
                Cell::Text(s, true) => {
                    sys::napi_create_string_latin1(env, s.as_ptr() as _, s.len() as isize, &mut value)
                }
                Cell::Text(s, false) => {
                    sys::napi_create_string_utf8(env, s.as_ptr() as _, s.len() as isize, &mut value)
                }
                Cell::Blob(b) => {
                    let mut data = ptr::null_mut();
                    sys::napi_create_buffer_copy(env, b.len(), b.as_ptr() as _, &mut data, &mut value)
                }
            }
        };
        self.args.push(value);
        status == sys::Status::napi_ok
    }
}

/// The arguments every budgeted call shares, `(first, sql, params, paramsLength, budgetMicros,
/// handler, …)`, read from `N` arguments: `first` is a job kind or a live query's id.
struct BudgetedCall<'a, const N: usize> {
    argv: [sys::napi_value; N],
    db: &'a NativeDatabase,
    first: u32,
    sql: SqlText,
    params: &'a [u8],
    budget: Duration,
}

/// Reads a budgeted call's arguments; on a missing or wrong one, the thrown TypeError (`usage`
/// names the arguments) to return.
unsafe fn budgeted_call<'a, const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    usage: &'static str,
) -> Result<BudgetedCall<'a, N>, sys::napi_value> {
    let (argv, argc, db) = call_args::<N>(env, info);
    if argc < argv.len() {
        return Err(throw(env, usage));
    }
    let args = (|| {
        let first = u32_arg(env, argv[0])?;
        let sql = SqlText::read(env, argv[1])?;
        let params = bytes_view(env, argv[2], u32_arg(env, argv[3])? as usize)?;
        let budget = Duration::from_micros(u32_arg(env, argv[4])? as u64);
        Ok::<_, &'static str>((first, sql, params, budget))
    })();
    let (first, sql, params, budget) = args.map_err(|message| throw(env, message))?;
    Ok(BudgetedCall { argv, db, first, sql, params, budget })
}

/// `readInline`'s arguments, `(kind, paramsLength, budgetMicros, handler, on[, sql[, params]])`,
/// as a BudgetedCall (its handler and `on` in `argv[3]` and `argv[4]`). Without `params`, or
/// without both, they are the ones of the last call (args.rs `LastArgs`).
unsafe fn read_inline_call<'a>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Result<BudgetedCall<'a, 7>, sys::napi_value> {
    let (argv, argc, db) = call_args::<7>(env, info);
    if argc < 5 {
        return Err(throw(env, "expected (kind, paramsLength, budgetMicros, handler, on[, sql[, params]])"));
    }
    let args = (|| {
        let first = u32_arg(env, argv[0])?;
        let (sql, params) = db.last_args.read(env, (argc > 5).then_some(argv[5]), (argc > 6).then_some(argv[6]))?;
        let params = params.get(..u32_arg(env, argv[1])? as usize).ok_or(PARAMS_EXPECTED)?;
        let budget = Duration::from_micros(u32_arg(env, argv[2])? as u64);
        Ok::<_, &'static str>((first, sql, params, budget))
    })();
    let (first, sql, params, budget) = args.map_err(|message| throw(env, message))?;
    Ok(BudgetedCall { argv, db, first, sql, params, budget })
}

/// `readInline(kind, paramsLength, budgetMicros, handler, on[, sql[, params]])`: runs a select,
/// selectOne or selectBytes on the JS thread within the budget, on the connection `on` names
/// (protocol.rs `READ_ON_*`): the JS thread's own; the writer's, idle inside the caller's
/// transaction; or the writer's when it is idle outside any transaction, else the JS thread's
/// own. Returns DONE after calling `handler` with the result, or why it did not run here.
pub(super) unsafe extern "C" fn read_inline(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let call = read_inline_call(env, info);
    let BudgetedCall { argv, db, first: kind, sql, params, budget } = match call {
        Ok(call) => call,
        Err(thrown) => return thrown,
    };
    let handler = argv[3];
    let on = match u32_arg(env, argv[4]) {
        Ok(on) => on,
        Err(message) => return throw(env, message),
    };
    let shared = &db.pool.shared;
    let max_rows = if kind == JOB_KIND_SELECT_ONE { 1 } else { usize::MAX };
    let mut values = Values {
        env,
        safe_integers: shared.safe_integers,
        names: None,
        columns: 0,
        max_rows,
        args: db.handler_args.take(),
        numbers: db.shared_numbers(),
        names_held: db.names_held(),
        count: 0,
    };
    values.args.clear();
    let mut run_on = |worker: &mut PoolConnection, reads_on: ReadsOn| {
        catch_unwind(AssertUnwindSafe(|| match kind {
            JOB_KIND_SELECT | JOB_KIND_SELECT_ONE => {
                runs::select(worker, reads_on, &sql, params, max_rows, budget, &mut values).map(|ran| ran.map(|_| None))
            }
            JOB_KIND_SELECT_BYTES => runs::select_json(worker, reads_on, &sql, params, budget).map(|ran| ran.map(Some)),
            _ => Err(DbError::new(code::ERR_INTERNAL, format!("readInline: unknown job kind {kind}"))),
        }))
        .unwrap_or_else(|payload| Err(DbError::panicked(payload)))
    };
    let ran = 'ran: {
        // The writer thread holds its lock while it runs a job.
        if on != READ_ON_OWN {
            if let Ok(mut slot) = shared.writer.try_lock() {
                match slot.as_mut() {
                    // Inside the transaction (else SQLite rolled it back: the writer's checks
                    // report it).
                    Some(w) if on == READ_ON_TRANSACTION && !w.conn.autocommit() => {
                        break 'ran run_on(w, ReadsOn::Transaction);
                    }
                    Some(w) if on == READ_ON_IDLE_WRITER && write_group::reads_as_a_reader(w) => {
                        if let Err(e) = write_group::fresh_snapshot(w) {
                            break 'ran Err(e);
                        }
                        let ran = run_on(w, ReadsOn::WriterAsReader);
                        if !matches!(ran, Ok(Ran::NotOnWriter)) {
                            break 'ran ran;
                        }
                    }
                    _ => {}
                }
            }
            if on == READ_ON_TRANSACTION {
                return number(env, UNAVAILABLE);
            }
        }
        let mut slot = shared.inline.lock().unwrap();
        // A sliced read holds the connection's snapshot open between its slices (`read_slice`).
        let Some(js) = shared.inline_for_run(&mut slot, false) else { return number(env, UNAVAILABLE) };
        run_on(&mut js.worker, ReadsOn::ReadOnly)
    };
    // The lock is released and the statement reset: JS may run now.
    let mut args = std::mem::take(&mut values.args);
    let returned = match ran {
        Ok(Ran::Moved) => number(env, MOVED),
        Ok(Ran::Skipped | Ran::NotOnWriter) => number(env, SKIPPED),
        Ok(Ran::Done(Some(json))) => {
            let mut buffer = ptr::null_mut();
            let mut at = ptr::null_mut();
            sys::napi_create_buffer_copy(env, json.len(), json.as_ptr() as _, &mut at, &mut buffer);
            call_handler(env, handler, &[number(env, JSON), buffer])
        }
        Ok(Ran::Done(None)) => match values.numbers {
            Some(numbers) => {
                numbers[0] = values.count as f64;
                number(env, NUMBERS)
            }
            None => {
                args.resize(args.len().max(HEAD), ptr::null_mut());
                let rows = (args.len() - HEAD).checked_div(values.columns).unwrap_or(0);
                args[0] = number(env, ROWS);
                args[1] = db.names_for_js(env, values.names.as_deref());
                args[2] = number(env, values.columns as u32);
                args[3] = number(env, rows as u32);
                call_handler(env, handler, &args)
            }
        },
        Err(e) => call_handler(env, handler, &[number(env, ERROR), string(env, &e.code), string(env, &e.message)]),
    };
    args.clear();
    db.handler_args.set(args);
    returned
}

/// `shareNumbers(numbers)`: the Float64Array `readInline` writes a result of numbers into
/// (`Values`), and `writeInline` a write's changes, instead of calling the handler; JS keeps it
/// for as long as it can call them.
pub(super) unsafe extern "C" fn share_numbers(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let (argv, argc, db) = call_args::<1>(env, info);
    let (mut kind, mut length, mut numbers, mut buffer, mut offset) = (0, 0, ptr::null_mut(), ptr::null_mut(), 0);
    if argc < 1
        || sys::napi_get_typedarray_info(env, argv[0], &mut kind, &mut length, &mut numbers, &mut buffer, &mut offset)
            != sys::Status::napi_ok
        || kind != sys::TypedarrayType::float64_array
    {
        return throw(env, "expected (numbers: Float64Array)");
    }
    db.share_numbers(numbers as *mut f64, length);
    ptr::null_mut()
}

/// `readSlice(sql, params, paramsLength, handler)`: starts a select calling JavaScript
/// functions on the JS thread's connection (js_thread/runs.rs `read_slice`) and runs its first slice;
/// with `sql` null, runs the next slice of the one under way. DONE after calling `handler`
/// with `(ROWS, buffer, names, last)` or `(ERROR, code, message)`; SKIPPED when the statement
/// calls no JavaScript function, or a sliced read is under way; MOVED when a step overran (the
/// read ended: run it on a reader); UNAVAILABLE without the JS thread's connection.
pub(super) unsafe extern "C" fn read_slice(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let (argv, argc, db) = call_args::<4>(env, info);
    if argc < argv.len() {
        return throw(env, "expected (sql | null, params, paramsLength, handler)");
    }
    let mut kind = 0;
    sys::napi_typeof(env, argv[0], &mut kind);
    let start = if kind == sys::ValueType::napi_null {
        None
    } else {
        let args = (|| {
            let sql = SqlText::read(env, argv[0])?;
            let params = bytes_view(env, argv[1], u32_arg(env, argv[2])? as usize)?;
            Ok::<_, &'static str>((sql, params))
        })();
        match args {
            Ok(args) => Some(args),
            Err(message) => return throw(env, message),
        }
    };
    let shared = &db.pool.shared;
    let ran = {
        // Held by the writer only around a rekey, when the read moves to a reader.
        let Ok(mut slot) = shared.inline.try_lock() else { return number(env, UNAVAILABLE) };
        let Some(js) = shared.inline_for_run(&mut slot, true) else { return number(env, UNAVAILABLE) };
        let start = start.as_ref().map(|(sql, params)| (&**sql, *params));
        catch_unwind(AssertUnwindSafe(|| runs::read_slice(js, start, shared.safe_integers)))
            .unwrap_or_else(|payload| Err(DbError::panicked(payload)))
    };
    let args = match ran {
        Ok(Slice::Moved) => return number(env, MOVED),
        Ok(Slice::Skipped) => return number(env, SKIPPED),
        Ok(Slice::Rows(rows, last)) => match array_buffer(env, rows.buffer) {
            Ok(buffer) => vec![number(env, ROWS), buffer, string(env, &rows.names), boolean(env, last)],
            Err(message) => vec![number(env, ERROR), string(env, code::ERR_RESULT_TOO_LARGE), string(env, &message)],
        },
        Err(e) => vec![number(env, ERROR), string(env, &e.code), string(env, &e.message)],
    };
    call_handler(env, argv[3], &args)
}

/// `controlInline(sql, inTransaction)`: runs one of the library's cheap transaction-control
/// statements (a deferred BEGIN, SAVEPOINT, a nested savepoint's RELEASE: none takes a lock or
/// writes) on the writer's connection from the JS thread, when the writer thread is idle. With
/// `inTransaction` the connection must be inside the caller's transaction. DONE when it ran;
/// MOVED when it failed, to be sent to the writer thread, whose checks report the error (a
/// failing control statement changes nothing); UNAVAILABLE when the writer is busy or absent.
pub(super) unsafe extern "C" fn control_inline(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let (argv, argc, db) = call_args::<2>(env, info);
    let in_transaction = if argc < argv.len() { Err("") } else { bool_arg(env, argv[1]) };
    let Ok(in_transaction) = in_transaction else { return throw(env, "expected (sql, inTransaction)") };
    let sql = match SqlText::read(env, argv[0]) {
        Ok(sql) => sql,
        Err(message) => return throw(env, message),
    };
    number(env, on_idle_writer(db, in_transaction, |worker| worker.control(&sql).map(|_| true)))
}

/// `beginGroupInline(readsOnly)`: opens a write group's transaction (js_thread/runs.rs `begin_group`) on
/// the idle writer's connection, outside any transaction. DONE when it did; UNAVAILABLE when the
/// writer is busy or absent, or (not `readsOnly`) the group's COMMIT could not run on the JS
/// thread; MOVED when it failed.
pub(super) unsafe extern "C" fn begin_group_inline(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let (argv, argc, db) = call_args::<1>(env, info);
    let Ok(reads_only) = (if argc < argv.len() { Err("") } else { bool_arg(env, argv[0]) }) else {
        return throw(env, "expected (readsOnly: boolean)");
    };
    number(env, on_idle_writer(db, false, |worker| runs::begin_group(worker, reads_only)))
}

/// Runs `f` on the idle writer's worker when its connection is inside a transaction, or
/// outside one, as `in_transaction` asks, its change hooks first matched to whether live queries
/// exist, as the writer thread does before each job. DONE when `f` gave true, UNAVAILABLE when
/// it gave false or the writer is busy, absent or not as asked, MOVED when it failed.
fn on_idle_writer(
    db: &NativeDatabase,
    in_transaction: bool,
    f: impl FnOnce(&mut PoolConnection) -> DbResult<bool>,
) -> u32 {
    let Ok(mut slot) = db.pool.shared.writer.try_lock() else { return UNAVAILABLE };
    let Some(worker) = slot.as_mut() else { return UNAVAILABLE };
    if worker.conn.autocommit() == in_transaction {
        return UNAVAILABLE;
    }
    db.pool.shared.sync_writer_hooks(worker);
    match catch_unwind(AssertUnwindSafe(|| f(worker))) {
        Ok(Ok(true)) => DONE,
        Ok(Ok(false)) => UNAVAILABLE,
        _ => MOVED,
    }
}

/// `writeInline(kind, sql, params, paramsLength, budgetMicros, handler, inTransaction)`, on the
/// idle writer's connection: an execute (`kind` EXECUTE) whose statement is bounded (js_thread/runs.rs
/// `write`), inside the caller's transaction or, not `inTransaction`, alone (committing as it
/// ends); or the transaction's COMMIT (`kind` CONTROL, `sql` "COMMIT") when it has little to
/// write. Returns NUMBERS with `[changes, lastInsertRowid, checkpointDue]` of a write, or
/// `[checkpointDue]` of a COMMIT, in the numbers JS shares (without calling the handler: that
/// call was the largest cost left of a small write, experiments/060); DONE after calling
/// `handler` with (CHANGES, changes, lastInsertRowid, checkpointDue) when the rowid is beyond
/// ±(2^53 − 1) or no numbers are shared, or with (ERROR, code, message, endedTransaction);
/// SKIPPED when the statement must run on the writer thread; UNAVAILABLE when the writer is
/// busy, or the connection is outside a transaction (`inTransaction`) or inside one (not).
pub(super) unsafe extern "C" fn write_inline(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let call = budgeted_call::<7>(
        env,
        info,
        "expected (kind, sql, params, paramsLength, budgetMicros, handler, inTransaction)",
    );
    let BudgetedCall { argv, db, first: kind, sql, params, budget } = match call {
        Ok(call) => call,
        Err(thrown) => return thrown,
    };
    let in_transaction = match bool_arg(env, argv[6]) {
        Ok(in_transaction) => in_transaction,
        Err(message) => return throw(env, message),
    };
    let shared = &db.pool.shared;
    let (ran, ended) = {
        // The writer thread holds its lock while it runs a job.
        let Ok(mut slot) = shared.writer.try_lock() else { return number(env, UNAVAILABLE) };
        let Some(worker) = slot.as_mut() else { return number(env, UNAVAILABLE) };
        // Out of the transaction, SQLite rolled it back: the writer's checks report it. A write
        // alone finds none open (JS checked that no transaction holds the writer): a second
        // guard.
        if worker.conn.autocommit() == in_transaction {
            return number(env, UNAVAILABLE);
        }
        // As the writer thread does around each job: its hooks match whether live queries exist,
        // and what a commit changed reaches them before JS hears of the commit.
        let tracking = shared.sync_writer_hooks(worker);
        let ran = catch_unwind(AssertUnwindSafe(|| match kind {
            JOB_KIND_EXECUTE if in_transaction => runs::write(worker, &sql, params, budget, true)
                .map(|ran| ran.map(|(changes, rowid)| Wrote::Changes(changes, rowid, false))),
            JOB_KIND_EXECUTE => runs::write_alone(worker, &sql, params, budget)
                .map(|ran| ran.map(|(changes, rowid, due)| Wrote::Changes(changes, rowid, due))),
            JOB_KIND_CONTROL if in_transaction && &*sql == "COMMIT" => {
                runs::commit(worker).map(|ran| ran.map(Wrote::Committed))
            }
            _ => Err(DbError::new(code::ERR_INTERNAL, format!("writeInline: cannot run job kind {kind} ({})", &*sql))),
        }))
        .unwrap_or_else(|payload| Err(DbError::panicked(payload)));
        // Inside the transaction nothing was committed: only a COMMIT, a write alone, or an
        // error that ended the transaction can have anything to publish.
        let ended = worker.conn.autocommit();
        if ended || kind == JOB_KIND_CONTROL {
            shared.publish_committed(worker, tracking);
        }
        (ran, ended && in_transaction)
    };
    // The lock is released: JS may run now.
    let args = match (ran, db.shared_numbers()) {
        (Ok(Ran::Moved | Ran::Skipped | Ran::NotOnWriter), _) => return number(env, SKIPPED),
        (Ok(Ran::Done(Wrote::Changes(changes, rowid, checkpoint_due))), Some(numbers))
            if (-MAX_SAFE..=MAX_SAFE).contains(&rowid) =>
        {
            numbers[..3].copy_from_slice(&[changes as f64, rowid as f64, f64::from(u8::from(checkpoint_due))]);
            return number(env, NUMBERS);
        }
        (Ok(Ran::Done(Wrote::Committed(checkpoint_due))), Some(numbers)) => {
            numbers[0] = f64::from(u8::from(checkpoint_due));
            return number(env, NUMBERS);
        }
        (Ok(Ran::Done(Wrote::Changes(changes, rowid, checkpoint_due))), _) => {
            let rowid =
                if (-MAX_SAFE..=MAX_SAFE).contains(&rowid) { double(env, rowid as f64) } else { bigint(env, rowid) };
            vec![number(env, CHANGES), double(env, changes as f64), rowid, boolean(env, checkpoint_due)]
        }
        (Ok(Ran::Done(Wrote::Committed(checkpoint_due))), None) => {
            vec![number(env, COMMITTED), boolean(env, checkpoint_due)]
        }
        (Err(e), _) => vec![number(env, ERROR), string(env, &e.code), string(env, &e.message), boolean(env, ended)],
    };
    call_handler(env, argv[5], &args)
}

/// What a write on the JS thread did.
enum Wrote {
    /// Changes, last insert rowid, and (a write alone) whether its commit made a checkpoint due.
    Changes(i64, i64, bool),
    /// Committed; whether a checkpoint is due.
    Committed(bool),
}

/// Calls `handler(...args)`; DONE, or null with the handler's exception pending.
unsafe fn call_handler(env: sys::napi_env, handler: sys::napi_value, args: &[sys::napi_value]) -> sys::napi_value {
    let mut undefined = ptr::null_mut();
    sys::napi_get_undefined(env, &mut undefined);
    let mut result = ptr::null_mut();
    if sys::napi_call_function(env, undefined, handler, args.len(), args.as_ptr(), &mut result) != sys::Status::napi_ok
    {
        return ptr::null_mut(); // the handler threw: the exception stays pending for the caller
    }
    number(env, DONE)
}

/// `liveStartInline(id, sql, params, paramsLength, budgetMicros, handler)`: starts live query
/// `id` with its first run on the JS thread's connection, within the budget (experiments/037).
/// DONE after calling `handler(kind, a, b)` with what that run delivers, as a completion would
/// (DONE_LIVE_ROWS with the encoded rows and their names, or DONE_LIVE_ERROR with code and
/// message); MOVED when it ran past the budget, UNAVAILABLE when there is no inline connection:
/// then its first run went to the readers, as `liveStart`'s does.
pub(super) unsafe extern "C" fn live_start_inline(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let call = budgeted_call::<6>(env, info, "expected (id, sql, params, paramsLength, budgetMicros, handler)");
    let BudgetedCall { argv, db, first: id, sql, params, budget } = match call {
        Ok(call) => call,
        Err(thrown) => return thrown,
    };
    let shared = &db.pool.shared;
    let mut slot = shared.inline.lock().unwrap();
    let Some(js) = shared.inline_for_run(&mut slot, false) else {
        drop(slot);
        db.pool.live_start(id, sql.to_string(), params.to_vec());
        return number(env, UNAVAILABLE);
    };
    db.pool.live_start_inline(id, sql.to_string(), params.to_vec());
    let (outcome, overran) = catch_unwind(AssertUnwindSafe(|| {
        runs::run_live_within(&mut js.worker, &sql, params, shared.safe_integers, budget)
    }))
    .unwrap_or_else(|payload| (Outcome::LiveRan { result: Err(DbError::panicked(payload)), reads: None }, false));
    drop(slot);
    if overran {
        db.pool.live_run_on_readers(id);
        return number(env, MOVED);
    }
    let Outcome::LiveRan { result, reads } = outcome else { unreachable!("run_live returns LiveRan") };
    let Some(deliver) = db.pool.live_finish_inline(id, result, reads) else {
        return number(env, SKIPPED); // nothing to deliver
    };
    let mut args = Vec::with_capacity(3);
    let mut pushed = Vec::with_capacity(2);
    let kind = match values(env, deliver, &mut |value| pushed.push(value)) {
        Ok((kind, _, _)) => kind,
        Err(message) => {
            pushed = vec![string(env, code::ERR_RESULT_TOO_LARGE), string(env, &message)];
            DONE_LIVE_ERROR
        }
    };
    args.push(number(env, kind));
    args.extend(pushed);
    call_handler(env, argv[5], &args)
}
