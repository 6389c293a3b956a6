//! What a query reads (Dependencies) and what committed writes changed (ChangeSet), and the
//! one question between them: does this change require that query to run again?

use sqlite3mc_sys as ffi;

use super::capture::AuthEvent;

/// A table, named by schema and table, ASCII-lowercased (SQLite names are case-insensitive).
pub type TableKey = Box<str>;

pub fn table_key(db: &str, table: &str) -> TableKey {
    let db = if db.is_empty() { "main" } else { db };
    format!("{}\u{1}{}", db.to_ascii_lowercase(), table.to_ascii_lowercase()).into()
}

fn key_schema(key: &str) -> &str {
    key.split('\u{1}').next().unwrap_or("")
}

/// The tables and columns a query reads. A read of no column (`count(*)`) is recorded as the
/// column "": it depends on which rows exist, which only INSERT and DELETE change.
///
/// Names are kept as 64-bit hashes in flat vectors: a commit is checked against every live
/// query on the writer's path before the write completes, and a query reads few tables and
/// columns, so comparing integers beats hash sets of strings (experiments/020). Two names
/// with one hash would only make a query re-run when it need not: never the reverse.
#[derive(Clone, Debug, PartialEq)]
pub enum Dependencies {
    /// Unknown or too many to track: every change re-runs the query.
    All,
    Tables(Vec<TableReads>),
}

/// A table, schema or column name's identity: the hash of its lowercased spelling.
pub type NameId = u64;

pub fn name_id(name: &str) -> NameId {
    xxhash_rust::xxh3::xxh3_64(name.as_bytes())
}

#[derive(Clone, Debug, PartialEq)]
pub struct TableReads {
    table: NameId,
    /// The schema part of `table`.
    schema: NameId,
    /// Lowercased names' ids, sorted, without duplicates.
    columns: Vec<NameId>,
}

impl TableReads {
    fn new(table: &str) -> TableReads {
        TableReads { table: name_id(table), schema: name_id(key_schema(table)), columns: Vec::new() }
    }

    fn add(&mut self, column: NameId) {
        if let Err(at) = self.columns.binary_search(&column) {
            self.columns.insert(at, column);
        }
    }
}

impl Dependencies {
    pub fn none() -> Dependencies {
        Dependencies::Tables(Vec::new())
    }

    /// From a reader's authorizer events; `overflow` means some were not recorded.
    pub fn from_events(events: &[AuthEvent], overflow: bool) -> Dependencies {
        if overflow {
            return Dependencies::All;
        }
        let mut deps = Dependencies::none();
        for e in events.iter().filter(|e| e.action == ffi::SQLITE_READ) {
            let table = table_key(&e.db, &e.arg1);
            let Dependencies::Tables(tables) = &mut deps else { unreachable!() };
            let id = name_id(&table);
            let i = match tables.iter().position(|t| t.table == id) {
                Some(i) => i,
                None => {
                    tables.push(TableReads::new(&table));
                    tables.len() - 1
                }
            };
            tables[i].add(name_id(&e.arg2.to_ascii_lowercase()));
        }
        deps
    }

    pub fn is_all(&self) -> bool {
        matches!(self, Dependencies::All)
    }

    /// Both sets of reads: used when SQLite re-prepares a statement after a schema change, or
    /// a virtual table compiles statements of its own while it runs.
    pub fn union(&self, other: &Dependencies) -> Dependencies {
        match (self, other) {
            (Dependencies::Tables(a), Dependencies::Tables(b)) => {
                let mut merged = a.clone();
                for t in b {
                    match merged.iter_mut().find(|m| m.table == t.table) {
                        Some(m) => t.columns.iter().for_each(|&c| m.add(c)),
                        None => merged.push(t.clone()),
                    }
                }
                Dependencies::Tables(merged)
            }
            _ => Dependencies::All,
        }
    }

    pub fn affected_by(&self, changes: &ChangeSet) -> Affected {
        let tables = match self {
            Dependencies::All => return Affected::Rerun,
            Dependencies::Tables(_) if changes.everything => return Affected::Rerun,
            Dependencies::Tables(tables) => tables,
        };
        let mut skipped = false;
        for reads in tables {
            if changes.schemas.contains(&reads.schema) {
                return Affected::Rerun;
            }
            match changes.tables.iter().find(|(t, _)| *t == reads.table) {
                None => {}
                Some((_, TableChange::Rows)) => return Affected::Rerun,
                Some((_, TableChange::Columns(changed))) => {
                    if reads.columns.iter().any(|c| changed.contains(c)) {
                        return Affected::Rerun;
                    }
                    skipped = true;
                }
            }
        }
        if skipped {
            Affected::SkippedByColumns
        } else {
            Affected::Unaffected
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Affected {
    Rerun,
    /// It reads a changed table, but none of the changed columns.
    SkippedByColumns,
    Unaffected,
}

/// What one or more committed transactions changed (few entries: flat vectors).
#[derive(Default, Debug)]
pub struct ChangeSet {
    /// Unknown changes (another process wrote the file): everything may have changed.
    pub everything: bool,
    /// Schemas whose definitions changed (CREATE, DROP, ALTER): every query on them re-runs.
    pub schemas: Vec<NameId>,
    pub tables: Vec<(NameId, TableChange)>,
}

#[derive(Debug)]
pub enum TableChange {
    /// Rows inserted or deleted (or a rowid changed): every query reading the table re-runs.
    Rows,
    /// Only these columns of existing rows changed value.
    Columns(Vec<NameId>),
}

impl ChangeSet {
    /// Unknown changes: every live query re-runs.
    pub fn everything() -> ChangeSet {
        ChangeSet { everything: true, ..Default::default() }
    }

    /// `table`: the id of its key (`table_key`).
    fn entry(&mut self, table: NameId) -> &mut TableChange {
        let i = match self.tables.iter().position(|(t, _)| *t == table) {
            Some(i) => i,
            None => {
                self.tables.push((table, TableChange::Columns(Vec::new())));
                self.tables.len() - 1
            }
        };
        &mut self.tables[i].1
    }

    /// `schema`: lowercased.
    pub fn add_schema(&mut self, schema: &str) {
        let id = name_id(schema);
        if !self.schemas.contains(&id) {
            self.schemas.push(id);
        }
    }

    /// `table`: the id of its key (`table_key`).
    pub fn add_rows(&mut self, table: NameId) {
        *self.entry(table) = TableChange::Rows;
    }

    /// `table`: the id of its key; `columns`: the ids of lowercased names.
    pub fn add_columns(&mut self, table: NameId, columns: impl IntoIterator<Item = NameId>) {
        if let TableChange::Columns(set) = self.entry(table) {
            for id in columns {
                if !set.contains(&id) {
                    set.push(id);
                }
            }
        }
    }
}

#[cfg(test)]
impl Dependencies {
    /// For tests: what a query reads, as (table, column) pairs in schema main.
    pub fn reading(columns: &[(&str, &str)]) -> Dependencies {
        let events: Vec<AuthEvent> = columns
            .iter()
            .map(|(t, c)| AuthEvent {
                action: ffi::SQLITE_READ,
                db: "main".into(),
                arg1: (*t).into(),
                arg2: (*c).into(),
            })
            .collect();
        Dependencies::from_events(&events, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(reads: &[(&str, &str)]) -> Dependencies {
        Dependencies::reading(reads)
    }

    fn table(db: &str, table: &str) -> NameId {
        name_id(&table_key(db, table))
    }

    #[test]
    fn columns_decide_for_updates_and_rows_for_inserts() {
        let d = deps(&[("T", "Name"), ("t", "id"), ("u", "")]);
        let mut c = ChangeSet::default();
        c.add_columns(table("main", "t"), [name_id("other")]);
        assert_eq!(d.affected_by(&c), Affected::SkippedByColumns);
        c.add_columns(table("main", "t"), [name_id("name")]);
        assert_eq!(d.affected_by(&c), Affected::Rerun);

        let mut count_only = ChangeSet::default();
        count_only.add_columns(table("main", "u"), [name_id("x")]);
        assert_eq!(d.affected_by(&count_only), Affected::SkippedByColumns);
        count_only.add_rows(table("MAIN", "U"));
        assert_eq!(d.affected_by(&count_only), Affected::Rerun);

        let mut other = ChangeSet::default();
        other.add_rows(table("aux", "t"));
        assert_eq!(d.affected_by(&other), Affected::Unaffected);
        other.add_schema("main");
        assert_eq!(d.affected_by(&other), Affected::Rerun);
    }

    #[test]
    fn overflow_depends_on_everything() {
        assert!(Dependencies::from_events(&[], true).is_all());
        assert_eq!(Dependencies::All.affected_by(&ChangeSet::default()), Affected::Rerun);
    }
}
