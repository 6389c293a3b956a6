//! The writer's record of what its writes changed. The pre-update hook reports every row
//! change (triggers and foreign-key cascades included); the commit hook moves the open
//! transaction's changes to the committed list; the rollback hook and `ROLLBACK TO` discard
//! what they undid. After each job the writer publishes what was committed.

use std::collections::HashMap;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

use sqlite3mc_sys as ffi;

use super::capture::{is_schema_change, is_write, AuthEvent};
use super::dependencies::{table_key, ChangeSet, TableKey};
use crate::connection::Connection;

/// Columns of one table changed by UPDATEs: a bit per column index; tables wider than this
/// count as every column.
const MAX_COLUMN_BITS: usize = 128;

enum Changed {
    Rows,
    Columns(u128),
}

enum Change {
    Table { key: TableKey, changed: Changed },
    /// A definition changed in this schema (lowercased).
    Schema(Box<str>),
    /// Unknown changes: tracking began inside the transaction.
    Everything,
}

#[derive(Default)]
pub struct ChangeTracker {
    /// Changes of the open transaction (or the running autocommit statement), in order.
    pending: Vec<Change>,
    /// Open savepoints: name and the length of `pending` when each began.
    savepoints: Vec<(Box<str>, usize)>,
    /// Committed, not yet published.
    committed: Vec<Change>,
    /// The table of `pending`'s last entry, by SQLite's name pointers: consecutive rows of one
    /// statement merge into one entry without building its key again.
    last: Option<(*const c_char, *const c_char)>,
    /// Column names per table, to name UPDATE's changed column indexes; cleared when a
    /// schema changes.
    columns: HashMap<TableKey, Vec<Box<str>>>,
    /// Whether a table is virtual (its writes never reach the pre-update hook).
    virtual_tables: HashMap<TableKey, bool>,
    /// Tracking began inside the open transaction: its commit changes everything.
    incomplete: bool,
}

/// What running a statement does beyond its row changes, learned when it was prepared.
#[derive(Default)]
pub struct WriteEffects {
    savepoint: Option<(Savepoint, Box<str>)>,
    schemas: Vec<Box<str>>,
    /// Virtual tables it writes: the pre-update hook never sees those writes.
    virtual_writes: Vec<TableKey>,
}

#[derive(Clone, Copy)]
enum Savepoint {
    Begin,
    Release,
    RollbackTo,
}

impl ChangeTracker {
    /// Forgets the open transaction's changes (tracking turned on or off).
    pub fn reset(&mut self) {
        self.rolled_back();
    }

    pub fn mark_incomplete(&mut self) {
        self.incomplete = true;
    }

    fn savepoint(&mut self, op: Savepoint, name: &str) {
        self.last = None;
        let found = self.savepoints.iter().rposition(|(n, _)| n.eq_ignore_ascii_case(name));
        match (op, found) {
            (Savepoint::Begin, _) => self.savepoints.push((name.into(), self.pending.len())),
            (Savepoint::Release, Some(i)) => self.savepoints.truncate(i),
            (Savepoint::RollbackTo, Some(i)) => {
                self.pending.truncate(self.savepoints[i].1);
                self.savepoints.truncate(i + 1);
            }
            (_, None) => {}
        }
    }

    fn committed_now(&mut self) {
        self.last = None;
        self.savepoints.clear();
        if std::mem::take(&mut self.incomplete) {
            self.pending.push(Change::Everything);
        }
        self.committed.append(&mut self.pending);
    }

    fn rolled_back(&mut self) {
        self.last = None;
        self.savepoints.clear();
        self.pending.clear();
        self.incomplete = false;
    }

    /// After a statement ran: its savepoint operation (if it succeeded), schema changes and
    /// virtual-table writes. Outside a transaction (`autocommit`) the statement has committed
    /// already: those count as committed (even when it failed: re-running is safe, missing
    /// a change is not).
    pub fn apply(&mut self, effects: &WriteEffects, succeeded: bool, autocommit: bool) {
        if succeeded {
            if let Some((op, name)) = &effects.savepoint {
                self.savepoint(*op, name);
            }
        }
        let mut changes = Vec::new();
        for schema in &effects.schemas {
            self.columns.clear();
            self.virtual_tables.clear();
            changes.push(Change::Schema(schema.clone()));
        }
        for key in &effects.virtual_writes {
            changes.push(Change::Table { key: key.clone(), changed: Changed::Rows });
        }
        if changes.is_empty() {
            return; // the common case: keep merging the next rows into the last entry
        }
        self.last = None;
        if autocommit {
            self.committed.extend(changes);
        } else {
            self.pending.extend(changes);
        }
    }

    /// After a job: anything still pending outside a transaction was never committed. Returns
    /// the committed changes, if any.
    fn take_committed(&mut self, autocommit: bool) -> Vec<Change> {
        self.last = None;
        if autocommit {
            self.pending.clear();
            self.savepoints.clear();
            self.incomplete = false;
        }
        std::mem::take(&mut self.committed)
    }
}

/// The tracker's hooks, and the queries it needs for them, on the writer's connection.
pub struct Tracking<'a> {
    pub conn: &'a Connection,
    pub tracker: &'a std::cell::RefCell<ChangeTracker>,
}

impl Tracking<'_> {
    /// Installs (or removes) the pre-update, commit and rollback hooks.
    ///
    /// SAFETY: `tracker` must outlive the connection's hooks (it lives in the connection).
    pub unsafe fn install(&self, on: bool) {
        let ctx = self.tracker as *const _ as *mut c_void;
        ffi::sqlite3_preupdate_hook(self.conn.raw(), if on { Some(on_preupdate) } else { None }, ctx);
        ffi::sqlite3_commit_hook(self.conn.raw(), if on { Some(on_commit) } else { None }, ctx);
        ffi::sqlite3_rollback_hook(self.conn.raw(), if on { Some(on_rollback) } else { None }, ctx);
    }

    /// The effects of a statement from its authorizer events.
    pub fn effects(&self, events: &[AuthEvent]) -> WriteEffects {
        let mut effects = WriteEffects::default();
        for e in events {
            if e.action == ffi::SQLITE_SAVEPOINT {
                let op = match &*e.arg1 {
                    "BEGIN" => Savepoint::Begin,
                    "RELEASE" => Savepoint::Release,
                    _ => Savepoint::RollbackTo,
                };
                effects.savepoint = Some((op, e.arg2.clone()));
            } else if is_schema_change(e.action) {
                // ALTER TABLE names its schema in arg1; the others in the db argument.
                let schema = if e.action == ffi::SQLITE_ALTER_TABLE { &e.arg1 } else { &e.db };
                let schema: Box<str> = if schema.is_empty() { "main".into() } else { schema.to_ascii_lowercase().into() };
                if !effects.schemas.contains(&schema) {
                    effects.schemas.push(schema);
                }
            } else if is_write(e.action) {
                let key = table_key(&e.db, &e.arg1);
                if !effects.virtual_writes.contains(&key) && self.is_virtual(&key, &e.db, &e.arg1) {
                    effects.virtual_writes.push(key);
                }
            }
        }
        effects
    }

    fn is_virtual(&self, key: &TableKey, db: &str, table: &str) -> bool {
        if let Some(&known) = self.tracker.borrow().virtual_tables.get(key) {
            return known;
        }
        let db = if db.is_empty() { "main" } else { db };
        let sql = format!(
            "SELECT sql FROM {}.sqlite_schema WHERE type = 'table' AND name = {}",
            quote_identifier(db),
            quote_literal(table)
        );
        let is_virtual = self
            .conn
            .query_texts(&sql)
            .unwrap_or_default()
            .first()
            .is_some_and(|s| s.len() >= 14 && s[..14].eq_ignore_ascii_case("CREATE VIRTUAL"));
        self.tracker.borrow_mut().virtual_tables.insert(key.clone(), is_virtual);
        is_virtual
    }

    /// After a job: the committed changes as a ChangeSet (None when nothing was committed).
    pub fn take_committed(&self, autocommit: bool) -> Option<ChangeSet> {
        let changes = self.tracker.borrow_mut().take_committed(autocommit);
        if changes.is_empty() {
            return None;
        }
        let mut set = ChangeSet::default();
        for change in changes {
            match change {
                Change::Schema(schema) => set.add_schema(&schema),
                Change::Everything => set.everything = true,
                Change::Table { key, changed: Changed::Rows } => set.add_rows(&key),
                Change::Table { key, changed: Changed::Columns(bits) } => {
                    if !self.add_column_names(&mut set, &key, bits) {
                        set.add_rows(&key);
                    }
                }
            }
        }
        Some(set)
    }

    /// Adds the set bits' columns to `set`; false when they cannot all be named.
    fn add_column_names(&self, set: &mut ChangeSet, key: &TableKey, bits: u128) -> bool {
        if !self.tracker.borrow().columns.contains_key(key) {
            let mut parts = key.split('\u{1}');
            let (Some(db), Some(table)) = (parts.next(), parts.next()) else { return false };
            let sql = format!("SELECT name FROM pragma_table_xinfo({}, {})", quote_literal(table), quote_literal(db));
            let names = self.conn.query_texts(&sql).unwrap_or_default();
            let names = names.into_iter().map(|n| n.to_ascii_lowercase().into()).collect();
            self.tracker.borrow_mut().columns.insert(key.clone(), names);
        }
        let tracker = self.tracker.borrow();
        let names = &tracker.columns[key];
        let changed = (0..MAX_COLUMN_BITS).filter(|i| bits & (1u128 << i) != 0);
        if changed.clone().any(|i| i >= names.len()) {
            return false;
        }
        set.add_columns(key, changed.map(|i| &*names[i]));
        true
    }
}

fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// SAFETY (all hooks): `ctx` is the connection's `RefCell<ChangeTracker>`; SQLite calls the
/// hooks on the writer's thread, inside a statement, when no Rust borrow of it is held.
unsafe extern "C" fn on_preupdate(
    ctx: *mut c_void,
    db: *mut ffi::sqlite3,
    op: c_int,
    db_name: *const c_char,
    table: *const c_char,
    old_rowid: i64,
    new_rowid: i64,
) {
    let Ok(mut tracker) = (*(ctx as *const std::cell::RefCell<ChangeTracker>)).try_borrow_mut() else { return };
    let changed = if op == ffi::SQLITE_INSERT || op == ffi::SQLITE_DELETE || old_rowid != new_rowid {
        Changed::Rows
    } else {
        match changed_columns(db) {
            Some(0) => return, // an UPDATE that set every column to the value it had
            Some(bits) => Changed::Columns(bits),
            None => Changed::Rows,
        }
    };
    if tracker.last == Some((db_name, table)) {
        if let Some(Change::Table { changed: last, .. }) = tracker.pending.last_mut() {
            *last = match (&*last, changed) {
                (Changed::Columns(a), Changed::Columns(b)) => Changed::Columns(a | b),
                _ => Changed::Rows,
            };
            return;
        }
    }
    let name = |p: *const c_char| CStr::from_ptr(p).to_string_lossy();
    let key = table_key(&name(db_name), &name(table));
    tracker.pending.push(Change::Table { key, changed });
    tracker.last = Some((db_name, table));
}

/// The UPDATE's columns whose value differs, as bits; None when a column is beyond the bits.
unsafe fn changed_columns(db: *mut ffi::sqlite3) -> Option<u128> {
    let count = ffi::sqlite3_preupdate_count(db).max(0) as usize;
    let mut bits = 0u128;
    for i in 0..count {
        let (mut old, mut new) = (ptr::null_mut(), ptr::null_mut());
        if ffi::sqlite3_preupdate_old(db, i as c_int, &mut old) != ffi::SQLITE_OK
            || ffi::sqlite3_preupdate_new(db, i as c_int, &mut new) != ffi::SQLITE_OK
            || !same_value(old, new)
        {
            if i >= MAX_COLUMN_BITS {
                return None;
            }
            bits |= 1 << i;
        }
    }
    Some(bits)
}

unsafe fn same_value(a: *mut ffi::sqlite3_value, b: *mut ffi::sqlite3_value) -> bool {
    let t = ffi::sqlite3_value_type(a);
    if t != ffi::sqlite3_value_type(b) {
        return false;
    }
    match t {
        ffi::SQLITE_NULL => true,
        ffi::SQLITE_INTEGER => ffi::sqlite3_value_int64(a) == ffi::sqlite3_value_int64(b),
        ffi::SQLITE_FLOAT => ffi::sqlite3_value_double(a).to_bits() == ffi::sqlite3_value_double(b).to_bits(),
        _ => {
            let (pa, pb) = if t == ffi::SQLITE_TEXT {
                (ffi::sqlite3_value_text(a) as *const u8, ffi::sqlite3_value_text(b) as *const u8)
            } else {
                (ffi::sqlite3_value_blob(a) as *const u8, ffi::sqlite3_value_blob(b) as *const u8)
            };
            let (la, lb) = (ffi::sqlite3_value_bytes(a), ffi::sqlite3_value_bytes(b));
            if la != lb {
                return false;
            }
            if la == 0 {
                return true;
            }
            if pa.is_null() || pb.is_null() {
                return false;
            }
            std::slice::from_raw_parts(pa, la as usize) == std::slice::from_raw_parts(pb, lb as usize)
        }
    }
}

unsafe extern "C" fn on_commit(ctx: *mut c_void) -> c_int {
    if let Ok(mut tracker) = (*(ctx as *const std::cell::RefCell<ChangeTracker>)).try_borrow_mut() {
        tracker.committed_now();
    }
    0 // let the commit proceed
}

unsafe extern "C" fn on_rollback(ctx: *mut c_void) {
    if let Ok(mut tracker) = (*(ctx as *const std::cell::RefCell<ChangeTracker>)).try_borrow_mut() {
        tracker.rolled_back();
    }
}
