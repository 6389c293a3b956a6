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

use super::job::{Job, Outcome, Request};
use crate::encode::rows::EncodedRows;
use crate::error::DbError;
use crate::live::dependencies::{Affected, ChangeSet, Dependencies};

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
    /// Its first run, on the JS thread (js_thread/runs.rs): not counted against the readers' limit.
    RunningInline,
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

    /// A query whose first run is about to run on the JS thread (js_thread/runs.rs): registered first,
    /// so a change committed while it runs makes it run once more, as for a run on a reader.
    /// `finish(…, false)` ends that run, or `run_on_readers` sends it to the readers instead.
    pub fn start_inline(&mut self, id: u32, sql: String, params: Vec<u8>) {
        let query = Query { sql, params, reads: None, state: State::RunningInline, dirty: false, delivered: None };
        self.queries.insert(id, query);
    }

    /// The first run on the JS thread overran its budget (nothing was delivered): it runs on a
    /// reader instead.
    pub fn run_on_readers(&mut self, id: u32) {
        let Some(q) = self.queries.get_mut(&id) else { return };
        q.state = State::Queued;
        q.dirty = false;
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
                    State::Running | State::RunningInline => q.dirty = true,
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

    /// A run ended, on a reader (`on_reader`) or on the JS thread. Returns what to deliver to
    /// JS, if anything: the caller delivers it before releasing the registry lock (or, on the
    /// JS thread, before any later delivery can reach JS), so a query's deliveries stay in
    /// order.
    pub fn finish(
        &mut self,
        id: u32,
        result: Result<EncodedRows, DbError>,
        reads: Option<Arc<Dependencies>>,
        on_reader: bool,
    ) -> Option<Outcome> {
        if on_reader {
            self.in_flight -= 1;
        }
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
                queued: None,
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
    hasher.update(rows.names.as_bytes());
    (hasher.digest(), rows.row_count())
}

#[cfg(test)]
mod tests {
    use crossbeam_channel::Receiver;

    use super::*;
    use crate::live::dependencies::{name_id, table_key};

    fn registry(limit: usize) -> (Registry, Receiver<Job>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        (Registry::new(tx, limit), rx)
    }

    /// The ids of the runs sent to the readers since the last look.
    fn sent(rx: &Receiver<Job>) -> Vec<u32> {
        rx.try_iter()
            .map(|job| {
                assert!(matches!(job.request, Request::Live));
                job.id
            })
            .collect()
    }

    /// A result: `rows` in the header, `content` standing for its cells.
    fn result(rows: u32, content: &str) -> Result<EncodedRows, DbError> {
        let mut buffer = rows.to_le_bytes().to_vec();
        buffer.extend_from_slice(&[0; 20]);
        buffer.extend_from_slice(content.as_bytes());
        Ok(EncodedRows { buffer, names: String::new() })
    }

    /// What a query reads: (table, column) in schema main.
    fn reads(columns: &[(&str, &str)]) -> Option<Arc<Dependencies>> {
        Some(Arc::new(Dependencies::reading(columns)))
    }

    fn rows_of(table: &str) -> ChangeSet {
        let mut set = ChangeSet::default();
        set.add_rows(name_id(&table_key("main", table)));
        set
    }

    fn columns_of(table: &str, columns: &[&str]) -> ChangeSet {
        let mut set = ChangeSet::default();
        set.add_columns(name_id(&table_key("main", table)), columns.iter().map(|c| name_id(c)));
        set
    }

    fn delivered(outcome: Option<Outcome>) -> Option<&'static str> {
        match outcome {
            None => None,
            Some(Outcome::LiveRows(_)) => Some("rows"),
            Some(Outcome::LiveError(_)) => Some("error"),
            Some(_) => Some("other"),
        }
    }

    /// Query `id` on t(a), started and its first run delivered.
    fn started(registry: &mut Registry, rx: &Receiver<Job>, id: u32) {
        registry.start(id, format!("SELECT a FROM t -- {id}"), vec![0]);
        assert_eq!(sent(rx), vec![id]);
        assert_eq!(delivered(registry.finish(id, result(1, "first"), reads(&[("t", "a")]), true)), Some("rows"));
    }

    #[test]
    fn a_query_runs_when_it_starts_and_its_first_result_is_delivered() {
        let (mut registry, rx) = registry(4);
        registry.start(7, "SELECT a FROM t".into(), vec![1, 0, 0, 0, 0]);
        let job = rx.try_recv().expect("a run was sent");
        assert_eq!((job.id, job.sql.as_str(), job.params.as_slice()), (7, "SELECT a FROM t", &[1, 0, 0, 0, 0][..]));
        assert!(matches!(job.request, Request::Live) && !job.cancellable && !job.in_transaction);
        assert_eq!(registry.len(), 1);
        assert_eq!(delivered(registry.finish(7, result(0, ""), reads(&[("t", "a")]), true)), Some("rows"));
        assert_eq!(sent(&rx), Vec::<u32>::new(), "nothing changed: no second run");
        assert_eq!(registry.counters.requeries, 0, "a first run is no requery");
    }

    #[test]
    fn a_committed_change_to_what_it_reads_runs_it_again() {
        let (mut registry, rx) = registry(4);
        started(&mut registry, &rx, 1);
        registry.publish(&rows_of("t"));
        assert_eq!(sent(&rx), vec![1]);
        assert_eq!(registry.counters.requeries, 1);
        assert_eq!(delivered(registry.finish(1, result(2, "second"), None, true)), Some("rows"));
        registry.publish(&columns_of("t", &["b", "a"]));
        assert_eq!(sent(&rx), vec![1], "a column it reads changed");
    }

    #[test]
    fn changes_to_what_it_does_not_read_do_not_run_it() {
        let (mut registry, rx) = registry(4);
        started(&mut registry, &rx, 1);
        registry.publish(&rows_of("u"));
        assert_eq!(sent(&rx), Vec::<u32>::new(), "another table");
        registry.publish(&columns_of("t", &["b"]));
        assert_eq!(sent(&rx), Vec::<u32>::new(), "another column of its table");
        assert_eq!(registry.counters.skipped_by_columns, 1);
        assert_eq!(registry.counters.requeries, 0);
        let mut schema = ChangeSet::default();
        schema.add_schema("aux");
        registry.publish(&schema);
        assert_eq!(sent(&rx), Vec::<u32>::new(), "another schema's definitions");
        schema.add_schema("main");
        registry.publish(&schema);
        assert_eq!(sent(&rx), vec![1], "its schema's definitions changed");
    }

    #[test]
    fn a_change_during_a_run_makes_exactly_one_more_run() {
        let (mut registry, rx) = registry(4);
        started(&mut registry, &rx, 1);
        registry.publish(&rows_of("t"));
        assert_eq!(sent(&rx), vec![1]);
        registry.publish(&rows_of("t"));
        registry.publish(&columns_of("t", &["a"]));
        assert_eq!(sent(&rx), Vec::<u32>::new(), "one run in flight at most");
        assert_eq!(delivered(registry.finish(1, result(1, "stale"), None, true)), Some("rows"));
        assert_eq!(sent(&rx), vec![1], "the run that sees the last commit");
        assert_eq!(delivered(registry.finish(1, result(1, "latest"), None, true)), Some("rows"));
        assert_eq!(sent(&rx), Vec::<u32>::new(), "and no more");
        assert_eq!(registry.counters.requeries, 2);
    }

    #[test]
    fn a_change_during_the_first_run_runs_it_again() {
        // Before its first run ends, what it reads is unknown: any change may concern it.
        let (mut registry, rx) = registry(4);
        registry.start(1, "SELECT a FROM t".into(), vec![0]);
        assert_eq!(sent(&rx), vec![1]);
        registry.publish(&rows_of("anything"));
        assert_eq!(delivered(registry.finish(1, result(1, "first"), reads(&[("t", "a")]), true)), Some("rows"));
        assert_eq!(sent(&rx), vec![1]);
    }

    #[test]
    fn a_queued_query_is_queued_once() {
        let (mut registry, rx) = registry(1);
        started(&mut registry, &rx, 1);
        registry.start(2, "SELECT b FROM u".into(), vec![0]);
        assert_eq!(sent(&rx), vec![2]);
        registry.finish(2, result(0, ""), reads(&[("u", "b")]), true);
        registry.publish(&rows_of("u"));
        assert_eq!(sent(&rx), vec![2]);
        registry.publish(&rows_of("t")); // 1 queues behind 2
        registry.publish(&rows_of("t"));
        assert_eq!(sent(&rx), Vec::<u32>::new(), "the limit is one run in flight");
        registry.finish(2, result(0, ""), None, true);
        assert_eq!(sent(&rx), vec![1]);
        registry.finish(1, result(0, ""), None, true);
        assert_eq!(sent(&rx), Vec::<u32>::new(), "two changes while queued: one run");
        assert_eq!(registry.counters.requeries, 2, "and one requery counted");
    }

    #[test]
    fn runs_wait_for_a_free_reader_and_queue_in_subscription_order() {
        let (mut registry, rx) = registry(2);
        for id in [3, 1, 2] {
            started(&mut registry, &rx, id);
        }
        registry.publish(&rows_of("t"));
        assert_eq!(sent(&rx), vec![1, 2], "two readers");
        registry.finish(2, result(1, "first"), None, true);
        assert_eq!(sent(&rx), vec![3]);
        registry.finish(1, result(1, "first"), None, true);
        registry.finish(3, result(1, "first"), None, true);
        assert_eq!(sent(&rx), Vec::<u32>::new());
    }

    #[test]
    fn an_unchanged_result_is_not_delivered() {
        let (mut registry, rx) = registry(4);
        started(&mut registry, &rx, 1);
        registry.publish(&rows_of("t"));
        sent(&rx);
        assert_eq!(delivered(registry.finish(1, result(1, "first"), None, true)), None);
        assert_eq!(registry.counters.unchanged_suppressed, 1);
        registry.publish(&rows_of("t"));
        sent(&rx);
        assert_eq!(delivered(registry.finish(1, result(1, "other"), None, true)), Some("rows"), "other text");
        registry.publish(&rows_of("t"));
        sent(&rx);
        assert_eq!(delivered(registry.finish(1, result(2, "other"), None, true)), Some("rows"), "other row count");
    }

    #[test]
    fn after_an_error_the_next_result_is_delivered_even_if_unchanged() {
        let (mut registry, rx) = registry(4);
        started(&mut registry, &rx, 1);
        registry.publish(&rows_of("t"));
        sent(&rx);
        let error = Err(DbError::new("SQLITE_ERROR", "no such table: t"));
        assert_eq!(delivered(registry.finish(1, error, None, true)), Some("error"));
        registry.publish(&rows_of("t"));
        sent(&rx);
        assert_eq!(delivered(registry.finish(1, result(1, "first"), None, true)), Some("rows"));
    }

    #[test]
    fn a_stopped_query_delivers_nothing_and_runs_no_more() {
        let (mut registry, rx) = registry(1);
        started(&mut registry, &rx, 1);
        registry.publish(&rows_of("t"));
        assert_eq!(sent(&rx), vec![1]);
        registry.stop(1);
        assert!(registry.is_empty());
        registry.publish(&rows_of("t"));
        assert_eq!(delivered(registry.finish(1, result(1, "new"), None, true)), None, "its run in flight is dropped");
        assert_eq!(sent(&rx), Vec::<u32>::new());

        // Stopped while queued: its run is never sent, and the reader it would take is free.
        started(&mut registry, &rx, 2);
        registry.start(3, "SELECT b FROM u".into(), vec![0]);
        assert_eq!(sent(&rx), vec![3]);
        registry.finish(3, result(0, ""), reads(&[("u", "b")]), true);
        registry.publish(&rows_of("u"));
        assert_eq!(sent(&rx), vec![3]);
        registry.publish(&rows_of("t")); // 2 queues behind 3's run
        registry.stop(2);
        registry.finish(3, result(0, ""), None, true);
        assert_eq!(sent(&rx), Vec::<u32>::new());
        registry.publish(&rows_of("u"));
        assert_eq!(sent(&rx), vec![3], "the reader is free for the others");
    }

    #[test]
    fn a_query_whose_reads_overflowed_depends_on_everything() {
        let (mut registry, rx) = registry(4);
        registry.start(1, "SELECT …".into(), vec![0]);
        sent(&rx);
        let all = Some(Arc::new(Dependencies::from_events(&[], true)));
        registry.finish(1, result(1, "first"), all.clone(), true);
        assert_eq!(registry.counters.fallback_all, 1);
        registry.publish(&columns_of("anything", &["at_all"]));
        assert_eq!(sent(&rx), vec![1]);
        registry.finish(1, result(1, "first"), all, true);
        assert_eq!(registry.counters.fallback_all, 1, "counted once per query");
        registry.publish(&ChangeSet::default());
        assert_eq!(sent(&rx), vec![1], "even an empty change set");
    }

    #[test]
    fn everything_changed_runs_every_query() {
        let (mut registry, rx) = registry(4);
        started(&mut registry, &rx, 1);
        started(&mut registry, &rx, 2);
        registry.publish(&ChangeSet::everything());
        assert_eq!(sent(&rx), vec![1, 2]);
    }

    #[test]
    fn a_closed_registry_sends_nothing() {
        let (mut registry, rx) = registry(4);
        started(&mut registry, &rx, 1);
        registry.close();
        assert!(registry.is_empty());
        registry.start(2, "SELECT a FROM t".into(), vec![0]);
        registry.publish(&rows_of("t"));
        assert_eq!(sent(&rx), Vec::<u32>::new());
    }
}
