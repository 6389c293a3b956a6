//! The live queries of one database: which exist, what each reads, and when each runs.
//!
//! - A query runs first when it starts, then again whenever a committed change touches what it
//!   reads (`publish`). At most one run of a query is in flight; a change during a run marks
//!   it dirty and exactly one more run follows, so the last committed state is always seen.
//! - Runs wait in one FIFO and go to the reader pool only while fewer than `limit` (the
//!   number of readers) are in flight: a burst of writes cannot pile up queued re-runs.
//! - A run whose result hashes equal to the last delivered one (same row count too) delivers
//!   nothing: nothing crosses to JS.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crossbeam_channel::Sender;

use super::dependencies::{Affected, ChangeSet, Dependencies};
use crate::encode::rows::{EncodedRows, Text};
use crate::error::DbError;
use crate::threads::job::{Job, Outcome, Request};

#[derive(Default, Clone, Copy)]
pub struct Counters {
    /// Runs after an invalidation (first runs not counted).
    pub requeries: u64,
    /// A committed change touched a table a query reads, but none of the columns it reads.
    pub skipped_by_columns: u64,
    /// Runs whose result equalled the last delivered one.
    pub unchanged_suppressed: u64,
    /// Queries whose reads could not all be recorded: they depend on everything.
    pub fallback_all: u64,
}

#[derive(PartialEq, Eq)]
enum State {
    Idle,
    Queued,
    Running,
}

struct Query {
    sql: String,
    params: Vec<u8>,
    /// None until the first run compiled the statement.
    reads: Option<Arc<Dependencies>>,
    state: State,
    /// A change arrived while it ran: run again when this run ends.
    dirty: bool,
    /// Hash and row count of the last delivered result.
    delivered: Option<(u64, u32)>,
}

pub struct Registry {
    queries: HashMap<u32, Query>,
    fifo: VecDeque<u32>,
    in_flight: usize,
    limit: usize,
    /// The reader pool's queue; None once the database closes (so the readers can stop).
    readers: Option<Sender<Job>>,
    pub counters: Counters,
}

impl Registry {
    pub fn new(readers: Sender<Job>, limit: usize) -> Registry {
        Registry {
            queries: HashMap::new(),
            fifo: VecDeque::new(),
            in_flight: 0,
            limit: limit.max(1),
            readers: Some(readers),
            counters: Counters::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.queries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    pub fn start(&mut self, id: u32, sql: String, params: Vec<u8>) {
        let query = Query { sql, params, reads: None, state: State::Queued, dirty: false, delivered: None };
        self.queries.insert(id, query);
        self.fifo.push_back(id);
        self.dispatch();
    }

    /// Forgets a query; a run in flight finishes and is dropped.
    pub fn stop(&mut self, id: u32) {
        self.queries.remove(&id);
    }

    /// Stops everything: the database is closing.
    pub fn close(&mut self) {
        self.readers = None;
        self.queries.clear();
        self.fifo.clear();
    }

    /// Committed changes: queue a run of every query they may affect.
    pub fn publish(&mut self, changes: &ChangeSet) {
        let mut queued = Vec::new();
        for (&id, q) in self.queries.iter_mut() {
            let affected = match &q.reads {
                // Not compiled yet: a first run is queued (it will see the change) or running
                // (its snapshot may predate the change: run once more).
                None => Affected::Rerun,
                Some(reads) => reads.affected_by(changes),
            };
            match affected {
                Affected::Unaffected => {}
                Affected::SkippedByColumns => self.counters.skipped_by_columns += 1,
                Affected::Rerun => match q.state {
                    State::Queued => {}
                    State::Running => q.dirty = true,
                    State::Idle => {
                        q.state = State::Queued;
                        queued.push(id);
                    }
                },
            }
        }
        // HashMap order is arbitrary; queue in id (subscription) order.
        queued.sort_unstable();
        self.counters.requeries += queued.len() as u64;
        self.fifo.extend(queued);
        self.dispatch();
    }

    /// A run ended on a reader. Returns what to deliver to JS, if anything: the caller
    /// completes it before releasing the registry lock, so a query's deliveries stay in order.
    pub fn finish(
        &mut self,
        id: u32,
        result: Result<EncodedRows, DbError>,
        reads: Option<Arc<Dependencies>>,
    ) -> Option<Outcome> {
        self.in_flight -= 1;
        let deliver = match self.queries.get_mut(&id) {
            None => None,
            Some(q) => {
                q.state = State::Idle;
                if let Some(reads) = reads {
                    if reads.is_all() && !q.reads.as_ref().is_some_and(|r| r.is_all()) {
                        self.counters.fallback_all += 1;
                    }
                    q.reads = Some(reads);
                }
                let deliver = match result {
                    Ok(rows) => {
                        let fingerprint = fingerprint(&rows);
                        if q.delivered == Some(fingerprint) {
                            self.counters.unchanged_suppressed += 1;
                            None
                        } else {
                            q.delivered = Some(fingerprint);
                            Some(Outcome::LiveRows(rows))
                        }
                    }
                    Err(e) => {
                        // The next successful run delivers, even if equal to the one before.
                        q.delivered = None;
                        Some(Outcome::LiveError(e))
                    }
                };
                if std::mem::take(&mut q.dirty) {
                    q.state = State::Queued;
                    self.counters.requeries += 1;
                    self.fifo.push_back(id);
                }
                deliver
            }
        };
        self.dispatch();
        deliver
    }

    fn dispatch(&mut self) {
        let Some(readers) = &self.readers else { return };
        while self.in_flight < self.limit {
            let Some(id) = self.fifo.pop_front() else { return };
            let Some(q) = self.queries.get_mut(&id) else { continue };
            if q.state != State::Queued {
                continue;
            }
            q.state = State::Running;
            self.in_flight += 1;
            let job = Job {
                id,
                request: Request::Live,
                sql: q.sql.clone(),
                params: q.params.clone(),
                cancellable: false,
                in_transaction: false,
            };
            if readers.send(job).is_err() {
                return;
            }
        }
    }
}

/// A result's identity: a hash of its encoded bytes (column names, types, values) and its
/// row count.
fn fingerprint(rows: &EncodedRows) -> (u64, u32) {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&rows.buffer);
    match &rows.text {
        Text::OneByte(t) => hasher.update(t),
        // SAFETY: reading u16s as their bytes.
        Text::TwoByte(t) => hasher.update(unsafe { std::slice::from_raw_parts(t.as_ptr() as *const u8, t.len() * 2) }),
    }
    (hasher.digest(), rows.row_count())
}
