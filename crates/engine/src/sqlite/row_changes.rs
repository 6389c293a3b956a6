//! The rows the writer's connection inserts, updates and deletes, for resqlite/sqlite3's
//! `'change'` event (node-sqlite3's update hook). SQLite's update hook goes on the writer's
//! connection only while JS listens (`listen`), checked before each piece of writer work on
//! either thread that runs it (the writer thread, the JS thread's inline writes): otherwise it
//! costs nothing. SQLite calls the hook as each row changes, before the commit, so the rows of a
//! write that then rolls back are recorded too, as node-sqlite3 reports them. JS takes what was
//! recorded after each batch of completions and after its own inline writes.
//!
//! Bounded: at most MAX_PENDING rows wait between two takes (13 bytes each); the rows past it
//! are counted, not kept, and JS reports the count.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use sqlite3mc_sys as ffi;

use super::connection::Connection;

/// Rows kept between two takes, at most (~1.3 MB).
pub const MAX_PENDING: usize = 100_000;

/// What a row change was, as JS names them (src/sqlite3.ts `CHANGE_KINDS`).
pub const INSERT: u8 = 0;
pub const UPDATE: u8 = 1;
pub const DELETE: u8 = 2;

/// Row changes recorded since the last take.
#[derive(Default)]
pub struct Pending {
    /// The tables changed, as (schema, table).
    pub tables: Vec<(String, String)>,
    /// Each row's change: INSERT, UPDATE or DELETE.
    pub kinds: Vec<u8>,
    /// Each row's table, an index into `tables`.
    pub table_of: Vec<u32>,
    pub rowids: Vec<i64>,
    /// Rows changed past MAX_PENDING: not kept.
    pub dropped: u64,
}

impl Pending {
    fn record(&mut self, op: c_int, schema: &[u8], table: &[u8]) -> Option<(u8, u32)> {
        if self.kinds.len() >= MAX_PENDING {
            self.dropped += 1;
            return None;
        }
        let kind = match op {
            ffi::SQLITE_INSERT => INSERT,
            ffi::SQLITE_UPDATE => UPDATE,
            _ => DELETE,
        };
        let same = |(s, t): &(String, String)| s.as_bytes() == schema && t.as_bytes() == table;
        // Most often the table of the row before: looked at first.
        let at = match self.table_of.last() {
            Some(&last) if same(&self.tables[last as usize]) => last,
            _ => match self.tables.iter().position(same) {
                Some(at) => at as u32,
                None => {
                    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                    self.tables.push((text(schema), text(table)));
                    (self.tables.len() - 1) as u32
                }
            },
        };
        Some((kind, at))
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty() && self.dropped == 0
    }
}

/// The update hook's switch and what it recorded: one per database, in `Shared`.
#[derive(Default)]
pub struct RowChanges {
    /// JS listens.
    wanted: AtomicBool,
    /// The handle of the connection the hook was installed on; 0: none.
    installed: AtomicUsize,
    pending: Mutex<Pending>,
}

impl RowChanges {
    /// JS starts (or stops) listening; the hook follows before the next writer work (`sync`).
    /// Rows recorded and not taken are forgotten when it stops.
    pub fn listen(&self, on: bool) {
        self.wanted.store(on, Ordering::SeqCst);
        if !on {
            *self.pending.lock().unwrap() = Pending::default();
        }
    }

    /// Before writer work on `conn` (under the writer's lock): the hook on while JS listens,
    /// off otherwise. Installed again each time while on (a rekey reopens the connection, and a
    /// new handle may have the old one's address); off, one atomic load.
    pub fn sync(&self, conn: &Connection) {
        let on = self.wanted.load(Ordering::SeqCst);
        if !on && self.installed.load(Ordering::Relaxed) == 0 {
            return;
        }
        let ctx = self as *const RowChanges as *mut c_void;
        // SAFETY: `self` lives in `Shared`, which outlives the writer's connection; the hook runs
        // on the thread stepping the connection, which holds the writer's lock.
        unsafe { ffi::sqlite3_update_hook(conn.raw(), if on { Some(on_update) } else { None }, ctx) };
        self.installed.store(if on { conn.raw() as usize } else { 0 }, Ordering::Relaxed);
        if !on {
            *self.pending.lock().unwrap() = Pending::default();
        }
    }

    /// What was recorded since the last take, if anything.
    pub fn take(&self) -> Option<Pending> {
        let mut pending = self.pending.lock().unwrap();
        (!pending.is_empty()).then(|| std::mem::take(&mut *pending))
    }
}

/// SAFETY: `ctx` is the database's `RowChanges` (see `sync`); the names are SQLite's C strings.
unsafe extern "C" fn on_update(ctx: *mut c_void, op: c_int, schema: *const c_char, table: *const c_char, rowid: i64) {
    let changes = &*(ctx as *const RowChanges);
    let Ok(mut pending) = changes.pending.lock() else { return };
    let (schema, table) = (CStr::from_ptr(schema).to_bytes(), CStr::from_ptr(table).to_bytes());
    if let Some((kind, at)) = pending.record(op, schema, table) {
        pending.kinds.push(kind);
        pending.table_of.push(at);
        pending.rowids.push(rowid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqlite::setup::Role;
    use crate::testing::{Opened, TempDb};

    fn rows(p: &Pending) -> Vec<(u8, String, i64)> {
        (0..p.kinds.len()).map(|i| (p.kinds[i], p.tables[p.table_of[i] as usize].1.clone(), p.rowids[i])).collect()
    }

    #[test]
    fn records_each_row_while_listening_and_nothing_after() {
        let file = TempDb::new("row-changes");
        let db = Opened::open(file.as_str(), Role::Writer);
        let changes = RowChanges::default();
        db.conn.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)").unwrap();
        changes.sync(&db.conn);
        db.conn.exec("INSERT INTO t VALUES (1, 'a')").unwrap();
        assert!(changes.take().is_none(), "not listening: the hook is not installed");

        changes.listen(true);
        changes.sync(&db.conn);
        db.conn.exec("INSERT INTO t VALUES (2, 'b'), (3, 'c'); UPDATE t SET v = 'x' WHERE id = 2").unwrap();
        db.conn
            .exec("CREATE TABLE u (id INTEGER PRIMARY KEY); INSERT INTO u VALUES (7); DELETE FROM t WHERE id = 1")
            .unwrap();
        let taken = changes.take().unwrap();
        assert_eq!(
            rows(&taken),
            [
                (INSERT, "t".into(), 2),
                (INSERT, "t".into(), 3),
                (UPDATE, "t".into(), 2),
                (INSERT, "u".into(), 7),
                (DELETE, "t".into(), 1)
            ]
        );
        assert_eq!(taken.tables, [("main".to_string(), "t".to_string()), ("main".into(), "u".into())]);
        assert!(changes.take().is_none());

        changes.listen(false);
        changes.sync(&db.conn);
        db.conn.exec("INSERT INTO t VALUES (9, 'z')").unwrap();
        assert!(changes.take().is_none(), "the hook is off again");
    }

    #[test]
    fn keeps_at_most_max_pending_rows_and_counts_the_rest() {
        let file = TempDb::new("row-changes");
        let db = Opened::open(file.as_str(), Role::Writer);
        let changes = RowChanges::default();
        changes.listen(true);
        changes.sync(&db.conn);
        db.conn.exec("CREATE TABLE t (id INTEGER PRIMARY KEY)").unwrap();
        let extra = 5;
        db.conn
            .exec(&format!(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {}) INSERT INTO t SELECT i FROM n",
                MAX_PENDING + extra
            ))
            .unwrap();
        let taken = changes.take().unwrap();
        assert_eq!(taken.kinds.len(), MAX_PENDING);
        assert_eq!(taken.dropped, extra as u64);
        assert_eq!(taken.rowids.last(), Some(&(MAX_PENDING as i64)));
    }
}
