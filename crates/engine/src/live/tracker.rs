//! The writer's record of what its writes changed. The change hooks (`recording`) report every
//! row change (triggers and foreign-key cascades included) and move the open transaction's
//! changes to the committed list when it commits; a rollback and `ROLLBACK TO` discard what
//! they undid (the savepoint bookkeeping here). After each job the writer publishes what was
//! committed (`Tracking::take_committed`).
//!
//! Which columns an UPDATE changed is learned by comparing the row's old and new values, in
//! the columns the statement's SET lists name only (the authorizer reports them when it is
//! prepared, triggers' and foreign-key actions' included; `Tracking::effects` and `running`
//! hand them to the pre-update hook): comparing every column of a wide table cost more than
//! the write itself (experiments/027).

use std::cell::RefCell;
use std::collections::HashMap;
use std::os::raw::c_char;
use std::rc::Rc;

use sqlite3mc_sys as ffi;

use super::capture::{is_schema_change, is_write, AuthEvent, Capture};
use super::dependencies::{name_id, table_key, ChangeSet, NameId, TableKey};
use crate::sqlite::connection::Connection;

pub mod recording;
#[cfg(test)]
mod tests;

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
