//! Runs one job on a thread's worker: what its request asks for, with a panic turned into an
//! error for that job alone.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::iterate;
use super::job::{Job, Outcome, Request};
use super::shared::Shared;
use super::step_aside;
use super::worker::PoolConnection;
use crate::error::DbError;
use crate::live::dependencies::ChangeSet;

/// Runs a job, turning a panic into an error for that job alone.
pub(super) fn run(worker: &mut PoolConnection, job: &Job, shared: &Shared) -> Outcome {
    step_aside::job_starts();
    let result = catch_unwind(AssertUnwindSafe(|| {
        let r = match job.request {
            Request::Select { max_rows, json } => {
                let emit = &mut |part| shared.complete(job.id, part);
                worker.select(&job.sql, &job.params, max_rows, json, shared.safe_integers, emit)
            }
            Request::Execute => worker.execute(&job.sql, &job.params, shared.safe_integers),
            Request::Control => worker.control(&job.sql),
            Request::Batch => worker.execute_batch(&job.sql, &job.params),
            Request::Panic => panic!("deliberate panic (test hook)"),
            Request::Live => Ok(worker.run_live(&job.sql, &job.params, shared.safe_integers)),
            Request::DataVersion => {
                if worker.external_change() {
                    shared.publish(&ChangeSet::everything());
                }
                Ok(Outcome::Done)
            }
            Request::Iterate { cursor, ref step } => {
                Ok(iterate::on_writer(worker, job, cursor, step, shared.safe_integers))
            }
            Request::Serialize => crate::sqlite::backup::serialize(&worker.conn).map(Outcome::Json),
            Request::Columns => worker.columns(&job.sql).map(Outcome::Json),
            Request::Describe => worker.describe(&job.sql).map(Outcome::Json),
            Request::Rekey(_) => unreachable!("rekey runs in the writer session (writer.rs run_job)"),
        };
        r.unwrap_or_else(Outcome::Error)
    }));
    result.unwrap_or_else(|payload| Outcome::Error(DbError::panicked(payload)))
}
