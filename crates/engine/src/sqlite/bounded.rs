//! Whether a write does a bounded amount of work whatever the data, read from its program
//! (experiments/036): a transaction's write may then run on the JS thread, where it cannot be
//! stopped half-way (interrupting a write inside a transaction rolls the whole transaction back).
//!
//! A program is bounded when, as EXPLAIN lists it, it has no loop — every jump goes forward,
//! except the one every program makes from its start-up code back to its first instruction —
//! and each of its opcodes does work bounded by the depth of a b-tree and the size of the
//! values it handles: a row looked up by key or unique index, inserted, updated or deleted,
//! with its indexes, foreign-key checks and constraint checks. A trigger (its own program), a
//! scan, a sort, a virtual table, schema changes and functions outside a short list of
//! built-ins and the database's JavaScript functions make it unbounded.

use std::os::raw::c_int;

use sqlite3mc_sys as ffi;

use super::connection::Connection;
use super::step::step;
use crate::error::DbResult;

/// Opcodes that do not jump and whose own work is bounded.
const STEPS: &[&str] = &[
    "Init",
    "Halt",
    "HaltIfNull",
    "Transaction",
    "TableLock",
    "OpenWrite",
    "OpenRead",
    "Close",
    "Null",
    "SoftNull",
    "Integer",
    "Int64",
    "Real",
    "String8",
    "String",
    "Blob",
    "Variable",
    "Move",
    "Copy",
    "SCopy",
    "IntCopy",
    "Affinity",
    "TypeCheck",
    "RealAffinity",
    "MakeRecord",
    "NewRowid",
    "Insert",
    "IdxInsert",
    "Delete",
    "IdxDelete",
    "Noop",
    "Column",
    "Rowid",
    "IdxRowid",
    "DeferredSeek",
    "FinishSeek",
    "Add",
    "Subtract",
    "Multiply",
    "Divide",
    "Remainder",
    "Concat",
    "BitAnd",
    "BitOr",
    "ShiftLeft",
    "ShiftRight",
    "BitNot",
    "Not",
    "And",
    "Or",
    "IsTrue",
    "Cast",
    "FkCounter",
    "AddImm",
    "MemMax",
    "ZeroOrNull",
    "NullRow",
    "CollSeq",
    "Compare",
    "Permutation",
    "ReleaseReg",
    "CursorHint",
    "BeginSubrtn",
    "Return",
    "Function",
    "PureFunc",
];

/// Built-in functions whose work grows with their arguments only (bound values are limited
/// in size before a write runs on the JS thread).
const BOUNDED_FUNCTIONS: &[&str] = &[
    "date",
    "time",
    "datetime",
    "julianday",
    "unixepoch",
    "strftime",
    "abs",
    "round",
    "lower",
    "upper",
    "length",
    "octet_length",
    "typeof",
    "coalesce",
    "ifnull",
    "iif",
    "nullif",
    "max",
    "min",
    "substr",
    "substring",
    "trim",
    "ltrim",
    "rtrim",
    "instr",
    "hex",
    "quote",
    "random",
    "changes",
    "last_insert_rowid",
    "sign",
    "likely",
    "unlikely",
    "likelihood",
    "json",
    "json_quote",
    "json_array",
    "json_object",
];

/// Opcodes that jump, to P2 (`Jump` to P1, P2 or P3), and whose own work is bounded.
const JUMPS: &[&str] = &[
    "Goto",
    "Gosub",
    "If",
    "IfNot",
    "IfPos",
    "NotNull",
    "IsNull",
    "NotExists",
    "SeekRowid",
    "MustBeInt",
    "NoConflict",
    "Found",
    "NotFound",
    "SeekGE",
    "SeekGT",
    "SeekLE",
    "SeekLT",
    "IdxGT",
    "IdxGE",
    "IdxLT",
    "IdxLE",
    "Eq",
    "Ne",
    "Lt",
    "Le",
    "Gt",
    "Ge",
    "ElseEq",
    "Once",
    "FkIfZero",
    "IfNullRow",
    "IsType",
    "Jump",
];

/// Whether `sql`'s program (as it compiles now) is bounded: see the module's comment.
pub fn is_bounded(conn: &Connection, sql: &str) -> DbResult<bool> {
    let Some((stmt, _)) = conn.prepare_at(format!("EXPLAIN {sql}").as_bytes(), 0)? else { return Ok(false) };
    let raw = stmt.0;
    // Init's target: the start-up code at the program's end, which jumps back to address 1.
    let mut start_up = c_int::MAX;
    while step(conn, raw)? {
        // SAFETY: the statement is on a row of EXPLAIN's eight columns.
        let (addr, p1, p2, p3) = unsafe {
            let int = |i| ffi::sqlite3_column_int64(raw, i) as c_int;
            (int(0), int(2), int(3), int(4))
        };
        let opcode = unsafe { text(raw, 1) };
        let jumps = JUMPS.contains(&opcode.as_str());
        if !jumps && !STEPS.contains(&opcode.as_str()) {
            return Ok(false);
        }
        if opcode == "Function" || opcode == "PureFunc" {
            let p4 = unsafe { text(raw, 5) };
            let name = p4.split('(').next().unwrap_or_default();
            // A JavaScript function's own time is the caller's (docs/api.md "Functions"); called
            // from a program without loops, it is called a bounded number of times.
            if !BOUNDED_FUNCTIONS.contains(&name.to_ascii_lowercase().as_str()) && !conn.is_js_function(name) {
                return Ok(false);
            }
        }
        if opcode == "Init" {
            start_up = p2;
            continue;
        }
        let back = |target: c_int| target != 0 && target <= addr;
        let into_program = opcode == "Goto" && addr >= start_up && p2 == 1;
        if jumps && back(p2) && !into_program {
            return Ok(false);
        }
        if opcode == "Jump" && (back(p1) || back(p3)) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether `sql`'s program (as it compiles now) calls one of the database's JavaScript
/// functions: a scalar, an aggregate or a window function (its name is in the opcode's P4).
pub fn calls_js_function(conn: &Connection, sql: &str) -> DbResult<bool> {
    let Some((stmt, _)) = conn.prepare_at(format!("EXPLAIN {sql}").as_bytes(), 0)? else { return Ok(false) };
    while step(conn, stmt.0)? {
        // SAFETY: the statement is on a row of EXPLAIN's eight columns.
        let p4 = unsafe { text(stmt.0, 5) };
        if let Some((name, _)) = p4.split_once('(') {
            if conn.is_js_function(name) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Column `i` of the current row as text ("" for NULL).
///
/// # Safety
/// `stmt` is on a row with at least `i + 1` columns.
unsafe fn text(stmt: *mut ffi::sqlite3_stmt, i: c_int) -> String {
    let p = ffi::sqlite3_column_text(stmt, i);
    if p.is_null() {
        return String::new();
    }
    std::ffi::CStr::from_ptr(p as _).to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqlite::setup::Role;
    use crate::testing::{Opened, TempDb};

    /// Tables for every case: `t` with an index and a UNIQUE column, a FK parent whose children
    /// have no index on their key (a delete checks them by scan), one with a trigger, and one
    /// with AUTOINCREMENT.
    const SCHEMA: &str = "
        CREATE TABLE t (id INTEGER PRIMARY KEY, u TEXT UNIQUE, k INTEGER, n INTEGER, b BLOB);
        CREATE INDEX t_k ON t (k);
        CREATE TABLE parent (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent (id));
        CREATE TABLE trig (id INTEGER PRIMARY KEY, v);
        CREATE TABLE trig_log (v);
        CREATE TRIGGER trig_ins AFTER INSERT ON trig BEGIN INSERT INTO trig_log VALUES (new.v); END;
        CREATE TABLE auto (id INTEGER PRIMARY KEY AUTOINCREMENT, v);
    ";

    /// A writer connection on a fresh file with SCHEMA (the file is removed when it drops).
    struct Db {
        db: Opened,
        _file: TempDb,
    }

    fn open() -> Db {
        let file = TempDb::new("bounded");
        let db = Opened::open(file.as_str(), Role::Writer);
        db.exec(SCHEMA).unwrap_or_else(|e| panic!("schema: {}", e.message));
        Db { db, _file: file }
    }

    /// EXPLAIN's listing of `sql`, one opcode per line, for a failed case's message.
    fn listing(conn: &Connection, sql: &str) -> String {
        let (stmt, _) = conn.prepare_at(format!("EXPLAIN {sql}").as_bytes(), 0).unwrap().unwrap();
        let mut out = String::new();
        while step(conn, stmt.0).unwrap() {
            // SAFETY: the statement is on a row of EXPLAIN's eight columns.
            let cols: Vec<String> = (0..6).map(|i| unsafe { text(stmt.0, i) }).collect();
            out.push_str(&format!("\n  {}", cols.join(" ")));
        }
        out
    }

    fn judged(db: &Db, sql: &str) -> bool {
        is_bounded(&db.db.conn, sql).unwrap_or_else(|e| panic!("{sql}: {}", e.message))
    }

    fn assert_judged(expected: bool, cases: &[&str]) {
        let db = open();
        for sql in cases {
            assert_eq!(judged(&db, sql), expected, "{sql}: bounded should be {expected}{}", listing(&db.db.conn, sql));
        }
    }

    #[test]
    fn keyed_writes_are_bounded() {
        assert_judged(
            true,
            &[
                "INSERT INTO t (u, k, n) VALUES (?, ?, ?)",
                "UPDATE t SET n = ? WHERE id = ?",
                "UPDATE t SET n = ?, k = ? WHERE u = ?",
                "DELETE FROM t WHERE id = ?",
                "INSERT INTO t (u, k, n) VALUES (?, ?, unixepoch())",
                "INSERT INTO t (id, u, n) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET n = excluded.n",
                "INSERT OR REPLACE INTO t (id, u, k) VALUES (?, ?, ?)",
                "INSERT INTO child (parent_id) VALUES (?)",
            ],
        );
    }

    #[test]
    fn scans_loops_triggers_and_schema_changes_are_not_bounded() {
        assert_judged(
            false,
            &[
                "UPDATE t SET n = ?",
                "DELETE FROM t",
                "UPDATE t SET k = ? WHERE n = ?",
                "DELETE FROM t WHERE n = ?",
                "INSERT INTO t (u, k, n) SELECT u || 'x', k, n FROM t",
                "INSERT INTO t (u, k) VALUES (?, ?), (?, ?), (?, ?)",
                "INSERT INTO trig (v) VALUES (?)",
                "INSERT INTO auto (v) VALUES (?)",
                "CREATE TABLE more (id INTEGER PRIMARY KEY)",
                "CREATE INDEX t_n ON t (n)",
                "DROP TABLE trig_log",
                "INSERT INTO t (u, b) VALUES (?, randomblob(?))",
                "INSERT INTO t (u, b) VALUES (?, zeroblob(?))",
                "DELETE FROM parent WHERE id = ?",
                "UPDATE parent SET id = ? WHERE id = ?",
                "INSERT OR REPLACE INTO parent (id, name) VALUES (?, ?)",
            ],
        );
    }

    #[test]
    fn a_trigger_created_later_makes_the_same_statement_unbounded() {
        let db = open();
        let sql = "UPDATE t SET n = ? WHERE id = ?";
        assert!(judged(&db, sql));
        db.db.exec("CREATE TRIGGER t_upd AFTER UPDATE ON t BEGIN SELECT 1; END").unwrap();
        assert!(!judged(&db, sql), "{}", listing(&db.db.conn, sql));
    }

    #[test]
    fn an_unknown_table_is_an_error() {
        let db = open();
        let err = is_bounded(&db.db.conn, "INSERT INTO missing VALUES (1)").expect_err("an unknown table is an error");
        assert!(err.message.contains("missing"), "{}", err.message);
    }
}
