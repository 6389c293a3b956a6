//! The pool's loops, run for real: a `Pool` on a temp-file database, its completions taken by a
//! fake `Waker` in place of the JS thread (it counts the wake-ups and lets the test wait for
//! them), and jobs sent as `napi` sends them.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::completions::{Completion, Waker};
use super::job::{IterateStep, Job, Outcome, Request};
use super::open::PoolOptions;
use super::pool::Pool;
use crate::sqlite::connection::Connection;
use crate::sqlite::setup::Role;
use crate::testing::{Opened, TempDb};
use sqlite3mc_sys as ffi;

/// How long a test waits for a completion before it fails.
const PATIENCE: Duration = Duration::from_secs(20);
const OPEN: u32 = 1;
const CLOSE: u32 = 2;
const LIVE: u32 = 3;

/// What the fake waker saw: wake-ups (a count the test waits on) and the queued flag.
#[derive(Default)]
struct Wakes {
    count: Mutex<usize>,
    cond: Condvar,
    queued: AtomicBool,
}

struct FakeWaker(Arc<Wakes>);

impl Waker for FakeWaker {
    fn wake(&self) {
        *self.0.count.lock().unwrap() += 1;
        self.0.cond.notify_all();
    }

    fn set_queued(&self, queued: bool) {
        self.0.queued.store(queued, Ordering::SeqCst);
    }

    /// Never polling: every first completion after a take wakes the "JS thread".
    fn js_polling(&self) -> bool {
        false
    }

    fn writer_started(&self) {}

    fn writer_finished(&self) {}
}

/// A pool on a fresh database file, and the completions taken from it not yet looked at.
struct Harness {
    pool: Pool,
    wakes: Arc<Wakes>,
    taken: VecDeque<Completion>,
    next_id: u32,
    closed: bool,
    file: TempDb,
    attached: Vec<TempDb>,
}

impl Harness {
    /// A pool with `readers` readers (the open completion not yet taken).
    fn start(readers: usize) -> Harness {
        Harness::start_with(readers, &[])
    }

    /// A pool with databases attached by these schema names, each on a fresh file.
    fn start_with(readers: usize, attach: &[&str]) -> Harness {
        let file = TempDb::new("pool");
        let attached: Vec<TempDb> = attach.iter().map(|_| TempDb::new("pool-attached")).collect();
        let opts = PoolOptions {
            path: file.as_str().into(),
            readers,
            busy_timeout_ms: 10_000,
            readonly: false,
            safe_integers: false,
            key: None,
            attach: attach.iter().zip(&attached).map(|(name, f)| (name.to_string(), f.as_str().into())).collect(),
            extensions: Vec::new(),
            inline: false,
            external_checkpoints: false,
            invalid_utf8: crate::sqlite::connection::InvalidUtf8::Error,
            functions: None,
            idle_timeout: std::time::Duration::from_secs(10),
            vfs: None,
            synchronous: crate::sqlite::setup::Synchronous::Normal,
        };
        let wakes = Arc::new(Wakes::default());
        let pool = Pool::start(opts, OPEN, Box::new(FakeWaker(wakes.clone())));
        Harness { pool, wakes, taken: VecDeque::new(), next_id: 100, closed: false, file, attached }
    }

    /// A started pool with its open completion taken.
    fn open(readers: usize) -> Harness {
        let mut h = Harness::start(readers);
        assert_eq!(h.outcome(OPEN), "done");
        h
    }

    fn wake_ups(&self) -> usize {
        *self.wakes.count.lock().unwrap()
    }

    /// Takes what is queued, or waits for a wake-up; false when none came in time.
    fn take_or_wait(&mut self, deadline: Instant) -> bool {
        let seen = self.wake_ups();
        let (list, _) = self.pool.shared.completions.take(usize::MAX);
        if !list.is_empty() {
            self.taken.extend(list);
            return true;
        }
        // A completion queued after the take wakes again (the take reset the pending wake-up).
        let mut count = self.wakes.count.lock().unwrap();
        while *count == seen {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else { return false };
            count = self.wakes.cond.wait_timeout(count, left).unwrap().0;
        }
        true
    }

    /// The next completion, in the order they were queued.
    fn next(&mut self) -> Completion {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(c) = self.taken.pop_front() {
                return c;
            }
            assert!(self.take_or_wait(deadline), "no completion within {PATIENCE:?}");
        }
    }

    /// Job `id`'s completion (described), leaving the others queued before it in place.
    fn outcome(&mut self, id: u32) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(i) = self.taken.iter().position(|c| c.id == id) {
                return describe(&self.taken.remove(i).unwrap().outcome);
            }
            assert!(self.take_or_wait(deadline), "job {id} did not complete within {PATIENCE:?}");
        }
    }

    fn job(&mut self, request: Request, sql: &str, params: Vec<u8>) -> Job {
        self.next_id += 1;
        Job {
            id: self.next_id,
            request,
            sql: sql.into(),
            params,
            cancellable: false,
            in_transaction: false,
            queued: None,
        }
    }

    /// Sends an `execute` to the writer; returns its id.
    fn write(&mut self, sql: &str, params: Vec<u8>) -> u32 {
        let job = self.job(Request::Execute, sql, params);
        let id = job.id;
        assert!(self.pool.write(job));
        id
    }

    /// Sends a `selectBytes` (JSON rows) to the readers; returns its id.
    fn read(&mut self, sql: &str) -> u32 {
        let job = self.job(Request::Select { max_rows: usize::MAX, json: true }, sql, Vec::new());
        let id = job.id;
        self.pool.read(job);
        id
    }

    fn execute(&mut self, sql: &str) -> String {
        let id = self.write(sql, Vec::new());
        self.outcome(id)
    }

    fn select(&mut self, sql: &str) -> String {
        let id = self.read(sql);
        self.outcome(id)
    }

    fn close(&mut self) {
        self.closed = true;
        self.pool.close(CLOSE);
    }

    fn requeries(&self) -> u64 {
        self.pool.diagnostics().counters.requeries
    }

    /// Another connection to the database holding its write lock (`BEGIN IMMEDIATE`) until it
    /// drops: the pool's writer waits for it (busy timeout) in the meantime.
    fn hold_write_lock(&self) -> Locker {
        let other = Opened::open(self.file.as_str(), Role::Writer);
        other.conn.exec("BEGIN IMMEDIATE").unwrap_or_else(|e| panic!("BEGIN IMMEDIATE: {}", e.message));
        Locker(other)
    }
}

impl Drop for Harness {
    /// Joins the pool's threads before the files go (unless the test closed it already).
    fn drop(&mut self) {
        if !self.closed && !std::thread::panicking() {
            self.close();
            self.outcome(CLOSE);
        }
    }
}

struct Locker(Opened);

impl Drop for Locker {
    fn drop(&mut self) {
        let _ = self.0.conn.exec("COMMIT");
    }
}

/// A job's outcome in words, for comparing.
fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Done => "done".into(),
        Outcome::Changes { changes, last_insert_rowid } => format!("changes {changes} rowid {last_insert_rowid}"),
        Outcome::Json(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Outcome::Error(e) => format!("error {}", e.code),
        Outcome::Rows(rows) | Outcome::RowsPart(rows) => format!("rows {}", rows.row_count()),
        Outcome::Page(rows) => format!("page {}", rows.row_count()),
        Outcome::LiveRan { .. } => "live ran".into(),
        Outcome::LiveRows(rows) => format!("live rows {}", rows.row_count()),
        Outcome::LiveError(e) => format!("live error {}", e.code),
        Outcome::Progress { remaining, total } => format!("progress {remaining}/{total}"),
        Outcome::Stepped { rc } => format!("stepped {rc}"),
        Outcome::Queued(_) => "queued".into(),
        Outcome::Returned { rows, changes, last_insert_rowid } => {
            format!("rows {} changes {changes} rowid {last_insert_rowid}", rows.row_count())
        }
    }
}

/// One positional parameter set holding an integer (the layout in sqlite/params.rs).
fn int(v: i64) -> Vec<u8> {
    let mut b = vec![1, 1, 0, 0, 0, 1];
    b.extend_from_slice(&v.to_le_bytes());
    b
}

#[test]
fn the_open_completes_first_once_its_connections_are_open() {
    let mut h = Harness::start(2);
    let open = h.next();
    assert_eq!((open.id, describe(&open.outcome)), (OPEN, "done".to_string()), "the first completion");
    assert!(h.wake_ups() >= 1, "the open woke the JS thread");
    assert!(!h.wakes.queued.load(Ordering::SeqCst), "taken: nothing shows as queued");
}

#[test]
fn an_open_that_fails_completes_with_its_error() {
    let file = TempDb::new("pool-missing-dir");
    let opts = PoolOptions {
        path: format!("{}/no/such/dir/x.db", file.as_str()),
        readers: 2,
        busy_timeout_ms: 0,
        readonly: false,
        safe_integers: false,
        key: None,
        attach: Vec::new(),
        extensions: Vec::new(),
        inline: false,
        external_checkpoints: false,
        invalid_utf8: crate::sqlite::connection::InvalidUtf8::Error,
        functions: None,
        idle_timeout: std::time::Duration::from_secs(10),
        vfs: None,
        synchronous: crate::sqlite::setup::Synchronous::Normal,
    };
    let wakes = Arc::new(Wakes::default());
    let pool = Pool::start(opts, OPEN, Box::new(FakeWaker(wakes.clone())));
    let mut h = Harness { pool, wakes, taken: VecDeque::new(), next_id: 100, closed: false, file, attached: vec![] };
    assert_eq!(h.outcome(OPEN), "error SQLITE_CANTOPEN");
}

#[test]
fn a_traced_job_reports_its_wait_in_the_queue_before_its_result_and_an_untraced_one_none() {
    let mut h = Harness::open(1);
    h.execute("CREATE TABLE t (v)");
    let mut read = h.job(Request::Select { max_rows: usize::MAX, json: true }, "SELECT 1 AS one", Vec::new());
    read.queued = Some(Instant::now());
    let traced_read = read.id;
    h.pool.read(read);
    let mut write = h.job(Request::Execute, "INSERT INTO t VALUES (1)", Vec::new());
    write.queued = Some(Instant::now());
    let traced_write = write.id;
    assert!(h.pool.write(write));
    let untraced_read = h.read("SELECT 2 AS two");
    let untraced_write = h.write("INSERT INTO t VALUES (2)", Vec::new());
    let mut seen = Vec::new();
    while seen.iter().filter(|(_, what): &&(u32, String)| what != "queued").count() < 4 {
        let c = h.next();
        seen.push((c.id, describe(&c.outcome)));
    }
    let of = |id: u32| seen.iter().filter(|(i, _)| *i == id).map(|(_, what)| what.as_str()).collect::<Vec<_>>();
    assert_eq!(of(traced_read), ["queued", r#"[{"one":1}]"#]);
    assert_eq!(of(traced_write), ["queued", "changes 1 rowid 1"]);
    assert_eq!(of(untraced_read), [r#"[{"two":2}]"#]);
    assert_eq!(of(untraced_write), ["changes 1 rowid 2"]);
}

#[test]
fn a_write_with_returning_gives_its_rows_and_its_changes() {
    let mut h = Harness::open(2);
    h.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v)");
    assert_eq!(h.execute("INSERT INTO t (v) VALUES (1), (2) RETURNING id"), "rows 2 changes 2 rowid 2");
    assert_eq!(h.execute("UPDATE t SET v = v + 1 RETURNING *"), "rows 2 changes 2 rowid 2");
    assert_eq!(h.execute("DELETE FROM t WHERE v > 9 RETURNING id"), "rows 0 changes 0 rowid 2");
    assert_eq!(h.select("SELECT sum(v) AS s FROM t"), r#"[{"s":5}]"#, "the writes committed");
}

#[test]
fn columns_names_each_column_and_its_declared_type_without_running_the_statement() {
    let mut h = Harness::open(2);
    h.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, w)");
    let job = h.job(Request::Columns, "INSERT INTO t (v) VALUES ('x') RETURNING id, v AS a, w, 1 + 1", Vec::new());
    let id = job.id;
    h.pool.read(job);
    assert_eq!(
        h.outcome(id),
        r#"[{"name":"id","declaredType":"INTEGER"},{"name":"a","declaredType":"TEXT"},{"name":"w","declaredType":null},{"name":"1 + 1","declaredType":null}]"#
    );
    assert_eq!(h.select("SELECT count(*) AS n FROM t"), r#"[{"n":0}]"#, "nothing ran");
}

#[test]
fn reads_and_writes_complete_with_their_outcomes() {
    let mut h = Harness::open(2);
    assert_eq!(h.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v UNIQUE)"), "changes 0 rowid 0");
    let id = h.write("INSERT INTO t (v) VALUES (?)", int(7));
    assert_eq!(h.outcome(id), "changes 1 rowid 1");
    assert_eq!(h.execute("INSERT INTO t (v) VALUES (8), (9)"), "changes 2 rowid 3");
    assert_eq!(h.select("SELECT id, v FROM t ORDER BY id"), r#"[{"id":1,"v":7},{"id":2,"v":8},{"id":3,"v":9}]"#);
    assert_eq!(h.execute("UPDATE t SET v = v + 10 WHERE v > 7"), "changes 2 rowid 3");
    assert_eq!(h.select("SELECT sum(v) AS s FROM t"), r#"[{"s":44}]"#, "a read sees the writes completed before it");
    assert_eq!(h.execute("INSERT INTO t (v) VALUES (7)"), "error SQLITE_CONSTRAINT_UNIQUE");
    assert_eq!(h.select("SELECT nope FROM t"), "error SQLITE_ERROR");
    assert_eq!(h.select("DELETE FROM t"), "error ERR_NOT_READ_ONLY");
    assert_eq!(h.select("SELECT count(*) AS n FROM t"), r#"[{"n":3}]"#, "failed jobs changed nothing");
}

#[test]
fn writes_complete_in_call_order() {
    let mut h = Harness::open(2);
    h.execute("CREATE TABLE t (v)");
    // Standalone INSERTs (which may be grouped), scripts and batches (which run alone), queued
    // at once.
    let mut ids = Vec::new();
    for i in 0..60 {
        let id = match i % 10 {
            3 => h.write(&format!("INSERT INTO t VALUES ({i}); SELECT 1"), Vec::new()),
            7 => {
                let mut params = 1u32.to_le_bytes().to_vec();
                params.extend(int(i));
                let job = h.job(Request::Batch, "INSERT INTO t VALUES (?)", params);
                let id = job.id;
                assert!(h.pool.write(job));
                id
            }
            _ => h.write("INSERT INTO t VALUES (?)", int(i)),
        };
        ids.push(id);
    }
    let completed: Vec<u32> = (0..ids.len()).map(|_| h.next().id).collect();
    assert_eq!(completed, ids, "completions in call order");
    let expected: Vec<String> = (0..60).map(|i| format!(r#"{{"v":{i}}}"#)).collect();
    assert_eq!(h.select("SELECT v FROM t ORDER BY rowid"), format!("[{}]", expected.join(",")), "run in call order");
}

/// Queues a batch that waits for the write lock `lock` holds, then `sqls`: they queue up
/// behind it, and run once the lock is released. Returns their ids.
fn queue_behind_a_lock(h: &mut Harness, lock: Locker, sqls: &[&str]) -> Vec<u32> {
    // A batch runs alone (no group): it holds the writer until the lock is released.
    let mut params = 1u32.to_le_bytes().to_vec();
    params.extend(int(0));
    let first = h.job(Request::Batch, "INSERT INTO t (v) VALUES (?)", params);
    let first_id = first.id;
    assert!(h.pool.write(first));
    let ids = sqls.iter().map(|sql| h.write(sql, Vec::new())).collect();
    drop(lock);
    assert_eq!(h.outcome(first_id), "changes 1 rowid 1");
    ids
}

#[test]
fn queued_inserts_commit_as_a_group_each_with_its_own_result() {
    let mut h = Harness::open(2);
    h.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v UNIQUE)");
    let lock = h.hold_write_lock();
    let sqls: Vec<String> = (1..=20).map(|i| format!("INSERT INTO t (v) VALUES ({i})")).collect();
    let sqls: Vec<&str> = sqls.iter().map(String::as_str).collect();
    let ids = queue_behind_a_lock(&mut h, lock, &sqls);
    for (n, id) in ids.iter().enumerate() {
        assert_eq!(h.outcome(*id), format!("changes 1 rowid {}", n + 2), "its own changes and rowid");
    }
    let groups = h.pool.diagnostics().group_commits;
    assert_eq!((groups.groups, groups.writes), (1, 20), "the 20 queued INSERTs committed as one group");
    assert_eq!(h.select("SELECT count(*) AS n FROM t"), r#"[{"n":21}]"#);
}

#[test]
fn a_failing_insert_in_a_group_gets_its_own_error_and_the_others_commit() {
    let mut h = Harness::open(2);
    h.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v UNIQUE)");
    let lock = h.hold_write_lock();
    let sqls = ["INSERT INTO t (v) VALUES (1)", "INSERT INTO t (v) VALUES (0)", "INSERT INTO t (v) VALUES (2)"];
    let ids = queue_behind_a_lock(&mut h, lock, &sqls);
    let outcomes: Vec<String> = ids.iter().map(|id| h.outcome(*id)).collect();
    assert_eq!(outcomes, ["changes 1 rowid 2", "error SQLITE_CONSTRAINT_UNIQUE", "changes 1 rowid 3"]);
    let groups = h.pool.diagnostics().group_commits;
    assert_eq!((groups.groups, groups.writes), (1, 3), "still one group");
    assert_eq!(h.select("SELECT v FROM t ORDER BY id"), r#"[{"v":0},{"v":1},{"v":2}]"#);
}

#[test]
fn a_panicking_job_fails_alone_and_the_pool_keeps_working() {
    let mut h = Harness::open(2);
    let job = h.job(Request::Panic, "", Vec::new());
    let id = job.id;
    assert!(h.pool.write(job));
    assert_eq!(h.outcome(id), "error ERR_INTERNAL", "the writer's panic");
    assert_eq!(h.execute("CREATE TABLE t (v)"), "changes 0 rowid 0", "the writer goes on");
    let job = h.job(Request::Panic, "", Vec::new());
    let id = job.id;
    h.pool.read(job);
    assert_eq!(h.outcome(id), "error ERR_INTERNAL", "a reader's panic");
    for _ in 0..4 {
        assert_eq!(h.select("SELECT count(*) AS n FROM t"), r#"[{"n":0}]"#, "the readers go on");
    }
}

#[test]
fn a_cancelled_read_is_aborted() {
    let mut h = Harness::open(2);
    // Cancelled before it runs.
    let mut job = h.job(Request::Select { max_rows: usize::MAX, json: true }, "SELECT 1 AS one", Vec::new());
    job.cancellable = true;
    let id = job.id;
    h.pool.cancel(id);
    h.pool.read(job);
    assert_eq!(h.outcome(id), "error ABORT_ERR");
    // Cancelled while it runs (a count to 10^11 does not end by itself within the test's patience).
    let sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000000) \
               SELECT max(i) AS m FROM n";
    let mut job = h.job(Request::Select { max_rows: usize::MAX, json: true }, sql, Vec::new());
    job.cancellable = true;
    let id = job.id;
    h.pool.read(job);
    std::thread::sleep(Duration::from_millis(50));
    h.pool.cancel(id);
    assert_eq!(h.outcome(id), "error ABORT_ERR");
    assert_eq!(h.select("SELECT 1 AS one"), r#"[{"one":1}]"#, "the reader goes on");
}

#[test]
fn close_finishes_what_is_queued_joins_the_threads_and_completes() {
    let mut h = Harness::open(2);
    h.execute("CREATE TABLE t (v)");
    let mut ids: Vec<u32> = (0..10).map(|i| h.write("INSERT INTO t VALUES (?)", int(i))).collect();
    ids.push(h.read("SELECT 1 AS one"));
    h.close();
    let mut before_close = Vec::new();
    loop {
        let c = h.next();
        if c.id == CLOSE {
            assert_eq!(describe(&c.outcome), "done");
            break;
        }
        before_close.push(c.id);
    }
    before_close.sort_unstable();
    assert_eq!(before_close, ids, "every queued job completed before the close did");
    // Every pool thread held the shared state: joined, only the pool and the closing thread can.
    assert!(Arc::strong_count(&h.pool.shared) <= 2, "the reader and writer threads ended");
    let job = h.job(Request::Execute, "INSERT INTO t VALUES (1)", Vec::new());
    assert!(!h.pool.write(job), "a closed pool takes no writes");
}

#[test]
fn completions_queued_while_a_wake_up_is_pending_wake_no_more() {
    let mut h = Harness::start(2);
    let ids: Vec<u32> = (0..5).map(|_| h.read("SELECT 1 AS one")).collect();
    let deadline = Instant::now() + PATIENCE;
    while h.pool.shared.completions.queued() < 6 {
        assert!(Instant::now() < deadline, "the open and the reads did not complete");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(h.wake_ups(), 1, "the open woke the JS thread; the reads queued behind it did not");
    assert!(h.wakes.queued.load(Ordering::SeqCst), "shown as queued to a polling JS thread");
    assert_eq!(h.outcome(OPEN), "done");
    for id in ids {
        assert_eq!(h.outcome(id), r#"[{"one":1}]"#, "taken in the same batch");
    }
    assert_eq!(h.wake_ups(), 1);
    assert!(!h.wakes.queued.load(Ordering::SeqCst), "all taken");
    assert_eq!(h.select("SELECT 2 AS two"), r#"[{"two":2}]"#);
    assert_eq!(h.wake_ups(), 2, "the next completion after a take wakes again");
}

#[test]
fn a_live_query_reruns_after_a_committed_write_to_what_it_reads_only() {
    let mut h = Harness::open(2);
    h.execute("CREATE TABLE t (v); CREATE TABLE u (v)");
    h.pool.live_start(LIVE, "SELECT v FROM t".into(), Vec::new());
    assert_eq!(h.outcome(LIVE), "live rows 0", "its first rows");
    assert_eq!(h.execute("INSERT INTO t VALUES (1)"), "changes 1 rowid 1");
    assert_eq!(h.requeries(), 1, "queued before the write completed");
    assert_eq!(h.outcome(LIVE), "live rows 1", "re-run after the write to t");
    assert_eq!(h.execute("INSERT INTO u VALUES (1)"), "changes 1 rowid 1");
    assert_eq!(h.execute("BEGIN; INSERT INTO t VALUES (2); ROLLBACK"), "changes 1 rowid 2");
    assert_eq!(h.requeries(), 1, "no re-run for a write to u, nor for a rolled-back one");
    h.pool.live_stop(LIVE);
    assert_eq!(h.execute("INSERT INTO t VALUES (3)"), "changes 1 rowid 2");
    assert_eq!(h.requeries(), 1, "stopped: no re-run");
    assert_eq!(h.select("SELECT 1 AS one"), r#"[{"one":1}]"#);
    assert!(h.taken.iter().all(|c| c.id != LIVE), "nothing more delivered");
}

#[test]
fn a_live_query_started_while_an_untracked_write_runs_sees_what_that_write_committed() {
    let mut h = Harness::start_with(2, &["aux"]);
    assert_eq!(h.outcome(OPEN), "done");
    h.execute("CREATE TABLE t (v)");
    let lock = h.hold_write_lock(); // on main only
    let id = h.write("CREATE TABLE aux.x (a); INSERT INTO main.t VALUES (1)", Vec::new());
    // Once aux.x exists the job is running, untracked (no live query yet), and waits for main.
    let aux = Opened::open(h.attached[0].as_str(), Role::Reader);
    let deadline = Instant::now() + PATIENCE;
    while aux.conn.query_int("SELECT count(*) FROM sqlite_schema WHERE name = 'x'").unwrap() == 0 {
        assert!(Instant::now() < deadline, "the script did not start");
        std::thread::sleep(Duration::from_millis(1));
    }
    h.pool.live_start(LIVE, "SELECT v FROM t".into(), Vec::new());
    assert_eq!(h.outcome(LIVE), "live rows 0", "its first run read t before the INSERT committed");
    drop(lock);
    assert_eq!(h.outcome(id), "changes 1 rowid 1");
    assert_eq!(h.requeries(), 1, "the untracked job's commit re-runs the query (queued before it completed)");
    assert_eq!(h.outcome(LIVE), "live rows 1", "so it sees the INSERT");
}

/// A pool whose database holds 3,000 rows of 2,000 bytes (several backup steps), and a path
/// for its copy.
fn six_mib_to_back_up() -> (Harness, String) {
    let mut h = Harness::open(1);
    h.execute("CREATE TABLE t (v TEXT)");
    h.execute(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000) \
         INSERT INTO t SELECT printf('%.2000d', x) FROM c",
    );
    let dest = format!("{}.copy", h.file.as_str());
    (h, dest)
}

#[test]
fn a_backup_steps_while_another_connection_holds_the_write_lock_and_copies_its_snapshot() {
    let (mut h, dest) = six_mib_to_back_up();
    let lock = h.hold_write_lock();
    h.pool.backup(900, dest.clone());
    let mut steps = Vec::new();
    let done = loop {
        let c = h.next();
        assert_eq!(c.id, 900);
        match c.outcome {
            Outcome::Progress { remaining, .. } => steps.push(remaining),
            other => break describe(&other),
        }
    };
    drop(lock);
    assert_eq!(done, "done");
    assert!(steps.len() > 1 && steps.last() == Some(&0), "steps: {steps:?}");
    let copy = Opened::open(&dest, Role::Reader);
    assert_eq!(copy.conn.query_int("SELECT count(*) FROM t").unwrap(), 3000);
    assert_eq!(copy.conn.query_text("PRAGMA integrity_check").unwrap(), "ok");
    drop(copy);
    for leftover in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{dest}{leftover}"));
    }
}

#[test]
fn a_cancelled_backup_stops_with_abort_and_leaves_nothing() {
    let (mut h, dest) = six_mib_to_back_up();
    h.pool.cancel(901); // before it starts: it stops after its first step
    h.pool.backup(901, dest.clone());
    let outcome = loop {
        let c = h.next();
        if !matches!(c.outcome, Outcome::Progress { .. }) {
            break describe(&c.outcome);
        }
    };
    assert_eq!(outcome, "error ABORT_ERR");
    assert!(!std::path::Path::new(&dest).exists());
    assert!(!std::path::Path::new(&format!("{dest}.resqlite-backup")).exists());
}

impl Harness {
    /// A step of `pages` pages of paused backup `backup`: its progress, then its code or error.
    fn backup_step(&mut self, backup: u32, pages: i32) -> String {
        self.next_id += 1;
        let id = self.next_id;
        self.pool.backup_step(id, backup, pages);
        let progress = self.outcome(id);
        if progress.starts_with("error") {
            return progress;
        }
        format!("{progress}, {}", self.outcome(id))
    }

    /// Finishes paused backup `backup`.
    fn backup_finish(&mut self, backup: u32) {
        self.next_id += 1;
        self.pool.backup_finish(self.next_id, backup);
        assert_eq!(self.outcome(self.next_id), "done");
    }

    fn page_count(&mut self) -> i64 {
        Opened::open(self.file.as_str(), Role::Reader).conn.query_int("PRAGMA page_count").unwrap()
    }
}

/// Whether another connection can take `path`'s write lock: no backup holds its destination.
fn lockable(path: &str) -> bool {
    let (other, _) = Connection::open(path, ffi::SQLITE_OPEN_READWRITE, 0).unwrap();
    let free = other.exec("BEGIN IMMEDIATE").is_ok();
    let _ = other.exec("ROLLBACK");
    free
}

fn remove_copy(dest: &str) {
    for leftover in ["", "-journal", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{dest}{leftover}"));
    }
}

#[test]
fn a_paused_backup_copies_the_pages_each_step_asks_for_and_starts_over_after_a_commit() {
    let (mut h, dest) = six_mib_to_back_up();
    h.pool.backup_start(910, dest.clone());
    assert_eq!(h.outcome(910), "done");
    assert_eq!(std::fs::metadata(&dest).unwrap().len(), 0, "created empty at the start");
    let pages = h.page_count();
    assert_eq!(h.backup_step(910, 0), format!("progress {pages}/{pages}, stepped 0"));
    assert_eq!(h.backup_step(910, 1), format!("progress {}/{pages}, stepped 0", pages - 1));
    assert_eq!(h.backup_step(910, 10), format!("progress {}/{pages}, stepped 0", pages - 11));
    // Paused, it holds no snapshot: a commit, then a checkpoint that starts the WAL over.
    h.execute("INSERT INTO t SELECT v FROM t LIMIT 100");
    let other = Opened::open(h.file.as_str(), Role::Writer);
    assert_eq!(other.conn.query_int("PRAGMA wal_checkpoint(TRUNCATE)").unwrap(), 0, "busy: a snapshot pins the WAL");
    drop(other);
    // That commit was another connection's: the next step starts the copy over.
    let grown = h.page_count();
    assert!(grown > pages);
    assert_eq!(h.backup_step(910, 1), format!("progress {}/{grown}, stepped 0", grown - 1));
    assert_eq!(h.backup_step(910, -1), format!("progress 0/{grown}, stepped 101"));
    h.backup_finish(910);
    let copy = Opened::open(&dest, Role::Reader);
    assert_eq!(copy.conn.query_int("SELECT count(*) FROM t").unwrap(), 3100);
    assert_eq!(copy.conn.query_text("PRAGMA integrity_check").unwrap(), "ok");
    drop(copy);
    remove_copy(&dest);
}

#[test]
fn a_paused_backup_finished_part_way_or_closed_with_its_database_leaves_its_destination_empty() {
    let (mut h, dest) = six_mib_to_back_up();
    let closed = format!("{dest}.closed");
    h.pool.backup_start(911, dest.clone());
    h.pool.backup_start(912, closed.clone());
    assert_eq!(h.outcome(911), "done");
    assert_eq!(h.outcome(912), "done");
    assert!(h.backup_step(911, 100).ends_with("stepped 0"));
    assert!(h.backup_step(912, 100).ends_with("stepped 0"));
    assert!(!lockable(&dest), "a paused backup holds its destination's write transaction");
    h.backup_finish(911);
    assert_eq!(h.backup_step(911, 1), "error ERR_BACKUP", "a finished backup steps no more");
    // The database's close finishes the other.
    h.close();
    assert_eq!(h.outcome(CLOSE), "done");
    assert_eq!(h.backup_step(912, 1), "error ERR_BACKUP");
    for path in [&dest, &closed] {
        assert_eq!(std::fs::metadata(path).unwrap().len(), 0, "{path}: the copy rolled back");
        assert!(!std::path::Path::new(&format!("{path}-journal")).exists());
        assert!(lockable(path), "{path}: its connection closed");
        remove_copy(path);
    }
}

#[test]
fn a_paused_backup_refuses_an_existing_destination_and_a_missing_directory_leaving_nothing() {
    let (mut h, dest) = six_mib_to_back_up();
    std::fs::write(&dest, b"not a database").unwrap();
    h.pool.backup_start(913, dest.clone());
    assert_eq!(h.outcome(913), "error ERR_INVALID_PATH");
    assert_eq!(std::fs::read(&dest).unwrap(), b"not a database");
    remove_copy(&dest);
    let missing = format!("{dest}.missing/copy.db");
    h.pool.backup_start(914, missing.clone());
    assert_eq!(h.outcome(914), "error SQLITE_CANTOPEN");
    assert!(!std::path::Path::new(&missing).exists());
}

impl Harness {
    /// Sends a step of iteration `cursor` to the readers (`start`: the cursor's own id) and
    /// returns its outcome.
    fn iterate(&mut self, cursor: u32, step: IterateStep, sql: &str) -> String {
        let id = if matches!(step, IterateStep::Start { .. }) { cursor } else { self.next_id + 1 };
        let mut job = self.job(Request::Iterate { cursor, step }, sql, Vec::new());
        job.id = id;
        self.pool.read(job);
        self.outcome(id)
    }
}

#[test]
fn an_iteration_pages_on_its_own_connection_and_reads_go_on_meanwhile() {
    let mut h = Harness::open(1);
    h.execute("CREATE TABLE t (x); INSERT INTO t WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 25) SELECT i FROM c");
    let cursor = 100;
    assert_eq!(h.iterate(cursor, IterateStep::Start { page_rows: 10 }, "SELECT x FROM t"), "page 10");
    // The only reader is free between pages: a read runs, and a write commits.
    assert_eq!(h.select("SELECT count(*) AS c FROM t"), r#"[{"c":25}]"#);
    assert_eq!(h.execute("INSERT INTO t VALUES (26)"), "changes 1 rowid 26");
    assert_eq!(h.iterate(cursor, IterateStep::Next, ""), "page 10");
    assert_eq!(h.iterate(cursor, IterateStep::Next, ""), "rows 5", "the last page, from the first page's snapshot");
    assert_eq!(h.iterate(cursor, IterateStep::Next, ""), "error ERR_ITERATION_ENDED", "read to its end: gone");
}

#[test]
fn an_iteration_ended_early_is_gone_and_its_statement_checked_like_a_select() {
    let mut h = Harness::open(1);
    h.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1), (2), (3)");
    assert_eq!(h.iterate(200, IterateStep::Start { page_rows: 1 }, "SELECT x FROM t"), "page 1");
    assert_eq!(h.iterate(200, IterateStep::End, ""), "done");
    assert_eq!(h.iterate(200, IterateStep::Next, ""), "error ERR_ITERATION_ENDED");
    assert_eq!(h.iterate(201, IterateStep::Start { page_rows: 5 }, "DELETE FROM t"), "error ERR_NOT_READ_ONLY");
    assert_eq!(
        h.iterate(202, IterateStep::Start { page_rows: 5 }, "SELECT 1; SELECT 2"),
        "error ERR_MULTIPLE_STATEMENTS"
    );
    assert_eq!(h.select("SELECT count(*) AS c FROM t"), r#"[{"c":3}]"#, "nothing changed");
}

#[test]
fn many_databases_share_the_engine_threads_and_keep_their_own_write_order() {
    let mut pools: Vec<Harness> = (0..40).map(|_| Harness::open(2)).collect();
    for h in &mut pools {
        assert_eq!(h.execute("CREATE TABLE t (seq INTEGER)"), "changes 0 rowid 0");
    }
    // Writes to every database in flight at once, then each database's rows in commit order.
    let ids: Vec<Vec<u32>> = pools
        .iter_mut()
        .map(|h| (0..20).map(|i| h.write(&format!("INSERT INTO t VALUES ({i})"), Vec::new())).collect())
        .collect();
    for (h, ids) in pools.iter_mut().zip(ids) {
        for id in ids {
            assert!(h.outcome(id).starts_with("changes 1"));
        }
        let expected: Vec<String> = (0..20).map(|i| format!("{{\"seq\":{i}}}")).collect();
        assert_eq!(h.select("SELECT seq FROM t ORDER BY rowid"), format!("[{}]", expected.join(",")));
    }
    let d = super::executor::diagnostics();
    assert!(d.threads <= super::executor::max_threads(), "{} threads for 40 databases", d.threads);
    assert!(d.databases >= 40, "{} databases counted", d.databases);
    assert!(d.connections >= 80, "{} connections: a writer and a reader each at least", d.connections);
}
