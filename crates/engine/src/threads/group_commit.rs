//! Group commit (experiments/022): standalone writes that are queued together commit together,
//! in one `BEGIN IMMEDIATE … COMMIT`, and each still behaves as if it ran alone — its own
//! result, its own error, in call order. In WAL mode a commit's cost is mostly its file locks
//! and its WAL frame write, and those are what a group shares.
//!
//! Only single INSERT / UPDATE / DELETE / REPLACE statements join a group; anything else runs
//! alone, in its place. A statement that fails inside the group is undone by SQLite's statement
//! journal exactly as in autocommit. When SQLite rolls the whole group back on its own
//! (`RAISE(ROLLBACK)`, `OR ROLLBACK`, a full disk) or the COMMIT fails, nothing of the group
//! was committed, so every job of it runs again alone: the outcome is the same as without
//! grouping.

use sqlite3mc_sys as ffi;

use super::job::{Job, Outcome, Request};
use super::worker::PoolConnection;

/// The most jobs one group commits: bounds how long the first waits for its completion.
pub const MAX_GROUP: usize = 128;

/// A job that may run in a group: a standalone `execute` (its statement is checked in `run`).
pub fn may_join(job: &Job) -> bool {
    matches!(job.request, Request::Execute) && !job.in_transaction
}

/// Groups committed and the writes in them (diagnostics).
#[derive(Clone, Copy, Default)]
pub struct Committed {
    pub groups: u64,
    pub writes: u64,
}

/// Runs `jobs` in order, grouping the runs of single DML statements, with `alone` running one
/// job on its own; returns the outcomes in order.
pub fn run(
    worker: &mut PoolConnection,
    jobs: &[Job],
    committed: &mut Committed,
    alone: &mut impl FnMut(&mut PoolConnection, &Job) -> Outcome,
) -> Vec<Outcome> {
    let mut outcomes = Vec::with_capacity(jobs.len());
    let mut start = 0;
    while start < jobs.len() {
        let end = start + jobs[start..].iter().take_while(|j| is_single_dml(&j.sql)).count();
        if end - start >= 2 {
            let group = &jobs[start..end];
            match commit_together(worker, group, alone) {
                Some(together) => {
                    committed.groups += 1;
                    committed.writes += group.len() as u64;
                    outcomes.extend(together);
                }
                None => outcomes.extend(group.iter().map(|job| alone(worker, job))),
            }
            start = end;
        } else {
            outcomes.push(alone(worker, &jobs[start]));
            start += 1;
        }
    }
    outcomes
}

/// The group's outcomes, or None when it could not commit as one: then nothing of it is
/// committed and the connection's last insert rowid is as before it, so running the jobs again
/// alone reports what they would have reported without the group.
fn commit_together(
    worker: &mut PoolConnection,
    jobs: &[Job],
    alone: &mut impl FnMut(&mut PoolConnection, &Job) -> Outcome,
) -> Option<Vec<Outcome>> {
    // SAFETY: valid handle, on its own thread.
    let rowid_before = unsafe { ffi::sqlite3_last_insert_rowid(worker.conn.raw()) };
    let outcomes = try_together(worker, jobs, alone);
    if outcomes.is_none() {
        // SAFETY: as above.
        unsafe { ffi::sqlite3_set_last_insert_rowid(worker.conn.raw(), rowid_before) };
    }
    outcomes
}

fn try_together(
    worker: &mut PoolConnection,
    jobs: &[Job],
    alone: &mut impl FnMut(&mut PoolConnection, &Job) -> Outcome,
) -> Option<Vec<Outcome>> {
    worker.control("BEGIN IMMEDIATE").ok()?;
    let mut outcomes = Vec::with_capacity(jobs.len());
    for job in jobs {
        outcomes.push(alone(worker, job));
        if worker.conn.autocommit() {
            return None; // SQLite rolled the group back on its own
        }
    }
    if worker.control("COMMIT").is_err() {
        if !worker.conn.autocommit() {
            let _ = worker.control("ROLLBACK");
        }
        return None;
    }
    Some(outcomes)
}

/// One INSERT, UPDATE, DELETE or REPLACE statement, judged from its text: the first keyword,
/// and no `;` before the end but trailing whitespace. Conservative: a comment before the
/// keyword, a CTE or a `;` inside a string literal keeps the statement out of groups.
pub(crate) fn is_single_dml(sql: &str) -> bool {
    let sql = sql.trim();
    let body = sql.strip_suffix(';').unwrap_or(sql);
    if body.contains(';') {
        return false;
    }
    let keyword_len = body.bytes().take_while(|b| b.is_ascii_alphabetic()).count();
    let keyword = &body[..keyword_len];
    ["INSERT", "UPDATE", "DELETE", "REPLACE"].iter().any(|k| keyword.eq_ignore_ascii_case(k))
}

#[cfg(test)]
mod tests {
    use super::is_single_dml;

    #[test]
    fn single_dml_statements_are_recognised_conservatively() {
        for sql in ["INSERT INTO t VALUES (1)", "  update t set v = 1;  ", "DELETE FROM t", "replace into t values (2)"]
        {
            assert!(is_single_dml(sql), "{sql}");
        }
        for sql in [
            "CREATE TABLE t (v)",
            "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)",
            "INSERT INTO t VALUES (';')",
            "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x",
            "-- c\nINSERT INTO t VALUES (1)",
            "BEGIN",
            "VACUUM",
            "PRAGMA user_version = 1",
            "INSERTED",
        ] {
            assert!(!is_single_dml(sql), "{sql}");
        }
    }
}
