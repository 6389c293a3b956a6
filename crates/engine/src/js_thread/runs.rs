//! What runs on the JS thread (the module's comment says when and why): reads under a time
//! budget on its own connection or the writer's, bounded writes and small COMMITs on the
//! writer's, a live query's first run, and reads calling JavaScript functions a slice at a time.

use std::cell::Cell as Flag;
use std::ffi::c_void;
use std::os::raw::{c_char, c_int};
use std::rc::Rc;
use std::time::{Duration, Instant};

use sqlite3mc_sys as ffi;

use super::connection::{JsConnection, Sliced};
use super::write_group;
use crate::encode::json::encode_json;
use crate::encode::rows::EncodedRows;
use crate::error::DbResult;
use crate::live::hooks::{ResetOnDrop, Statement};
use crate::sqlite::bounded::is_bounded;
use crate::sqlite::connection::Connection;
use crate::sqlite::params::{bind, Reader};
use crate::sqlite::statement_cache::{Backoff, ColumnNames};
use crate::sqlite::step::{cell, step, Cell};
use crate::threads::group_commit::is_single_dml;
use crate::threads::job::Outcome;
use crate::threads::worker::{run_write, transaction_control_refused, PoolConnection};

/// How many runs a statement skips the JS thread for after its first overrun; doubled after each further
/// overrun, up to MAX_SKIP, and halved after each inline run that fits.
const FIRST_SKIP: u32 = 16;
const MAX_SKIP: u32 = 1024;
/// A read or write that overruns after runs that fit is a strike: its statement skips nothing
/// (the read alone moves; the write has run), and remembers the overrun for the next runs that
/// fit (halved each: 4 of them). Its pages were cold, or its thread was preempted on a busy
/// machine; skipping the JS thread for the next 16 runs sent a tenant's next reads to a reader,
/// which opened a connection each (experiments/074), and awaited writes through the writer
/// thread, a round trip each (experiments/077). Another overrun meanwhile skips FIRST_SKIP
/// runs, as any overrun of a slice does.
const STRIKE: u32 = 8;
/// A write with more parameter bytes than this stays on the writer thread: a bounded
/// program's work still grows with the size of its values.
const MAX_WRITE_PARAMS: usize = 64 << 10;
/// A COMMIT runs on the JS thread after at most this many writes, all run there: it appends
/// the pages they changed to the WAL.
const MAX_COMMIT_WRITES: u32 = 16;

/// Receives an inline select's result as it is stepped: the column names, then every cell in
/// row order. `cell` returns false when the result is too large to hand over this way.
pub trait RowSink {
    /// The column names (the statement's, shared).
    fn names(&mut self, names: Rc<ColumnNames>);
    fn cell(&mut self, cell: Cell) -> bool;
}

/// How an inline run ended.
pub enum Ran<T> {
    /// The whole result (or the statement's error, returned as `Err` instead).
    Done(T),
    /// Nothing delivered: it overran its budget, or its result is too large for the JS
    /// thread; run it on a thread.
    Moved,
    /// Not run: the statement overran recently, or it returns no rows (transaction control
    /// and the like: its thread's checks apply); run it on a thread.
    Skipped,
    /// Not run: on the writer's connection in a reader's stead, it would read that
    /// connection's own state (`last_insert_rowid()` and the like); run it on a read-only one.
    NotOnWriter,
}

impl<T> Ran<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Ran<U> {
        match self {
            Ran::Done(v) => Ran::Done(f(v)),
            Ran::Moved => Ran::Moved,
            Ran::Skipped => Ran::Skipped,
            Ran::NotOnWriter => Ran::NotOnWriter,
        }
    }
}

/// Where a read runs: on a read-only connection, on the writer's inside the caller's
/// transaction, or on the writer's in a reader's stead (outside any transaction).
#[derive(Clone, Copy, PartialEq)]
pub enum ReadsOn {
    ReadOnly,
    Transaction,
    WriterAsReader,
}

/// select / selectOne: the rows go to `sink` as they are stepped.
pub fn select(
    worker: &mut PoolConnection,
    on: ReadsOn,
    sql: &str,
    params: &[u8],
    max_rows: usize,
    budget: Duration,
    sink: &mut dyn RowSink,
) -> DbResult<Ran<usize>> {
    run(worker, on, sql, params, budget, |stmt, conn| {
        let raw = stmt.raw;
        let mut more = step(conn, raw)?;
        let columns = stmt.column_names();
        sink.names(columns.clone());
        let names = &columns.list;
        let mut rows = 0;
        while more && rows < max_rows {
            for i in 0..names.len() {
                // SAFETY: the statement is on a row; the cell is used before the next step.
                if !sink.cell(unsafe { cell(raw, i as c_int, names, rows, conn.invalid_utf8())? }) {
                    return Ok(Ran::Moved);
                }
            }
            rows += 1;
            if rows < max_rows {
                more = step(conn, raw)?;
            }
        }
        Ok(Ran::Done(rows))
    })
}

/// selectBytes: the result's JSON text.
pub fn select_json(
    worker: &mut PoolConnection,
    on: ReadsOn,
    sql: &str,
    params: &[u8],
    budget: Duration,
) -> DbResult<Ran<Vec<u8>>> {
    run(worker, on, sql, params, budget, |stmt, conn| encode_json(conn, stmt, usize::MAX).map(Ran::Done))
}

/// Runs `body` on `sql`'s bound statement within `budget`. An overrun (or a result too large
/// for the JS thread) moves the read and makes the statement skip the JS thread for a while.
fn run<T>(
    worker: &mut PoolConnection,
    on: ReadsOn,
    sql: &str,
    params: &[u8],
    budget: Duration,
    body: impl FnOnce(&Statement, &Connection) -> DbResult<Ran<T>>,
) -> DbResult<Ran<T>> {
    let (stmt, conn, clock) = worker.budgeted_read(sql)?;
    if on == ReadsOn::WriterAsReader && stmt.facts.connection_state {
        return Ok(Ran::NotOnWriter);
    }
    // SAFETY: valid statement.
    if unsafe { ffi::sqlite3_column_count(stmt.raw) } == 0 || skips(&stmt.inline) {
        return Ok(Ran::Skipped);
    }
    let result = {
        let _reset = ResetOnDrop::new(stmt);
        clock.start(budget);
        let result = bind(stmt, &mut Reader::new(params)).and_then(|_| body(stmt, conn));
        let overran = clock.finish();
        match result {
            Err(_) if overran => Ok(Ran::Moved),
            other => other,
        }
    };
    back_off_with_strike(&stmt.inline, matches!(result, Ok(Ran::Moved)));
    result
}

/// After a read's or a write's run on the JS thread: as `back_off`, except that an overrun
/// with none remembered skips nothing (STRIKE).
fn back_off_with_strike(b: &Backoff, overran: bool) {
    if overran && b.backoff.get() == 0 {
        b.backoff.set(STRIKE);
    } else {
        back_off(b, overran);
    }
}

/// After a run on the JS thread: one that overran makes the statement skip the JS thread for a
/// while (doubling while it keeps overrunning); one that fit halves that while.
fn back_off(b: &Backoff, overran: bool) {
    let backoff = b.backoff.get();
    if overran {
        let next = (backoff * 2).clamp(FIRST_SKIP, MAX_SKIP);
        b.backoff.set(next);
        b.skip.set(next);
    } else {
        b.backoff.set(backoff / 2);
    }
}

/// Whether a statement skips the JS thread this time (it overran recently); counts the skip.
fn skips(b: &Backoff) -> bool {
    let skip = b.skip.get();
    b.skip.set(skip.saturating_sub(1));
    skip > 0
}

/// A live query's first run on the JS thread (napi/inline_calls.rs `live_start_inline`): as
/// `PoolConnection::run_live`, within `budget`; also returns whether the budget ran out (then
/// the run failed with SQLITE_INTERRUPT).
pub fn run_live_within(
    worker: &mut PoolConnection,
    sql: &str,
    params: &[u8],
    safe_integers: bool,
    budget: Duration,
) -> (Outcome, bool) {
    worker.budget().start(budget);
    let mut outcome = worker.run_live(sql, params, safe_integers);
    let overran = worker.budget().finish();
    // As on a reader (reader.rs `run_read`): BEGIN and the like count as read-only, but must
    // not leave the connection inside a transaction.
    if !worker.conn.autocommit() {
        let _ = worker.exec("ROLLBACK");
        outcome = Outcome::LiveRan { result: Err(transaction_control_refused()), reads: None };
    }
    (outcome, overran)
}

/// How long a slice of a sliced read steps, its functions' time included: then the event loop
/// gets a turn. 1 ms gave a longest stall of 3.5 ms (p90), 0.5 ms 2.6, 0.25 ms 2.0–2.3, with
/// no loss of speed (experiments/054).
const SLICE: Duration = Duration::from_micros(250);
/// A sliced read's first slice, in rows; the next ones are as many as the last one's pace fits
/// in SLICE.
const FIRST_SLICE_ROWS: usize = 64;
/// A slice running this long is interrupted and the read moves to a reader: one step of its
/// statement (a sort, an aggregate's whole scan) runs longer than a slice can be.
const SLICE_LIMIT: Duration = Duration::from_millis(10);

/// A slice of a sliced read: its rows, and whether they are the last.
pub enum Slice {
    Rows(EncodedRows, bool),
    /// One step ran past SLICE_LIMIT (the read is ended): run it on a reader.
    Moved,
    /// Not a read calling JavaScript functions, or a sliced read is already under way.
    Skipped,
}

/// A select calling JavaScript functions, on the JS thread's connection a slice at a time, so
/// the functions are called right here (a call handed over from a reader costs more than a
/// cheap function: experiments/054) and the event loop gets a turn between slices. `start`:
/// the read to start (else the next slice of the one under way). Its snapshot stays open
/// across slices; meanwhile other reads skip this connection (`read_inline` finds it busy).
pub fn read_slice(js: &mut JsConnection, start: Option<(&str, &[u8])>, safe_integers: bool) -> DbResult<Slice> {
    if let Some((sql, params)) = start {
        // One whose slice overran recently (an aggregate over every row, say) skips the JS
        // thread, as other reads do after overrunning their budget.
        if js.sliced.is_some() || skips(&js.worker.budgeted_read(sql)?.0.sliced) {
            return Ok(Slice::Skipped);
        }
        if !js.start_sliced(sql, params, FIRST_SLICE_ROWS)? {
            return Ok(Slice::Skipped);
        }
    }
    let Some(Sliced { cursor, rows, sql }) = js.sliced.take() else { return Ok(Slice::Skipped) };
    let worker = &mut js.worker;
    let started = Instant::now();
    worker.budget().start(SLICE_LIMIT);
    let page = cursor.page_of(&worker.conn, rows, safe_integers);
    let overran = worker.budget().finish();
    let (page, full) = match page {
        Err(_) if overran => {
            drop(cursor);
            back_off(&worker.budgeted_read(&sql)?.0.sliced, true);
            return Ok(Slice::Moved);
        }
        other => other?,
    };
    if full {
        let pace = started.elapsed().as_secs_f64().max(1e-6) / rows as f64;
        let next = (SLICE.as_secs_f64() / pace) as usize;
        js.sliced = Some(Sliced { cursor, rows: next.clamp(16, 1 << 16), sql });
    }
    Ok(Slice::Rows(page, !full))
}

/// An execute of one bounded statement that returns no rows, on the writer's connection:
/// inside the open transaction (`in_transaction`), or alone, committing as it ends. Its changes
/// and last insert rowid. A write that turns out to need more (a re-prepare after a schema
/// change, a lock another process holds) stops before it changed anything and is skipped, to
/// run on the writer thread; so is one that returns rows, has large parameters, or overran
/// `budget` recently (a bounded program still grows with the rows it rewrites).
pub fn write(
    worker: &mut PoolConnection,
    sql: &str,
    params: &[u8],
    budget: Duration,
    in_transaction: bool,
) -> DbResult<Ran<(i64, i64)>> {
    // A write group takes what the writer thread's group commit takes: a PRAGMA or an ATTACH,
    // say, may not run inside a transaction, or means something else there. (The flag lasts
    // until the next BEGIN: only a write inside a transaction reads it.)
    let in_group = in_transaction && worker.tx_writes.group;
    if params.len() > MAX_WRITE_PARAMS || (in_group && !is_single_dml(sql)) {
        return Ok(Ran::Skipped);
    }
    if in_group {
        write_group::fresh_snapshot(worker)?;
    }
    let (stmt, conn, hooks) = worker.write_statement(sql)?;
    let raw = stmt.raw;
    // SAFETY: valid statement.
    // A BEGIN, COMMIT or a journal_mode change goes to the writer thread, whose checks refuse it.
    if stmt.has_tail
        || stmt.facts.kind.ends_a_level()
        || stmt.facts.kind.leaves_wal
        || unsafe { ffi::sqlite3_column_count(raw) } != 0
        || skips(&stmt.inline)
    {
        return Ok(Ran::Skipped);
    }
    // Judged again whenever SQLite has re-prepared it: its program may differ.
    let reprepared = stmt.reprepared();
    let bounded = match stmt.bounded.get() {
        Some((n, bounded)) if n == reprepared => bounded,
        _ => {
            let bounded = is_bounded(conn, sql)?;
            hooks.clear_capture(); // what compiling EXPLAIN told the authorizer
            stmt.bounded.set(Some((reprepared, bounded)));
            bounded
        }
    };
    if !bounded {
        return Ok(Ran::Skipped);
    }
    let started = Instant::now();
    let _reset = ResetOnDrop::new(stmt);
    bind(stmt, &mut Reader::new(params))?;
    // Refused only inside SQLite's steps: the hooks compile their own queries around them.
    let mut refused = false;
    let result = conn.without_busy_wait(|| {
        run_write(conn, hooks, &stmt.facts.effects, || loop {
            let (stepped, denied) = hooks.refusing_compilation(|| step(conn, raw));
            refused |= denied;
            if !stepped? {
                return Ok(());
            }
        })
    });
    // Busy, a write alone changed nothing; inside a transaction, SQLite ended it only when it
    // is out of it now (then the error reports that).
    let busy = matches!(&result, Err(e) if e.code.starts_with("SQLITE_BUSY"));
    if refused || (busy && (!in_transaction || !conn.autocommit())) {
        return Ok(Ran::Skipped);
    }
    back_off_with_strike(&stmt.inline, started.elapsed() > budget);
    let changes = result?;
    // SAFETY: valid handle.
    let rowid = unsafe { ffi::sqlite3_last_insert_rowid(conn.raw()) };
    if in_transaction {
        worker.tx_writes.inline += 1;
    }
    Ok(Ran::Done((changes, rowid)))
}

/// A bounded write alone (`write`), committing as it ends: a few pages appended to the WAL.
/// Also returns whether its commit made a checkpoint due, which is left to the writer thread
/// (experiments/040).
pub fn write_alone(
    worker: &mut PoolConnection,
    sql: &str,
    params: &[u8],
    budget: Duration,
) -> DbResult<Ran<(i64, i64, bool)>> {
    if !commit_only_appends(worker)? {
        return Ok(Ran::Skipped);
    }
    let (result, due) = deferring_checkpoint(worker, |worker| write(worker, sql, params, budget, false))?;
    Ok(result?.map(|(changes, rowid)| (changes, rowid, due)))
}

/// The open transaction's COMMIT on the writer's connection, when it has little to write: no
/// write of it ran on the writer thread, at most MAX_COMMIT_WRITES ran here, and their commit
/// only appends (a transaction that wrote nothing writes nothing to the WAL). A checkpoint
/// the commit makes due is left to the writer thread: returns whether one is.
pub fn commit(worker: &mut PoolConnection) -> DbResult<Ran<bool>> {
    let writes = worker.tx_writes.inline;
    if worker.tx_writes.on_thread || writes > MAX_COMMIT_WRITES || (writes > 0 && !commit_only_appends(worker)?) {
        return Ok(Ran::Skipped);
    }
    let (result, due) = deferring_checkpoint(worker, |worker| worker.control("COMMIT"))?;
    result.map(|_| Ran::Done(due))
}

/// Opens a write group's transaction when its COMMIT will be cheap enough for the JS thread
/// (`commit`): whether it did. A group only reads will use (`reads_only`) commits nothing.
pub fn begin_group(worker: &mut PoolConnection, reads_only: bool) -> DbResult<bool> {
    if !reads_only && !commit_only_appends(worker)? {
        return Ok(false);
    }
    write_group::begin(worker)?;
    Ok(true)
}

/// Whether a commit would only append a few pages to the WAL: not sync it (`synchronous` above
/// NORMAL), nor start the WAL over, which writes its header and syncs it (experiments/040).
fn commit_only_appends(worker: &mut PoolConnection) -> DbResult<bool> {
    Ok(!worker.conn.wal_starts_over() && !worker.commit_settings()?.syncs)
}

/// Runs `commits` with SQLite's auto-checkpoint replaced by a note of whether one became due
/// (a checkpoint copies pages into the database file: the writer thread's work).
fn deferring_checkpoint<T>(
    worker: &mut PoolConnection,
    commits: impl FnOnce(&mut PoolConnection) -> T,
) -> DbResult<(T, bool)> {
    let pages = worker.commit_settings()?.checkpoint_pages;
    let db = worker.conn.raw();
    let deferred = DeferredCheckpoint { pages, due: Flag::new(false) };
    // SAFETY: valid handle; `deferred` outlives the hook, which is replaced before it drops.
    unsafe { ffi::sqlite3_wal_hook(db, Some(defer_checkpoint), &deferred as *const _ as *mut c_void) };
    let result = commits(worker);
    // SAFETY: valid handle. Taking the hook out tells whether the write replaced it: a
    // `PRAGMA wal_autocheckpoint = N` compiled in it (SQLite applies it then) installs
    // SQLite's own hook with N as its argument (none for N <= 0), the setting to put back.
    let ours = &deferred as *const DeferredCheckpoint as *mut c_void;
    let found = unsafe { ffi::sqlite3_wal_hook(db, None, std::ptr::null_mut()) };
    let pages = if found == ours { pages } else { found as usize as c_int };
    // SAFETY: valid handle; back to SQLite's own hook (none when pages is 0).
    unsafe { ffi::sqlite3_wal_autocheckpoint(db, pages) };
    Ok((result, deferred.due.get()))
}

/// What the WAL hook of a commit on the JS thread needs: when a checkpoint is due (as
/// `wal_autocheckpoint`), and whether it became due.
struct DeferredCheckpoint {
    pages: c_int,
    due: Flag<bool>,
}

unsafe extern "C" fn defer_checkpoint(
    arg: *mut c_void,
    _db: *mut ffi::sqlite3,
    _name: *const c_char,
    frames: c_int,
) -> c_int {
    // SAFETY: `arg` is the DeferredCheckpoint installed by `commit`, alive while it runs.
    let deferred = &*(arg as *const DeferredCheckpoint);
    if deferred.pages > 0 && frames >= deferred.pages {
        deferred.due.set(true);
    }
    ffi::SQLITE_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs that skip the JS thread from now on, counting them down to the next try.
    fn skipped(b: &Backoff) -> u32 {
        let mut n = 0;
        while skips(b) {
            n += 1;
        }
        n
    }

    #[test]
    fn a_reads_first_overrun_moves_it_alone_a_second_soon_after_skips() {
        let b = Backoff::default();
        back_off_with_strike(&b, true);
        assert_eq!(skipped(&b), 0, "a first overrun skips nothing");
        back_off_with_strike(&b, false);
        back_off_with_strike(&b, true);
        assert_eq!(skipped(&b), FIRST_SKIP, "another within 4 runs that fit skips");
        back_off_with_strike(&b, true);
        assert_eq!(skipped(&b), 2 * FIRST_SKIP, "and doubles while it keeps overrunning");
    }

    #[test]
    fn a_reads_overrun_is_forgotten_after_4_runs_that_fit() {
        let b = Backoff::default();
        back_off_with_strike(&b, true);
        for _ in 0..4 {
            back_off_with_strike(&b, false);
        }
        back_off_with_strike(&b, true);
        assert_eq!(skipped(&b), 0);
    }

    #[test]
    fn a_slices_first_overrun_skips() {
        let b = Backoff::default();
        back_off(&b, true);
        assert_eq!(skipped(&b), FIRST_SKIP);
    }
}
