//! The writer's record of what its writes changed. The pre-update hook reports every row
//! change (triggers and foreign-key cascades included); the commit hook moves the open
//! transaction's changes to the committed list; the rollback hook and `ROLLBACK TO` discard
//! what they undid. After each job the writer publishes what was committed.
//!
//! Which columns an UPDATE changed is learned by comparing the row's old and new values, in
//! the columns the statement's SET lists name only (the authorizer reports them when it is
//! prepared, triggers' and foreign-key actions' included): comparing every column of a wide
//! table cost more than the write itself (experiments/027).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;
use std::rc::Rc;

use sqlite3mc_sys as ffi;

use super::capture::{is_schema_change, is_write, AuthEvent, Capture};
use super::dependencies::{name_id, table_key, ChangeSet, NameId, TableKey};
use crate::sqlite::connection::Connection;

/// Columns of one table changed by UPDATEs: a bit per column index; tables wider than this
/// count as every column.
const MAX_COLUMN_BITS: usize = 128;

enum Changed {
    Rows,
    Columns(u128),
}

/// A changed table: looked up before its statement ran, or known by name only (a write the
/// statement's authorizer events did not announce); then its columns are looked up when the
/// change is published.
enum TableRef {
    Known(Rc<TableColumns>),
    Named(TableKey),
}

enum Change {
    Table {
        table: TableRef,
        changed: Changed,
    },
    /// A definition changed in this schema (lowercased).
    Schema(Box<str>),
    /// Unknown changes: tracking began inside the transaction.
    Everything,
}

/// A table's columns by index (pragma table_xinfo's order, which is the pre-update hook's).
pub struct TableColumns {
    /// The table key's id.
    id: NameId,
    /// Lowercased names.
    names: Vec<Box<str>>,
    ids: Vec<NameId>,
    /// It has generated columns: they change with the columns they are computed from, which
    /// no SET list names.
    generated: bool,
}

/// A table the running statement writes, named as the pre-update hook names it.
pub struct Target {
    db: Box<[u8]>,
    table: Box<[u8]>,
    columns: Rc<TableColumns>,
    /// The only columns an UPDATE of it can change (indexes); None: any column may.
    set: Option<Box<[usize]>>,
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
    /// Tables' columns, looked up when first needed; cleared when a schema changes.
    tables: HashMap<TableKey, Rc<TableColumns>>,
    /// Whether a table is virtual (its writes never reach the pre-update hook).
    virtual_tables: HashMap<TableKey, bool>,
    /// Tracking began inside the open transaction: its commit changes everything.
    incomplete: bool,
    /// The change hooks are installed.
    on: bool,
    /// Counts the times a schema may have changed. A cached statement prepared before the
    /// latest is prepared again (sqlite/statement_cache.rs): its SET lists may be out of date.
    generation: u64,
    /// `PRAGMA schema_version` when last read.
    schema_version: Option<i64>,
    /// The tables the running statement writes (while tracking).
    running: Option<Rc<[Target]>>,
}

/// What running a statement does beyond its row changes, learned when it was prepared.
#[derive(Default)]
pub struct WriteEffects {
    savepoint: Option<(Savepoint, Box<str>)>,
    schemas: Vec<Box<str>>,
    /// Virtual tables it writes: the pre-update hook never sees those writes.
    virtual_writes: Vec<TableKey>,
    /// The tables it writes (its triggers' and foreign-key actions' too) and the columns its
    /// UPDATEs set there.
    writes: Vec<Written>,
    /// The tracker's generation when it was prepared.
    pub generation: u64,
    /// `writes` looked up, on the first run while tracking.
    targets: RefCell<Option<Rc<[Target]>>>,
}

/// A table a statement writes: schema and table as SQLite spells them, and the (lowercased)
/// columns its UPDATEs set.
struct Written {
    db: Box<str>,
    table: Box<str>,
    set: Vec<Box<str>>,
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

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Forgets what it knows of tables; statements prepared before are prepared again.
    fn schema_changed(&mut self) {
        self.tables.clear();
        self.virtual_tables.clear();
        self.generation += 1;
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
            self.schema_changed();
            changes.push(Change::Schema(schema.clone()));
        }
        for key in &effects.virtual_writes {
            changes.push(Change::Table { table: TableRef::Named(key.clone()), changed: Changed::Rows });
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

/// A connection's state that SQLite's callbacks reach (held by `live::hooks::Hooks`, boxed,
/// so its address stays put): what the authorizer captures (`capture::authorize` gets the
/// capture's address), and the writer's change tracker (the change hooks get this struct's:
/// they also read the capture, to tell whether SQLite compiled statements while one ran).
pub struct HookState {
    pub capture: RefCell<Capture>,
    pub tracker: RefCell<ChangeTracker>,
}

/// The tracker's hooks, and the queries it needs for them, on the writer's connection.
pub struct Tracking<'a> {
    pub conn: &'a Connection,
    pub state: &'a HookState,
}

impl Tracking<'_> {
    /// Installs (or removes) the pre-update, commit and rollback hooks.
    ///
    /// SAFETY: `state` must outlive the connection's hooks (`Hooks` outlives the connection).
    pub unsafe fn install(&self, on: bool) {
        let ctx = self.state as *const HookState as *mut c_void;
        ffi::sqlite3_preupdate_hook(self.conn.raw(), if on { Some(on_preupdate) } else { None }, ctx);
        ffi::sqlite3_commit_hook(self.conn.raw(), if on { Some(on_commit) } else { None }, ctx);
        ffi::sqlite3_rollback_hook(self.conn.raw(), if on { Some(on_rollback) } else { None }, ctx);
        self.state.tracker.borrow_mut().on = on;
    }

    /// The effects of a statement from its authorizer events.
    pub fn effects(&self, events: &[AuthEvent]) -> WriteEffects {
        let mut effects = WriteEffects { generation: self.state.tracker.borrow().generation, ..Default::default() };
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
                let schema: Box<str> =
                    if schema.is_empty() { "main".into() } else { schema.to_ascii_lowercase().into() };
                if !effects.schemas.contains(&schema) {
                    effects.schemas.push(schema);
                }
            } else if is_write(e.action) {
                let key = table_key(&e.db, &e.arg1);
                if !effects.virtual_writes.contains(&key) && self.is_virtual(&key, &e.db, &e.arg1) {
                    effects.virtual_writes.push(key);
                }
                let i = match effects.writes.iter().position(|w| w.db == e.db && w.table == e.arg1) {
                    Some(i) => i,
                    None => {
                        effects.writes.push(Written { db: e.db.clone(), table: e.arg1.clone(), set: Vec::new() });
                        effects.writes.len() - 1
                    }
                };
                if e.action == ffi::SQLITE_UPDATE {
                    let column: Box<str> = e.arg2.to_ascii_lowercase().into();
                    if !effects.writes[i].set.contains(&column) {
                        effects.writes[i].set.push(column);
                    }
                }
            }
        }
        effects
    }

    fn is_virtual(&self, key: &TableKey, db: &str, table: &str) -> bool {
        if let Some(&known) = self.state.tracker.borrow().virtual_tables.get(key) {
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
        self.state.tracker.borrow_mut().virtual_tables.insert(key.clone(), is_virtual);
        is_virtual
    }

    /// A table's columns, looked up once per schema generation; None for a table that has
    /// none (gone, or not a table).
    fn table_columns(&self, key: &TableKey) -> Option<Rc<TableColumns>> {
        if let Some(known) = self.state.tracker.borrow().tables.get(key) {
            return Some(known.clone());
        }
        let mut parts = key.split('\u{1}');
        let (db, table) = (parts.next()?, parts.next()?);
        let from = format!("pragma_table_xinfo({}, {})", quote_literal(table), quote_literal(db));
        let names: Vec<Box<str>> = self
            .conn
            .query_texts(&format!("SELECT name FROM {from}"))
            .ok()?
            .into_iter()
            .map(|n| n.to_ascii_lowercase().into())
            .collect();
        if names.is_empty() {
            return None;
        }
        // pragma table_xinfo's `hidden`: 2 a virtual, 3 a stored generated column.
        let generated =
            self.conn.query_int(&format!("SELECT count(*) FROM {from} WHERE hidden IN (2, 3)")).map_or(true, |n| n > 0);
        let ids = names.iter().map(|n| name_id(n)).collect();
        let columns = Rc::new(TableColumns { id: name_id(key), names, ids, generated });
        self.state.tracker.borrow_mut().tables.insert(key.clone(), columns.clone());
        Some(columns)
    }

    /// Runs `steps` (a statement's) with the tables it writes known to the pre-update hook.
    pub fn running<T>(&self, effects: &WriteEffects, steps: impl FnOnce() -> T) -> T {
        struct Ended<'a>(&'a RefCell<ChangeTracker>);
        impl Drop for Ended<'_> {
            fn drop(&mut self) {
                self.0.borrow_mut().running = None;
            }
        }
        let tracker = &self.state.tracker;
        let current = {
            let t = tracker.borrow();
            // A statement prepared before a schema change may name out-of-date columns: without
            // targets the hook compares every column.
            t.on && !effects.writes.is_empty() && effects.generation == t.generation
        };
        if !current {
            return steps();
        }
        let targets = effects.targets.borrow().clone();
        let targets = targets.unwrap_or_else(|| {
            let looked_up = self.targets(&effects.writes);
            *effects.targets.borrow_mut() = Some(looked_up.clone());
            looked_up
        });
        tracker.borrow_mut().running = Some(targets);
        let _ended = Ended(tracker);
        steps()
    }

    fn targets(&self, writes: &[Written]) -> Rc<[Target]> {
        let target = |w: &Written| {
            let columns = self.table_columns(&table_key(&w.db, &w.table))?;
            let set = if w.set.is_empty() || columns.generated {
                None
            } else {
                w.set.iter().map(|name| columns.names.iter().position(|n| n == name)).collect()
            };
            Some(Target { db: w.db.as_bytes().into(), table: w.table.as_bytes().into(), columns, set })
        };
        writes.iter().filter_map(target).collect()
    }

    /// After a statement that SQLite compiled statements while it ran (a re-prepare after a
    /// schema change, maybe by another connection; a virtual table's own): if the schema did
    /// change, what is known of tables is out of date.
    pub fn recompiled(&self) {
        let version = self.conn.query_int("PRAGMA schema_version").ok();
        let mut tracker = self.state.tracker.borrow_mut();
        if version.is_none() || std::mem::replace(&mut tracker.schema_version, version) != version {
            tracker.schema_changed();
        }
    }

    /// After a job: the committed changes as a ChangeSet (None when nothing was committed).
    pub fn take_committed(&self, autocommit: bool) -> Option<ChangeSet> {
        let changes = self.state.tracker.borrow_mut().take_committed(autocommit);
        if changes.is_empty() {
            return None;
        }
        let mut set = ChangeSet::default();
        for change in changes {
            match change {
                Change::Schema(schema) => set.add_schema(&schema),
                Change::Everything => set.everything = true,
                Change::Table { table, changed: Changed::Rows } => set.add_rows(table_id(&table)),
                Change::Table { table, changed: Changed::Columns(bits) } => {
                    let columns = match &table {
                        TableRef::Known(columns) => Some(columns.clone()),
                        TableRef::Named(key) => self.table_columns(key),
                    };
                    match columns {
                        Some(c) if names_all(&c, bits) => set.add_columns(c.id, set_bits(bits).map(|i| c.ids[i])),
                        _ => set.add_rows(table_id(&table)),
                    }
                }
            }
        }
        Some(set)
    }
}

/// The indexes of the bits set in `bits`, lowest first.
fn set_bits(mut bits: u128) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let i = bits.trailing_zeros() as usize;
        (bits != 0).then(|| {
            bits &= bits - 1;
            i
        })
    })
}

/// Every changed column in `bits` has a name in `columns`.
fn names_all(columns: &TableColumns, bits: u128) -> bool {
    columns.ids.len() >= MAX_COLUMN_BITS || bits >> columns.ids.len() == 0
}

fn table_id(table: &TableRef) -> NameId {
    match table {
        TableRef::Known(columns) => columns.id,
        TableRef::Named(key) => name_id(key),
    }
}

fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// SAFETY (all hooks): `ctx` is the connection's `HookState`; SQLite calls the hooks on the
/// writer's thread, inside a statement, when no Rust borrow of the tracker is held.
unsafe extern "C" fn on_preupdate(
    ctx: *mut c_void,
    db: *mut ffi::sqlite3,
    op: c_int,
    db_name: *const c_char,
    table: *const c_char,
    old_rowid: i64,
    new_rowid: i64,
) {
    let state = &*(ctx as *const HookState);
    let Ok(mut tracker) = state.tracker.try_borrow_mut() else { return };
    let merges = tracker.last == Some((db_name, table));
    let in_place_update = !(op == ffi::SQLITE_INSERT || op == ffi::SQLITE_DELETE || old_rowid != new_rowid);
    // The statement's target is needed to compare an UPDATE's columns or to start a new entry;
    // rows merging into the last entry (a batch of INSERTs) skip the lookup.
    let running = if in_place_update || !merges { tracker.running.clone() } else { None };
    let target = running.as_deref().and_then(|targets| find_target(state, targets, db_name, table));
    let changed = if in_place_update {
        let count = ffi::sqlite3_preupdate_count(db).max(0) as usize;
        let bits = match target {
            Some(Target { set: Some(set), columns, .. }) if columns.names.len() == count => {
                changed_columns(db, set.iter().copied())
            }
            _ => changed_columns(db, 0..count),
        };
        match bits {
            Some(0) => return, // an UPDATE that set every column to the value it had
            Some(bits) => Changed::Columns(bits),
            None => Changed::Rows,
        }
    } else {
        Changed::Rows
    };
    if merges {
        if let Some(Change::Table { changed: last, .. }) = tracker.pending.last_mut() {
            *last = match (&*last, changed) {
                (Changed::Columns(a), Changed::Columns(b)) => Changed::Columns(a | b),
                _ => Changed::Rows,
            };
            return;
        }
    }
    let table_ref = match target {
        Some(t) => TableRef::Known(t.columns.clone()),
        None => {
            let name = |p: *const c_char| CStr::from_ptr(p).to_string_lossy();
            TableRef::Named(table_key(&name(db_name), &name(table)))
        }
    };
    tracker.pending.push(Change::Table { table: table_ref, changed });
    tracker.last = Some((db_name, table));
}

/// The running statement's target for this table, unless SQLite compiled statements while it
/// runs: it re-prepared it after a schema change, so the SET lists learned at its prepare may
/// be out of date.
unsafe fn find_target<'a>(
    state: &HookState,
    targets: &'a [Target],
    db_name: *const c_char,
    table: *const c_char,
) -> Option<&'a Target> {
    let recompiled = state.capture.try_borrow().map_or(true, |c| !c.events.is_empty() || c.overflow);
    if recompiled {
        return None;
    }
    let (db_name, table) = (CStr::from_ptr(db_name).to_bytes(), CStr::from_ptr(table).to_bytes());
    targets.iter().find(|t| *t.db == *db_name && *t.table == *table)
}

/// Which of `columns` (indexes) the UPDATE changed the value of, as bits; None when one is
/// beyond the bits.
unsafe fn changed_columns(db: *mut ffi::sqlite3, columns: impl Iterator<Item = usize>) -> Option<u128> {
    let mut bits = 0u128;
    for i in columns {
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
                (ffi::sqlite3_value_text(a), ffi::sqlite3_value_text(b))
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
    if let Ok(mut tracker) = (*(ctx as *const HookState)).tracker.try_borrow_mut() {
        tracker.committed_now();
    }
    0 // let the commit proceed
}

unsafe extern "C" fn on_rollback(ctx: *mut c_void) {
    if let Ok(mut tracker) = (*(ctx as *const HookState)).tracker.try_borrow_mut() {
        tracker.rolled_back();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::dependencies::TableChange;
    use crate::sqlite::setup::Role;
    use crate::testing::{Opened, TempDb};

    /// A writer connection on a fresh database file, removed (with its WAL) when dropped.
    struct Db {
        conn: Opened,
        _file: TempDb,
    }

    impl Db {
        fn open() -> Db {
            let file = TempDb::new("tracker");
            let conn = Opened::open(file.as_str(), Role::Writer);
            Db { conn, _file: file }
        }

        fn conn(&self) -> &Opened {
            &self.conn
        }

        fn exec(&self, sql: &str) {
            self.conn().exec(sql).unwrap_or_else(|e| panic!("{sql}: {}", e.message));
        }

        /// What the job so far committed, as a comparable summary.
        fn published(&self) -> Option<Published> {
            self.conn().take_committed().map(|set| Published::from(&set))
        }
    }

    /// A ChangeSet with its lists sorted, so two can be compared.
    #[derive(Debug, PartialEq)]
    struct Published {
        everything: bool,
        schemas: Vec<NameId>,
        tables: Vec<(NameId, Seen)>,
    }

    #[derive(Debug, PartialEq)]
    enum Seen {
        Rows,
        Columns(Vec<NameId>),
    }

    impl Published {
        fn from(set: &ChangeSet) -> Published {
            let mut tables: Vec<(NameId, Seen)> = set
                .tables
                .iter()
                .map(|(t, c)| {
                    let seen = match c {
                        TableChange::Rows => Seen::Rows,
                        TableChange::Columns(ids) => {
                            let mut ids = ids.clone();
                            ids.sort_unstable();
                            Seen::Columns(ids)
                        }
                    };
                    (*t, seen)
                })
                .collect();
            tables.sort_by_key(|(t, _)| *t);
            let mut schemas = set.schemas.clone();
            schemas.sort_unstable();
            Published { everything: set.everything, schemas, tables }
        }
    }

    fn table(name: &str) -> NameId {
        name_id(&table_key("main", name))
    }

    fn rows(tables: &[&str]) -> Option<Published> {
        changed(tables.iter().map(|t| (*t, Seen::Rows)).collect())
    }

    fn columns(names: &[&str]) -> Seen {
        let mut ids: Vec<NameId> = names.iter().map(|n| name_id(n)).collect();
        ids.sort_unstable();
        Seen::Columns(ids)
    }

    fn changed(tables: Vec<(&str, Seen)>) -> Option<Published> {
        let mut tables: Vec<(NameId, Seen)> = tables.into_iter().map(|(t, s)| (table(t), s)).collect();
        tables.sort_by_key(|(t, _)| *t);
        Some(Published { everything: false, schemas: Vec::new(), tables })
    }

    /// A database with tables a, b, c, d and t(id, x, y, z) holding row 1, tracking on.
    fn tracked() -> Db {
        let db = Db::open();
        db.exec(
            "CREATE TABLE a (v); CREATE TABLE b (v); CREATE TABLE c (v); CREATE TABLE d (v);
             CREATE TABLE t (id INTEGER PRIMARY KEY, x, y, z); INSERT INTO t VALUES (1, 1, 1, 1)",
        );
        db.published(); // the setup job's schema changes
        db.conn().set_tracking(true);
        db
    }

    #[test]
    fn a_committed_transaction_is_published_once_it_commits() {
        let db = tracked();
        db.exec("BEGIN; INSERT INTO a VALUES (1)");
        assert_eq!(db.published(), None, "nothing is committed while the transaction is open");
        db.exec("INSERT INTO b VALUES (1); COMMIT");
        assert_eq!(db.published(), rows(&["a", "b"]));
        assert_eq!(db.published(), None, "published once");
    }

    #[test]
    fn an_autocommit_statement_is_published() {
        let db = tracked();
        db.exec("INSERT INTO a VALUES (1)");
        assert_eq!(db.published(), rows(&["a"]));
        db.exec("DELETE FROM a WHERE v = 1");
        assert_eq!(db.published(), rows(&["a"]), "DELETE changes the table's rows");
        db.exec("DELETE FROM a");
        assert_eq!(db.published(), None, "a DELETE that removed no row changed nothing");
    }

    #[test]
    fn a_rolled_back_transaction_publishes_nothing() {
        let db = tracked();
        db.exec("BEGIN; INSERT INTO a VALUES (1); UPDATE t SET x = 2; ROLLBACK");
        assert_eq!(db.published(), None);
        db.exec("BEGIN; INSERT INTO b VALUES (1); COMMIT");
        assert_eq!(db.published(), rows(&["b"]), "the next transaction starts clean");
        // Within one job (a script): the rolled-back changes are gone before the next commit.
        db.exec("BEGIN; INSERT INTO a VALUES (1); ROLLBACK; BEGIN; INSERT INTO c VALUES (1); COMMIT");
        assert_eq!(db.published(), rows(&["c"]));
    }

    #[test]
    fn a_failed_autocommit_statement_publishes_nothing() {
        let db = tracked();
        db.exec("CREATE TABLE u (v UNIQUE); INSERT INTO u VALUES (3)");
        db.published();
        // The first row goes in, the second violates the constraint: the statement is undone.
        let failed = db.conn().exec("INSERT INTO u VALUES (1), (3)");
        assert!(failed.is_err());
        assert_eq!(db.published(), None);
    }

    #[test]
    fn rollback_to_discards_only_what_it_undid() {
        let db = tracked();
        db.exec("BEGIN; INSERT INTO a VALUES (1); SAVEPOINT s; INSERT INTO b VALUES (1); ROLLBACK TO s");
        db.exec("INSERT INTO c VALUES (1); COMMIT");
        assert_eq!(db.published(), rows(&["a", "c"]));
    }

    #[test]
    fn rollback_to_keeps_the_savepoint_open() {
        let db = tracked();
        db.exec("BEGIN; INSERT INTO a VALUES (1); SAVEPOINT s; INSERT INTO b VALUES (1); ROLLBACK TO s");
        db.exec("INSERT INTO c VALUES (1); ROLLBACK TO s; INSERT INTO d VALUES (1); RELEASE s; COMMIT");
        assert_eq!(db.published(), rows(&["a", "d"]), "the second ROLLBACK TO undid c too");
    }

    #[test]
    fn release_keeps_the_savepoints_changes() {
        let db = tracked();
        db.exec("BEGIN; SAVEPOINT s; INSERT INTO a VALUES (1); RELEASE s; COMMIT");
        assert_eq!(db.published(), rows(&["a"]));
        // Released, the savepoint is gone: a later ROLLBACK TO it fails and undoes nothing.
        db.exec("BEGIN; SAVEPOINT s; INSERT INTO b VALUES (1); RELEASE s");
        assert!(db.conn().exec("ROLLBACK TO s").is_err());
        db.exec("COMMIT");
        assert_eq!(db.published(), rows(&["b"]));
    }

    #[test]
    fn a_savepoint_outside_a_transaction_commits_on_release() {
        let db = tracked();
        db.exec("SAVEPOINT s; INSERT INTO a VALUES (1)");
        assert_eq!(db.published(), None);
        db.exec("RELEASE s");
        assert_eq!(db.published(), rows(&["a"]));
        db.exec("SAVEPOINT s; INSERT INTO b VALUES (1); ROLLBACK TO s; RELEASE s");
        assert_eq!(db.published(), None, "rolled back to its start, then committed empty");
    }

    #[test]
    fn nested_savepoints_roll_back_to_the_one_named() {
        let db = tracked();
        db.exec("BEGIN; INSERT INTO a VALUES (1); SAVEPOINT s1; INSERT INTO b VALUES (1)");
        db.exec("SAVEPOINT s2; INSERT INTO c VALUES (1); ROLLBACK TO S1; INSERT INTO d VALUES (1); COMMIT");
        assert_eq!(db.published(), rows(&["a", "d"]), "ROLLBACK TO s1 (any case) undid b and c");
    }

    #[test]
    fn a_repeated_savepoint_name_means_the_innermost() {
        let db = tracked();
        db.exec("BEGIN; SAVEPOINT x; INSERT INTO a VALUES (1); SAVEPOINT x; INSERT INTO b VALUES (1)");
        db.exec("ROLLBACK TO x; RELEASE x; INSERT INTO c VALUES (1); RELEASE x; COMMIT");
        assert_eq!(db.published(), rows(&["a", "c"]));
    }

    #[test]
    fn a_released_savepoints_name_then_means_the_one_before_it() {
        let db = tracked();
        db.exec("BEGIN; SAVEPOINT x; INSERT INTO a VALUES (1); SAVEPOINT y; INSERT INTO b VALUES (1)");
        db.exec("SAVEPOINT x; INSERT INTO c VALUES (1); RELEASE x; ROLLBACK TO x; INSERT INTO d VALUES (1); COMMIT");
        assert_eq!(db.published(), rows(&["d"]), "ROLLBACK TO x went back to the outer x, before a");
    }

    #[test]
    fn releasing_an_outer_savepoint_releases_the_inner_ones() {
        let db = tracked();
        db.exec("BEGIN; SAVEPOINT s1; SAVEPOINT s2; INSERT INTO a VALUES (1); RELEASE s1");
        assert!(db.conn().exec("ROLLBACK TO s2").is_err(), "s2 went with s1");
        db.exec("INSERT INTO b VALUES (1); COMMIT");
        assert_eq!(db.published(), rows(&["a", "b"]));
    }

    #[test]
    fn a_rolled_back_insert_does_not_widen_an_earlier_update() {
        // The UPDATE records column x; the INSERT after the savepoint must start an entry of
        // its own (not merge into the UPDATE's as "rows"), so ROLLBACK TO removes it cleanly.
        let db = tracked();
        db.exec("BEGIN; UPDATE t SET x = 2; SAVEPOINT s; INSERT INTO t (x) VALUES (9); ROLLBACK TO s; COMMIT");
        assert_eq!(db.published(), changed(vec![("t", columns(&["x"]))]));
    }

    #[test]
    fn update_publishes_the_set_columns_whose_value_changed() {
        let db = tracked();
        db.exec("UPDATE t SET x = 2, y = y, z = 1 WHERE id = 1");
        assert_eq!(db.published(), changed(vec![("t", columns(&["x"]))]), "y and z kept their values");
        db.exec("UPDATE t SET Y = 'text', Z = x'01'");
        assert_eq!(db.published(), changed(vec![("t", columns(&["y", "z"]))]), "names are lowercased");
        db.exec("UPDATE t SET x = 2, y = 'text', z = x'01'");
        assert_eq!(db.published(), None, "an UPDATE that changed no value changed nothing");
        db.exec("UPDATE t SET x = 2.0");
        assert_eq!(db.published(), changed(vec![("t", columns(&["x"]))]), "INTEGER 2 became REAL 2.0");
    }

    #[test]
    fn updates_in_one_transaction_add_up_their_columns() {
        let db = tracked();
        db.exec("BEGIN; UPDATE t SET x = 5; UPDATE t SET y = 5; COMMIT");
        assert_eq!(db.published(), changed(vec![("t", columns(&["x", "y"]))]));
        db.exec("BEGIN; UPDATE t SET x = 6; INSERT INTO t (x) VALUES (1); COMMIT");
        assert_eq!(db.published(), rows(&["t"]), "an INSERT makes the table's change a row change");
    }

    #[test]
    fn an_update_that_moves_a_row_changes_rows() {
        let db = tracked();
        db.exec("UPDATE t SET id = 7 WHERE id = 1");
        assert_eq!(db.published(), rows(&["t"]));
    }

    #[test]
    fn a_triggers_writes_are_published_with_their_columns() {
        let db = tracked();
        db.exec(
            "CREATE TABLE log (n);
             CREATE TRIGGER t_x AFTER UPDATE OF x ON t BEGIN
               UPDATE t SET z = new.x * 10 WHERE id = new.id; INSERT INTO log VALUES (new.x);
             END",
        );
        db.published();
        db.exec("UPDATE t SET x = 3");
        assert_eq!(db.published(), changed(vec![("t", columns(&["x", "z"])), ("log", Seen::Rows)]));
    }

    #[test]
    fn generated_columns_change_with_what_they_are_computed_from() {
        let db = tracked();
        db.exec(
            "CREATE TABLE g (id INTEGER PRIMARY KEY, a, b, v AS (a * 2), s AS (a + 1) STORED);
             INSERT INTO g (id, a, b) VALUES (1, 1, 1)",
        );
        db.published();
        // Schema changed: the next statement is prepared under the new generation, so it has
        // targets (and its SET list would name only a).
        db.exec("UPDATE g SET a = 2");
        assert_eq!(db.published(), changed(vec![("g", columns(&["a", "v", "s"]))]));
    }

    #[test]
    fn a_column_beyond_the_bits_makes_an_update_a_row_change() {
        let db = tracked();
        let columns_sql: Vec<String> = (0..130).map(|i| format!("c{i}")).collect();
        db.exec(&format!("CREATE TABLE w ({}); INSERT INTO w (c0) VALUES (0)", columns_sql.join(", ")));
        db.published();
        db.exec("UPDATE w SET c127 = 1");
        assert_eq!(db.published(), changed(vec![("w", columns(&["c127"]))]), "the last column the bits hold");
        db.exec("UPDATE w SET c128 = 1");
        assert_eq!(db.published(), rows(&["w"]));
    }

    #[test]
    fn a_schema_change_is_published_as_its_schema() {
        let db = tracked();
        db.exec("CREATE TABLE n (v)");
        let published = db.published().unwrap();
        assert_eq!(published.schemas, vec![name_id("main")]);
        db.exec("BEGIN; DROP TABLE n; ROLLBACK");
        assert_eq!(db.published(), None, "a rolled-back schema change publishes nothing");
    }

    #[test]
    fn writes_to_a_virtual_table_change_its_rows() {
        let db = tracked();
        db.exec("CREATE VIRTUAL TABLE f USING fts5(body)");
        db.published();
        db.exec("INSERT INTO f VALUES ('hello')");
        let published = db.published().unwrap();
        assert!(
            published.tables.contains(&(table("f"), Seen::Rows)),
            "the pre-update hook never sees f itself; its shadow tables are not what queries read"
        );
    }

    #[test]
    fn tracking_turned_on_inside_a_transaction_publishes_everything() {
        let db = Db::open();
        db.exec("CREATE TABLE a (v)");
        db.exec("BEGIN; INSERT INTO a VALUES (1)");
        db.conn().set_tracking(true);
        db.exec("COMMIT");
        assert!(db.published().unwrap().everything, "the changes before tracking began are unknown");

        db.conn().set_tracking(false);
        db.exec("BEGIN");
        db.conn().set_tracking(true);
        db.exec("ROLLBACK");
        assert_eq!(db.published(), None, "a rolled-back transaction changed nothing");
        db.exec("INSERT INTO a VALUES (2)");
        assert_eq!(db.published(), rows(&["a"]), "the next transaction is known again");
    }

    #[test]
    fn tracking_off_publishes_nothing() {
        let db = tracked();
        db.conn().set_tracking(false);
        db.exec("INSERT INTO a VALUES (1); UPDATE t SET x = 9");
        assert_eq!(db.published(), None);
    }

    #[test]
    fn a_statements_rows_in_one_table_merge_into_one_entry() {
        let db = Db::open();
        db.exec("CREATE TABLE a (v); CREATE TABLE b (v); CREATE TRIGGER a_b AFTER INSERT ON a BEGIN INSERT INTO b VALUES (new.v); END");
        // Hooks of the test's own, to see the tracker's entries (the connection's are private).
        let hooks = HookState { capture: RefCell::new(Capture::new(Role::Writer)), tracker: RefCell::default() };
        let tracking = Tracking { conn: &db.conn().conn, state: &hooks };
        // SAFETY: removed below, before `hooks` drops.
        unsafe { tracking.install(true) };
        db.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) INSERT INTO b SELECT i FROM n");
        let entries = hooks.tracker.borrow().committed.len();
        hooks.tracker.borrow_mut().committed.clear();
        // Rows alternating between two tables each start an entry: none is lost to the other.
        db.exec("INSERT INTO a VALUES (1), (2), (3)");
        let alternating = hooks.tracker.borrow().committed.len();
        unsafe { tracking.install(false) };
        assert_eq!(entries, 1, "100 INSERTed rows make one entry");
        assert_eq!(alternating, 6);
    }
}
