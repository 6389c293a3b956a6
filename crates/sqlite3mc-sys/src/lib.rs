//! Hand-written declarations for the part of the SQLite C API resqlite uses.
//! Signatures follow sqlite3.h of the pinned SQLite3 Multiple Ciphers release.
#![allow(non_camel_case_types, non_snake_case)]

use std::os::raw::{c_char, c_int, c_uchar, c_void};

#[repr(C)]
pub struct sqlite3 {
    _private: [u8; 0],
}
#[repr(C)]
pub struct sqlite3_stmt {
    _private: [u8; 0],
}

#[repr(C)]
pub struct sqlite3_value {
    _private: [u8; 0],
}

pub type sqlite3_destructor_type = Option<unsafe extern "C" fn(*mut c_void)>;

pub const SQLITE_OK: c_int = 0;
pub const SQLITE_ERROR: c_int = 1;
pub const SQLITE_INTERNAL: c_int = 2;
pub const SQLITE_ABORT: c_int = 4;
pub const SQLITE_BUSY: c_int = 5;
pub const SQLITE_LOCKED: c_int = 6;
pub const SQLITE_NOMEM: c_int = 7;
pub const SQLITE_READONLY: c_int = 8;
pub const SQLITE_INTERRUPT: c_int = 9;
pub const SQLITE_CANTOPEN: c_int = 14;
pub const SQLITE_MISUSE: c_int = 21;
pub const SQLITE_RANGE: c_int = 25;
pub const SQLITE_NOTADB: c_int = 26;
pub const SQLITE_ROW: c_int = 100;
pub const SQLITE_DONE: c_int = 101;

pub const SQLITE_INTEGER: c_int = 1;
pub const SQLITE_FLOAT: c_int = 2;
pub const SQLITE_TEXT: c_int = 3;
pub const SQLITE_BLOB: c_int = 4;
pub const SQLITE_NULL: c_int = 5;

pub const SQLITE_OPEN_READONLY: c_int = 0x0000_0001;
pub const SQLITE_OPEN_READWRITE: c_int = 0x0000_0002;
pub const SQLITE_OPEN_CREATE: c_int = 0x0000_0004;
pub const SQLITE_OPEN_URI: c_int = 0x0000_0040;
pub const SQLITE_OPEN_NOMUTEX: c_int = 0x0000_8000;
pub const SQLITE_OPEN_EXRESCODE: c_int = 0x0200_0000;

pub const SQLITE_PREPARE_PERSISTENT: u32 = 0x01;

pub const SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION: c_int = 1005;
pub const SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE: c_int = 1006;
pub const SQLITE_DBCONFIG_DEFENSIVE: c_int = 1010;
pub const SQLITE_DBCONFIG_TRUSTED_SCHEMA: c_int = 1017;

/// `SQLITE_TRANSIENT`: SQLite copies the bound bytes before the bind call returns.
pub fn sqlite_transient() -> sqlite3_destructor_type {
    // SAFETY: SQLite defines SQLITE_TRANSIENT as the destructor pointer value -1; it is
    // compared, never called.
    Some(unsafe { std::mem::transmute::<isize, unsafe extern "C" fn(*mut c_void)>(-1) })
}

extern "C" {
    pub fn sqlite3_libversion() -> *const c_char;
    pub fn sqlite3_open_v2(
        filename: *const c_char,
        pp_db: *mut *mut sqlite3,
        flags: c_int,
        z_vfs: *const c_char,
    ) -> c_int;
    pub fn sqlite3_close_v2(db: *mut sqlite3) -> c_int;
    /// The registered VFS of this name (null: none). Its struct is opaque here: resqlite only
    /// asks whether it exists.
    pub fn sqlite3_vfs_find(name: *const c_char) -> *mut c_void;
    pub fn sqlite3_db_config(db: *mut sqlite3, op: c_int, ...) -> c_int;
    pub fn sqlite3_busy_timeout(db: *mut sqlite3, ms: c_int) -> c_int;
    pub fn sqlite3_extended_result_codes(db: *mut sqlite3, onoff: c_int) -> c_int;
    pub fn sqlite3_interrupt(db: *mut sqlite3);
    pub fn sqlite3_progress_handler(
        db: *mut sqlite3,
        n_ops: c_int,
        callback: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
        arg: *mut c_void,
    );
    pub fn sqlite3_get_autocommit(db: *mut sqlite3) -> c_int;
    pub fn sqlite3_exec(
        db: *mut sqlite3,
        sql: *const c_char,
        callback: Option<unsafe extern "C" fn(*mut c_void, c_int, *mut *mut c_char, *mut *mut c_char) -> c_int>,
        arg: *mut c_void,
        errmsg: *mut *mut c_char,
    ) -> c_int;
    pub fn sqlite3_free(p: *mut c_void);

    pub fn sqlite3_errmsg(db: *mut sqlite3) -> *const c_char;
    pub fn sqlite3_errstr(code: c_int) -> *const c_char;
    pub fn sqlite3_extended_errcode(db: *mut sqlite3) -> c_int;
    pub fn sqlite3_error_offset(db: *mut sqlite3) -> c_int;

    pub fn sqlite3_changes64(db: *mut sqlite3) -> i64;
    pub fn sqlite3_total_changes64(db: *mut sqlite3) -> i64;
    pub fn sqlite3_last_insert_rowid(db: *mut sqlite3) -> i64;
    pub fn sqlite3_set_last_insert_rowid(db: *mut sqlite3, rowid: i64);

    pub fn sqlite3_prepare_v3(
        db: *mut sqlite3,
        sql: *const c_char,
        n_byte: c_int,
        prep_flags: u32,
        pp_stmt: *mut *mut sqlite3_stmt,
        pz_tail: *mut *const c_char,
    ) -> c_int;
    pub fn sqlite3_finalize(stmt: *mut sqlite3_stmt) -> c_int;
    pub fn sqlite3_reset(stmt: *mut sqlite3_stmt) -> c_int;
    pub fn sqlite3_clear_bindings(stmt: *mut sqlite3_stmt) -> c_int;
    /// The SQL with its bound values in place (free with sqlite3_free).
    pub fn sqlite3_expanded_sql(stmt: *mut sqlite3_stmt) -> *mut c_char;
    pub fn sqlite3_step(stmt: *mut sqlite3_stmt) -> c_int;
    pub fn sqlite3_stmt_readonly(stmt: *mut sqlite3_stmt) -> c_int;

    pub fn sqlite3_bind_parameter_count(stmt: *mut sqlite3_stmt) -> c_int;
    pub fn sqlite3_bind_parameter_name(stmt: *mut sqlite3_stmt, idx: c_int) -> *const c_char;
    pub fn sqlite3_bind_null(stmt: *mut sqlite3_stmt, idx: c_int) -> c_int;
    pub fn sqlite3_bind_int64(stmt: *mut sqlite3_stmt, idx: c_int, value: i64) -> c_int;
    pub fn sqlite3_bind_double(stmt: *mut sqlite3_stmt, idx: c_int, value: f64) -> c_int;
    pub fn sqlite3_bind_text64(
        stmt: *mut sqlite3_stmt,
        idx: c_int,
        value: *const c_char,
        n: u64,
        destructor: sqlite3_destructor_type,
        encoding: c_uchar,
    ) -> c_int;
    pub fn sqlite3_bind_blob64(
        stmt: *mut sqlite3_stmt,
        idx: c_int,
        value: *const c_void,
        n: u64,
        destructor: sqlite3_destructor_type,
    ) -> c_int;

    pub fn sqlite3_column_count(stmt: *mut sqlite3_stmt) -> c_int;
    pub fn sqlite3_column_name(stmt: *mut sqlite3_stmt, idx: c_int) -> *const c_char;
    pub fn sqlite3_column_decltype(stmt: *mut sqlite3_stmt, idx: c_int) -> *const c_char;
    pub fn sqlite3_column_type(stmt: *mut sqlite3_stmt, idx: c_int) -> c_int;
    pub fn sqlite3_column_int64(stmt: *mut sqlite3_stmt, idx: c_int) -> i64;
    pub fn sqlite3_column_double(stmt: *mut sqlite3_stmt, idx: c_int) -> f64;
    pub fn sqlite3_column_text(stmt: *mut sqlite3_stmt, idx: c_int) -> *const c_uchar;
    pub fn sqlite3_column_blob(stmt: *mut sqlite3_stmt, idx: c_int) -> *const c_void;
    pub fn sqlite3_column_bytes(stmt: *mut sqlite3_stmt, idx: c_int) -> c_int;
    pub fn sqlite3_column_value(stmt: *mut sqlite3_stmt, idx: c_int) -> *mut sqlite3_value;

    pub fn sqlite3_value_type(value: *mut sqlite3_value) -> c_int;
    pub fn sqlite3_value_int64(value: *mut sqlite3_value) -> i64;
    pub fn sqlite3_value_double(value: *mut sqlite3_value) -> f64;
    pub fn sqlite3_value_text(value: *mut sqlite3_value) -> *const c_uchar;
    pub fn sqlite3_value_blob(value: *mut sqlite3_value) -> *const c_void;
    pub fn sqlite3_value_bytes(value: *mut sqlite3_value) -> c_int;

    // SQLite3 Multiple Ciphers (sqlite3mc_amalgamation.h, "Definition of API functions").
    /// Sets the key of database `z_db_name` right after open; `n_key` bytes of `p_key`.
    pub fn sqlite3_key_v2(db: *mut sqlite3, z_db_name: *const c_char, p_key: *const c_void, n_key: c_int) -> c_int;
    /// Re-encrypts database `z_db_name` with a new key (null/0: decrypts it).
    pub fn sqlite3_rekey_v2(db: *mut sqlite3, z_db_name: *const c_char, p_key: *const c_void, n_key: c_int) -> c_int;
    /// The cipher's index for `sqlite3mc_config(db, "cipher", index)`; -1 if unknown.
    pub fn sqlite3mc_cipher_index(cipher_name: *const c_char) -> c_int;
    /// Connection-level setting (e.g. "cipher"); returns the value now in effect, -1 on error.
    pub fn sqlite3mc_config(db: *mut sqlite3, param_name: *const c_char, new_value: c_int) -> c_int;
    /// A cipher's parameter on one connection; returns the value now in effect, -1 on error.
    pub fn sqlite3mc_config_cipher(
        db: *mut sqlite3,
        cipher_name: *const c_char,
        param_name: *const c_char,
        new_value: c_int,
    ) -> c_int;
}

pub const SQLITE_UTF8: c_uchar = 1;

// Application-defined SQL functions (sqlite.org/c3ref/create_function.html).

#[repr(C)]
pub struct sqlite3_context {
    _private: [u8; 0],
}

pub const SQLITE_DETERMINISTIC: c_int = 0x0000_0800;
pub const SQLITE_DIRECTONLY: c_int = 0x0008_0000;
pub const SQLITE_INNOCUOUS: c_int = 0x0020_0000;

pub type sqlite3_scalar_fn = Option<unsafe extern "C" fn(*mut sqlite3_context, c_int, *mut *mut sqlite3_value)>;
pub type sqlite3_final_fn = Option<unsafe extern "C" fn(*mut sqlite3_context)>;

extern "C" {
    pub fn sqlite3_create_function_v2(
        db: *mut sqlite3,
        name: *const c_char,
        n_arg: c_int,
        text_rep: c_int,
        app: *mut c_void,
        x_func: sqlite3_scalar_fn,
        x_step: sqlite3_scalar_fn,
        x_final: sqlite3_final_fn,
        x_destroy: sqlite3_destructor_type,
    ) -> c_int;
    pub fn sqlite3_create_window_function(
        db: *mut sqlite3,
        name: *const c_char,
        n_arg: c_int,
        text_rep: c_int,
        app: *mut c_void,
        x_step: sqlite3_scalar_fn,
        x_final: sqlite3_final_fn,
        x_value: sqlite3_final_fn,
        x_inverse: sqlite3_scalar_fn,
        x_destroy: sqlite3_destructor_type,
    ) -> c_int;
    pub fn sqlite3_user_data(ctx: *mut sqlite3_context) -> *mut c_void;
    pub fn sqlite3_aggregate_context(ctx: *mut sqlite3_context, n_bytes: c_int) -> *mut c_void;
    pub fn sqlite3_result_null(ctx: *mut sqlite3_context);
    pub fn sqlite3_result_int64(ctx: *mut sqlite3_context, value: i64);
    pub fn sqlite3_result_double(ctx: *mut sqlite3_context, value: f64);
    pub fn sqlite3_result_text64(
        ctx: *mut sqlite3_context,
        value: *const c_char,
        n: u64,
        destructor: sqlite3_destructor_type,
        encoding: c_uchar,
    );
    pub fn sqlite3_result_blob64(
        ctx: *mut sqlite3_context,
        value: *const c_void,
        n: u64,
        destructor: sqlite3_destructor_type,
    );
    pub fn sqlite3_result_error(ctx: *mut sqlite3_context, message: *const c_char, n: c_int);
}

// Extensions, online backup and serialization.

#[repr(C)]
pub struct sqlite3_backup {
    _private: [u8; 0],
}

extern "C" {
    /// Loads an extension library; needs SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION on. On failure
    /// `*errmsg` holds a message to free with sqlite3_free.
    pub fn sqlite3_load_extension(
        db: *mut sqlite3,
        file: *const c_char,
        entry_point: *const c_char,
        errmsg: *mut *mut c_char,
    ) -> c_int;
    pub fn sqlite3_backup_init(
        dest: *mut sqlite3,
        dest_name: *const c_char,
        source: *mut sqlite3,
        source_name: *const c_char,
    ) -> *mut sqlite3_backup;
    pub fn sqlite3_backup_step(backup: *mut sqlite3_backup, pages: c_int) -> c_int;
    pub fn sqlite3_backup_finish(backup: *mut sqlite3_backup) -> c_int;
    pub fn sqlite3_backup_remaining(backup: *mut sqlite3_backup) -> c_int;
    pub fn sqlite3_backup_pagecount(backup: *mut sqlite3_backup) -> c_int;
    /// The database `schema` as one image (malloc'd, free with sqlite3_free); null on failure.
    pub fn sqlite3_serialize(db: *mut sqlite3, schema: *const c_char, size: *mut i64, flags: u32) -> *mut c_uchar;
}

// Hooks for live queries: the authorizer (what a statement reads and writes, at prepare
// time), the pre-update hook (what a write changed) and the commit/rollback hooks.

pub type sqlite3_authorizer = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        action: c_int,
        arg1: *const c_char,
        arg2: *const c_char,
        db_name: *const c_char,
        trigger_or_view: *const c_char,
    ) -> c_int,
>;
pub type sqlite3_preupdate_callback = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        db: *mut sqlite3,
        op: c_int,
        db_name: *const c_char,
        table: *const c_char,
        old_rowid: i64,
        new_rowid: i64,
    ),
>;

// Authorizer action codes.
pub const SQLITE_CREATE_INDEX: c_int = 1;
pub const SQLITE_DROP_VTABLE: c_int = 30;
pub const SQLITE_DELETE: c_int = 9;
pub const SQLITE_INSERT: c_int = 18;
pub const SQLITE_READ: c_int = 20;
pub const SQLITE_UPDATE: c_int = 23;
pub const SQLITE_ALTER_TABLE: c_int = 26;
pub const SQLITE_TRANSACTION: c_int = 22;
pub const SQLITE_SAVEPOINT: c_int = 32;
pub const SQLITE_PRAGMA: c_int = 19;
pub const SQLITE_CREATE_TEMP_INDEX: c_int = 3;
pub const SQLITE_CREATE_TEMP_VIEW: c_int = 6;
pub const SQLITE_ATTACH: c_int = 24;
pub const SQLITE_DETACH: c_int = 25;
pub const SQLITE_CREATE_VTABLE: c_int = 29;
pub const SQLITE_FUNCTION: c_int = 31;

// sqlite3_db_status verbs.
pub const SQLITE_DBSTATUS_CACHE_USED: c_int = 1;
pub const SQLITE_DBSTATUS_SCHEMA_USED: c_int = 2;
pub const SQLITE_DBSTATUS_STMT_USED: c_int = 3;

extern "C" {
    pub fn sqlite3_set_authorizer(db: *mut sqlite3, callback: sqlite3_authorizer, user: *mut c_void) -> c_int;
    pub fn sqlite3_preupdate_hook(
        db: *mut sqlite3,
        callback: sqlite3_preupdate_callback,
        ctx: *mut c_void,
    ) -> *mut c_void;
    pub fn sqlite3_preupdate_count(db: *mut sqlite3) -> c_int;
    pub fn sqlite3_preupdate_old(db: *mut sqlite3, column: c_int, value: *mut *mut sqlite3_value) -> c_int;
    pub fn sqlite3_preupdate_new(db: *mut sqlite3, column: c_int, value: *mut *mut sqlite3_value) -> c_int;
    pub fn sqlite3_update_hook(
        db: *mut sqlite3,
        callback: Option<unsafe extern "C" fn(*mut c_void, c_int, *const c_char, *const c_char, i64)>,
        ctx: *mut c_void,
    ) -> *mut c_void;
    pub fn sqlite3_commit_hook(
        db: *mut sqlite3,
        callback: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
        ctx: *mut c_void,
    ) -> *mut c_void;
    pub fn sqlite3_rollback_hook(
        db: *mut sqlite3,
        callback: Option<unsafe extern "C" fn(*mut c_void)>,
        ctx: *mut c_void,
    ) -> *mut c_void;
    pub fn sqlite3_db_status(
        db: *mut sqlite3,
        op: c_int,
        current: *mut c_int,
        highwater: *mut c_int,
        reset: c_int,
    ) -> c_int;
}

// A transaction's writes on the JS thread (the engine's js_thread/runs.rs): the authorizer's refusal, a
// statement's re-prepare count, and the WAL hook a commit there uses to leave its checkpoint to
// the writer thread.
pub const SQLITE_DENY: c_int = 1;
pub const SQLITE_STMTSTATUS_REPREPARE: c_int = 5;

pub type sqlite3_wal_callback =
    Option<unsafe extern "C" fn(arg: *mut c_void, db: *mut sqlite3, db_name: *const c_char, frames: c_int) -> c_int>;

extern "C" {
    pub fn sqlite3_stmt_status(stmt: *mut sqlite3_stmt, op: c_int, reset: c_int) -> c_int;
    pub fn sqlite3_wal_hook(db: *mut sqlite3, callback: sqlite3_wal_callback, arg: *mut c_void) -> *mut c_void;
    pub fn sqlite3_wal_autocheckpoint(db: *mut sqlite3, pages: c_int) -> c_int;
    pub fn sqlite3_wal_checkpoint(db: *mut sqlite3, db_name: *const c_char) -> c_int;
    pub fn sqlite3_wal_checkpoint_v2(
        db: *mut sqlite3,
        db_name: *const c_char,
        mode: c_int,
        log_frames: *mut c_int,
        checkpointed_frames: *mut c_int,
    ) -> c_int;
}

// The writer's checkpoint that starts the WAL over once every reader has left it
// (threads/checkpoint.rs).
pub const SQLITE_CHECKPOINT_RESTART: c_int = 2;

// Whether a commit would start the WAL over (the engine's Connection::wal_starts_over): the
// database file's VFS object, to map its wal-index, whose header format is documented
// (sqlite.org/walformat.html).
pub const SQLITE_FCNTL_FILE_POINTER: c_int = 7;

#[repr(C)]
pub struct sqlite3_file {
    pub pMethods: *const sqlite3_io_methods,
}

/// `sqlite3_io_methods` up to its version 2 members; only `xShmMap` is called, the others are
/// there for the layout.
#[repr(C)]
pub struct sqlite3_io_methods {
    pub iVersion: c_int,
    pub xClose: *const c_void,
    pub xRead: *const c_void,
    pub xWrite: *const c_void,
    pub xTruncate: *const c_void,
    pub xSync: *const c_void,
    pub xFileSize: *const c_void,
    pub xLock: *const c_void,
    pub xUnlock: *const c_void,
    pub xCheckReservedLock: *const c_void,
    pub xFileControl: *const c_void,
    pub xSectorSize: *const c_void,
    pub xDeviceCharacteristics: *const c_void,
    pub xShmMap: Option<
        unsafe extern "C" fn(
            file: *mut sqlite3_file,
            page: c_int,
            size: c_int,
            extend: c_int,
            out: *mut *mut c_void,
        ) -> c_int,
    >,
}

extern "C" {
    pub fn sqlite3_file_control(db: *mut sqlite3, db_name: *const c_char, op: c_int, arg: *mut c_void) -> c_int;
}
