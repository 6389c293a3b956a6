//! The authorizer callback, installed on every connection: it records what each statement
//! reads, writes, and does to savepoints and the schema while SQLite compiles it. SQLite calls
//! it at prepare time only (and again when it re-prepares a statement after a schema change),
//! so it costs nothing per execution.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

use sqlite3mc_sys as ffi;

use crate::error::{code, DbError};
use crate::sqlite::setup::Role;

/// Events kept per statement; beyond this the statement depends on everything.
pub const MAX_EVENTS: usize = 4096;

/// One authorizer call worth remembering; names as SQLite spells them.
pub struct AuthEvent {
    pub action: c_int,
    /// Schema name ("main", "temp", an attached name); empty when SQLite gives none.
    pub db: Box<str>,
    pub arg1: Box<str>,
    pub arg2: Box<str>,
}

/// What a statement does besides reading and writing rows, learned as it compiles.
#[derive(Clone, Copy, Default)]
pub struct StatementKind {
    /// BEGIN, COMMIT, END or ROLLBACK.
    pub transaction_control: bool,
    /// SAVEPOINT, RELEASE or ROLLBACK TO.
    pub savepoint: bool,
    /// `PRAGMA journal_mode` given a mode other than WAL, which readers beside the writer need:
    /// refused in a user's statement (worker.rs `leaves_wal_refused`), not in the library's own
    /// (a rekey leaves WAL for its copy and comes back), which this authorizer also sees.
    pub leaves_wal: bool,
    /// A PRAGMA that changes a setting (one given a value, other than the queries that take an
    /// argument).
    pub sets_pragma: bool,
    /// `PRAGMA journal_mode` without a value: it only reads the mode, but SQLite's
    /// `sqlite3_stmt_readonly` says no (its opcode, OP_JournalMode, may change the mode).
    pub reads_journal_mode: bool,
}

impl StatementKind {
    /// Inside a transaction body it would begin or end a transaction or a level of one behind
    /// the library's back: BEGIN, COMMIT, END, ROLLBACK, and every savepoint statement. A
    /// user's own savepoint is refused too: a RELEASE or ROLLBACK TO of it also ends the
    /// library's levels opened after it, so a nested level that rejects could commit (issue 43).
    pub fn ends_a_level(&self) -> bool {
        self.transaction_control || self.savepoint
    }
}

pub struct Capture {
    role: Role,
    pub events: Vec<AuthEvent>,
    /// More than MAX_EVENTS events: treat the statement as reading/writing everything.
    pub overflow: bool,
    /// Refuse every compilation (a write running on the JS thread must run the program it was
    /// judged by, not one SQLite re-prepares after a schema change: js_thread/runs.rs).
    pub deny: bool,
    /// A compilation was refused since `deny` was set.
    pub denied: bool,
    /// A PRAGMA of a setting the JS thread's commits keep (`COMMIT_PRAGMAS`) was compiled since
    /// this was last taken: SQLite may apply it as it compiles it.
    pub commit_pragma: bool,
    /// Something was compiled here that makes a read on this connection differ from one on a
    /// reader's: a temp table, view, index or trigger, an ATTACH or DETACH, or a PRAGMA that
    /// changes what a query returns. Never cleared: reads outside transactions then stay off
    /// the writer's connection (experiments/040).
    pub diverged: bool,
    /// The statement compiled since `clear` calls a function that returns this connection's
    /// own state (`last_insert_rowid()`, `changes()`, `total_changes()`).
    pub connection_state: bool,
    /// Set while a read's statement compiles: a PRAGMA that changes a setting is refused then,
    /// since SQLite applies it as it compiles it, to this one connection (`refuses`).
    pub reading: bool,
    /// What the statements compiled since `clear` do to transactions and settings.
    pub kind: StatementKind,
    /// Why the authorizer refused the last compilation it refused (taken by `take_refusal`).
    pub refusal: Option<DbError>,
}

impl Capture {
    pub fn new(role: Role) -> Capture {
        Capture {
            role,
            events: Vec::new(),
            overflow: false,
            deny: false,
            denied: false,
            commit_pragma: false,
            diverged: false,
            connection_state: false,
            reading: false,
            kind: StatementKind::default(),
            refusal: None,
        }
    }

    pub fn clear(&mut self) {
        self.events.clear();
        self.overflow = false;
        self.connection_state = false;
        self.kind = StatementKind::default();
        self.refusal = None;
    }

    fn wants(&self, action: c_int) -> bool {
        match self.role {
            Role::Reader => action == ffi::SQLITE_READ,
            Role::Writer => is_write(action) || action == ffi::SQLITE_SAVEPOINT || is_schema_change(action),
        }
    }
}

pub fn is_write(action: c_int) -> bool {
    matches!(action, ffi::SQLITE_INSERT | ffi::SQLITE_UPDATE | ffi::SQLITE_DELETE)
}

/// CREATE/DROP of tables, indexes, views, triggers (codes 1–17 but DELETE), virtual tables,
/// and ALTER TABLE.
pub fn is_schema_change(action: c_int) -> bool {
    ((ffi::SQLITE_CREATE_INDEX..=17).contains(&action) && action != ffi::SQLITE_DELETE)
        || action == ffi::SQLITE_ALTER_TABLE
        || (29..=ffi::SQLITE_DROP_VTABLE).contains(&action)
}

/// PRAGMAs whose setting changes what a query returns (its rows, their order, its column
/// names, or which functions a schema may call).
const RESULT_PRAGMAS: &[&str] = &[
    "case_sensitive_like",
    "reverse_unordered_selects",
    "full_column_names",
    "short_column_names",
    "trusted_schema",
    "writable_schema",
];

/// PRAGMAs whose settings a commit on the JS thread reads once and keeps (worker.rs
/// `commit_settings`): whether a commit syncs, and when a checkpoint is due. Others,
/// such as the `wal_checkpoint` a reset runs, leave them standing: reading them again costs
/// the next commit a PRAGMA's compile, about 6 µs (experiments/067).
const COMMIT_PRAGMAS: &[&str] = &["synchronous", "journal_mode", "wal_autocheckpoint"];

/// PRAGMAs that take an argument and only report (`PRAGMA table_info(t)`): any other PRAGMA
/// given a value changes a setting.
const QUERY_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_info",
    "index_xinfo",
    "index_list",
    "foreign_key_list",
    "foreign_key_check",
    "integrity_check",
    "quick_check",
];

/// SQLite3 Multiple Ciphers' PRAGMAs that key or rekey a connection. Refused everywhere: the
/// key is set by `Database.open` on every connection alike, and changed by `rekey`, whose
/// copy-and-rename survives a crash (sqlite/encryption.rs); through SQL it would change one
/// connection's key, in place.
const KEY_PRAGMAS: &[&str] = &["key", "hexkey", "textkey", "rekey", "hexrekey", "textrekey"];

fn is_one_of(name: &str, list: &[&str]) -> bool {
    list.iter().any(|l| l.eq_ignore_ascii_case(name))
}

/// Why a PRAGMA is refused as it compiles, if it is: a key PRAGMA always, a setting in a read.
fn refused_pragma(name: &str, sets: bool, reading: bool) -> Option<DbError> {
    if is_one_of(name, KEY_PRAGMAS) {
        return Some(DbError::new(
            code::ERR_KEY_PRAGMA,
            format!(
                "PRAGMA {name} is refused: the key is given to Database.open({{ key }}) and changed with db.rekey(), \
                 which re-encrypts every connection's database safely"
            ),
        ));
    }
    if reading && sets {
        return Some(DbError::new(
            code::ERR_NOT_READ_ONLY,
            format!(
                "select cannot change a setting (PRAGMA {name} with a value): it would change one read \
                 connection's alone; use execute(), which runs it on the writer's connection"
            ),
        ));
    }
    None
}

/// Functions whose result is the connection's own state.
const CONNECTION_STATE_FUNCTIONS: &[&str] = &["last_insert_rowid", "changes", "total_changes"];

/// Whether `action` makes this connection's reads differ from a reader's (see `diverged`).
///
/// # Safety
/// The authorizer's arguments: NUL-terminated strings or null.
unsafe fn diverges(action: c_int, arg1: *const c_char, arg2: *const c_char, db: *const c_char) -> bool {
    let is = |p: *const c_char, list: &[&str]| {
        !p.is_null() && CStr::from_ptr(p).to_str().is_ok_and(|s| list.iter().any(|l| l.eq_ignore_ascii_case(s)))
    };
    match action {
        ffi::SQLITE_CREATE_TEMP_INDEX..=ffi::SQLITE_CREATE_TEMP_VIEW | ffi::SQLITE_ATTACH | ffi::SQLITE_DETACH => true,
        ffi::SQLITE_CREATE_VTABLE => is(db, &["temp"]),
        ffi::SQLITE_PRAGMA => !arg2.is_null() && is(arg1, RESULT_PRAGMAS),
        _ => false,
    }
}

fn text(p: *const c_char) -> Box<str> {
    if p.is_null() {
        "".into()
    } else {
        // SAFETY: SQLite passes NUL-terminated strings valid for the call.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into()
    }
}

/// The authorizer. Allows and records, unless the capture denies everything for now.
///
/// SAFETY: `user` is the connection's `RefCell<Capture>`, alive as long as the connection;
/// SQLite calls this on the connection's thread while no Rust borrow of it is held.
pub unsafe extern "C" fn authorize(
    user: *mut c_void,
    action: c_int,
    arg1: *const c_char,
    arg2: *const c_char,
    db: *const c_char,
    _trigger_or_view: *const c_char,
) -> c_int {
    let cell = &*(user as *const std::cell::RefCell<Capture>);
    let Ok(mut capture) = cell.try_borrow_mut() else { return ffi::SQLITE_OK };
    if capture.deny {
        capture.denied = true;
        return ffi::SQLITE_DENY;
    }
    match action {
        ffi::SQLITE_PRAGMA => {
            let name = if arg1.is_null() { "" } else { CStr::from_ptr(arg1).to_str().unwrap_or("") };
            capture.commit_pragma |= is_one_of(name, COMMIT_PRAGMAS);
            let sets = !arg2.is_null() && !is_one_of(name, QUERY_PRAGMAS);
            if let Some(refusal) = refused_pragma(name, sets, capture.reading) {
                capture.refusal = Some(refusal);
                return ffi::SQLITE_DENY;
            }
            capture.kind.sets_pragma |= sets;
            capture.kind.leaves_wal |= name.eq_ignore_ascii_case("journal_mode")
                && !arg2.is_null()
                && !CStr::from_ptr(arg2).to_bytes().eq_ignore_ascii_case(b"wal");
            capture.kind.reads_journal_mode |= arg2.is_null() && name.eq_ignore_ascii_case("journal_mode");
        }
        ffi::SQLITE_TRANSACTION => capture.kind.transaction_control = true,
        ffi::SQLITE_SAVEPOINT => capture.kind.savepoint = true,
        ffi::SQLITE_FUNCTION if !arg2.is_null() => {
            let name = CStr::from_ptr(arg2).to_str().unwrap_or("");
            capture.connection_state |= CONNECTION_STATE_FUNCTIONS.iter().any(|f| f.eq_ignore_ascii_case(name));
        }
        _ => {}
    }
    capture.diverged |= diverges(action, arg1, arg2, db);
    if !capture.wants(action) {
        return ffi::SQLITE_OK;
    }
    if capture.events.len() >= MAX_EVENTS {
        capture.overflow = true;
        return ffi::SQLITE_OK;
    }
    capture.events.push(AuthEvent { action, db: text(db), arg1: text(arg1), arg2: text(arg2) });
    ffi::SQLITE_OK
}
