//! What a query reads (Dependencies) and what committed writes changed (ChangeSet), and the
//! one question between them: does this change require that query to run again?

use std::collections::{HashMap, HashSet};

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
#[derive(Clone, Debug, PartialEq)]
pub enum Dependencies {
    /// Unknown or too many to track: every change re-runs the query.
    All,
    Tables(HashMap<TableKey, HashSet<Box<str>>>),
}

impl Dependencies {
    pub fn none() -> Dependencies {
        Dependencies::Tables(HashMap::new())
    }

    /// From a reader's authorizer events; `overflow` means some were not recorded.
    pub fn from_events(events: &[AuthEvent], overflow: bool) -> Dependencies {
        if overflow {
            return Dependencies::All;
        }
        let mut tables: HashMap<TableKey, HashSet<Box<str>>> = HashMap::new();
        for e in events.iter().filter(|e| e.action == ffi::SQLITE_READ) {
            tables.entry(table_key(&e.db, &e.arg1)).or_default().insert(e.arg2.to_ascii_lowercase().into());
        }
        Dependencies::Tables(tables)
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
                for (table, columns) in b {
                    merged.entry(table.clone()).or_default().extend(columns.iter().cloned());
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
        for (table, columns) in tables {
            if changes.schemas.contains(key_schema(table)) {
                return Affected::Rerun;
            }
            match changes.tables.get(table) {
                None => {}
                Some(TableChange::Rows) => return Affected::Rerun,
                Some(TableChange::Columns(changed)) => {
                    if columns.iter().any(|c| changed.contains(c)) {
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

/// What one or more committed transactions changed.
#[derive(Default, Debug)]
pub struct ChangeSet {
    /// Unknown changes (another process wrote the file): everything may have changed.
    pub everything: bool,
    /// Schemas whose definitions changed (CREATE, DROP, ALTER): every query on them re-runs.
    pub schemas: HashSet<Box<str>>,
    pub tables: HashMap<TableKey, TableChange>,
}

#[derive(Debug)]
pub enum TableChange {
    /// Rows inserted or deleted (or a rowid changed): every query reading the table re-runs.
    Rows,
    /// Only these columns (lowercased) of existing rows changed value.
    Columns(HashSet<Box<str>>),
}

impl ChangeSet {
    pub fn add_rows(&mut self, table: TableKey) {
        self.tables.insert(table, TableChange::Rows);
    }

    pub fn add_columns(&mut self, table: TableKey, columns: impl IntoIterator<Item = Box<str>>) {
        match self.tables.entry(table).or_insert_with(|| TableChange::Columns(HashSet::new())) {
            TableChange::Rows => {}
            TableChange::Columns(set) => set.extend(columns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(reads: &[(&str, &str)]) -> Dependencies {
        let events: Vec<AuthEvent> = reads
            .iter()
            .map(|(t, c)| AuthEvent { action: ffi::SQLITE_READ, db: "main".into(), arg1: (*t).into(), arg2: (*c).into() })
            .collect();
        Dependencies::from_events(&events, false)
    }

    #[test]
    fn columns_decide_for_updates_and_rows_for_inserts() {
        let d = deps(&[("T", "Name"), ("t", "id"), ("u", "")]);
        let mut c = ChangeSet::default();
        c.add_columns(table_key("main", "t"), ["other".into()]);
        assert_eq!(d.affected_by(&c), Affected::SkippedByColumns);
        c.add_columns(table_key("main", "t"), ["name".into()]);
        assert_eq!(d.affected_by(&c), Affected::Rerun);

        let mut count_only = ChangeSet::default();
        count_only.add_columns(table_key("main", "u"), ["x".into()]);
        assert_eq!(d.affected_by(&count_only), Affected::SkippedByColumns);
        count_only.add_rows(table_key("MAIN", "U"));
        assert_eq!(d.affected_by(&count_only), Affected::Rerun);

        let mut other = ChangeSet::default();
        other.add_rows(table_key("aux", "t"));
        assert_eq!(d.affected_by(&other), Affected::Unaffected);
        other.schemas.insert("main".into());
        assert_eq!(d.affected_by(&other), Affected::Rerun);
    }

    #[test]
    fn overflow_depends_on_everything() {
        assert!(Dependencies::from_events(&[], true).is_all());
        assert_eq!(Dependencies::All.affected_by(&ChangeSet::default()), Affected::Rerun);
    }
}
