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
//! built-ins make it unbounded.

use std::os::raw::c_int;

use sqlite3mc_sys as ffi;

use super::connection::Connection;
use super::step::step;
use crate::error::DbResult;

/// Opcodes whose own work is bounded (a jump's target is checked apart).
const BOUNDED: &[&str] = &[
    "Init",
    "Goto",
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
    "NotExists",
    "SeekRowid",
    "NotNull",
    "IsNull",
    "MustBeInt",
    "Noop",
    "Column",
    "Rowid",
    "IdxRowid",
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
    "IsType",
    "Eq",
    "Ne",
    "Lt",
    "Le",
    "Gt",
    "Ge",
    "ElseEq",
    "If",
    "IfNot",
    "IfPos",
    "Once",
    "Cast",
    "FkCounter",
    "FkIfZero",
    "AddImm",
    "MemMax",
    "ZeroOrNull",
    "IfNullRow",
    "NullRow",
    "CollSeq",
    "Compare",
    "Jump",
    "Permutation",
    "ReleaseReg",
    "CursorHint",
    "Gosub",
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

/// Opcodes whose P2 is a jump target (`Jump` has three: P1, P2, P3).
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
        if !BOUNDED.contains(&opcode.as_str()) {
            return Ok(false);
        }
        if opcode == "Function" || opcode == "PureFunc" {
            let p4 = unsafe { text(raw, 5) };
            let name = p4.split('(').next().unwrap_or_default();
            if !BOUNDED_FUNCTIONS.contains(&name.to_ascii_lowercase().as_str()) {
                return Ok(false);
            }
        }
        if opcode == "Init" {
            start_up = p2;
            continue;
        }
        let back = |target: c_int| target != 0 && target <= addr;
        let into_program = opcode == "Goto" && addr >= start_up && p2 == 1;
        if JUMPS.contains(&opcode.as_str()) && back(p2) && !into_program {
            return Ok(false);
        }
        if opcode == "Jump" && (back(p1) || back(p3)) {
            return Ok(false);
        }
    }
    Ok(true)
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
