//! The change tracker's tests: what a writer job publishes, on a real database file.

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
    let conn = &db.conn().conn;
    // SAFETY: removed below, before `hooks` drops.
    unsafe { recording::install(conn, &hooks, true) };
    db.exec(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) INSERT INTO b SELECT i FROM n",
    );
    let entries = hooks.tracker.borrow().committed.len();
    hooks.tracker.borrow_mut().committed.clear();
    // Rows alternating between two tables each start an entry: none is lost to the other.
    db.exec("INSERT INTO a VALUES (1), (2), (3)");
    let alternating = hooks.tracker.borrow().committed.len();
    unsafe { recording::install(conn, &hooks, false) };
    assert_eq!(entries, 1, "100 INSERTed rows make one entry");
    assert_eq!(alternating, 6);
}
