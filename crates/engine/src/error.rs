//! Errors that cross to JS as `ResqliteError { code, message }`.

use std::borrow::Cow;

/// The library's codes the engine raises (`code::ERR_…`), each spelled as src/errors.ts spells
/// it: test/error-codes.test.mjs checks every one is a `ResqliteErrorCode` there (through
/// `errorCodes()`) and that no other file of the engine spells a code itself.
pub mod code {
    use napi_derive::napi;

    macro_rules! codes {
        ($( $name:ident, )*) => {
            $( pub const $name: &str = stringify!($name); )*
            /// Every code, for test/error-codes.test.mjs (JS calls it: dead code to the unit tests).
            #[cfg_attr(test, allow(dead_code))]
            #[napi]
            pub fn error_codes() -> Vec<&'static str> {
                vec![$( $name, )*]
            }
        };
    }

    codes! {
        ERR_BACKUP,
        ERR_DATABASE_CLOSED,
        ERR_EMPTY_RESULT,
        ERR_EMPTY_STATEMENT,
        ERR_ENCRYPTION_CONFIG,
        ERR_ENCRYPTION_KEY,
        ERR_EXTENSION,
        ERR_INTERNAL,
        ERR_INVALID_ARG_VALUE,
        ERR_INVALID_PATH,
        ERR_INVALID_UTF8,
        ERR_ITERATION_ENDED,
        ERR_ITERATION_OPEN,
        ERR_JOURNAL_MODE,
        ERR_KEY_PRAGMA,
        ERR_MULTIPLE_STATEMENTS,
        ERR_NOT_READ_ONLY,
        ERR_NUL_IN_SQL,
        ERR_OPEN_TRANSACTION,
        ERR_PARAMETER_COUNT,
        ERR_PARAMETER_NAME,
        ERR_REKEY,
        ERR_REKEY_IN_TRANSACTION,
        ERR_RESULT_TOO_LARGE,
        ERR_TRANSACTION_CONTROL,
        ERR_TRANSACTION_ROLLED_BACK,
        ERR_VFS_NOT_FOUND,
        ERR_WAL_UNAVAILABLE,
    }
}

/// A failed job: `code` is an SQLite result-code name or a library code (`code::ERR_…`).
#[derive(Debug)]
pub struct DbError {
    pub code: Cow<'static, str>,
    pub message: String,
    /// Set by the writer: after this error its connection is outside any transaction (for a
    /// job inside a transaction, SQLite rolled that transaction back).
    pub no_transaction: bool,
}

impl DbError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        DbError { code: Cow::Borrowed(code), message: message.into(), no_transaction: false }
    }

    pub fn sqlite(code: i32, message: impl Into<String>) -> Self {
        DbError { code: Cow::Borrowed(result_code_name(code)), message: message.into(), no_transaction: false }
    }

    /// A bug inside the engine: a Rust panic caught around one job (`catch_unwind`'s payload),
    /// which fails that job alone.
    pub fn panicked(payload: Box<dyn std::any::Any + Send>) -> Self {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        DbError::new(code::ERR_INTERNAL, format!("internal error in the engine (a Rust panic: {what})"))
    }
}

pub type DbResult<T> = Result<T, DbError>;

/// SQLite's result code names, primary and extended, from sqlite3.h.
pub fn result_code_name(code: i32) -> &'static str {
    match code {
        0 => "SQLITE_OK",
        1 => "SQLITE_ERROR",
        2 => "SQLITE_INTERNAL",
        3 => "SQLITE_PERM",
        4 => "SQLITE_ABORT",
        5 => "SQLITE_BUSY",
        6 => "SQLITE_LOCKED",
        7 => "SQLITE_NOMEM",
        8 => "SQLITE_READONLY",
        9 => "SQLITE_INTERRUPT",
        10 => "SQLITE_IOERR",
        11 => "SQLITE_CORRUPT",
        12 => "SQLITE_NOTFOUND",
        13 => "SQLITE_FULL",
        14 => "SQLITE_CANTOPEN",
        15 => "SQLITE_PROTOCOL",
        16 => "SQLITE_EMPTY",
        17 => "SQLITE_SCHEMA",
        18 => "SQLITE_TOOBIG",
        19 => "SQLITE_CONSTRAINT",
        20 => "SQLITE_MISMATCH",
        21 => "SQLITE_MISUSE",
        22 => "SQLITE_NOLFS",
        23 => "SQLITE_AUTH",
        24 => "SQLITE_FORMAT",
        25 => "SQLITE_RANGE",
        26 => "SQLITE_NOTADB",
        27 => "SQLITE_NOTICE",
        28 => "SQLITE_WARNING",
        256 => "SQLITE_OK_LOAD_PERMANENTLY",
        257 => "SQLITE_ERROR_MISSING_COLLSEQ",
        261 => "SQLITE_BUSY_RECOVERY",
        262 => "SQLITE_LOCKED_SHAREDCACHE",
        264 => "SQLITE_READONLY_RECOVERY",
        266 => "SQLITE_IOERR_READ",
        267 => "SQLITE_CORRUPT_VTAB",
        270 => "SQLITE_CANTOPEN_NOTEMPDIR",
        275 => "SQLITE_CONSTRAINT_CHECK",
        279 => "SQLITE_AUTH_USER",
        283 => "SQLITE_NOTICE_RECOVER_WAL",
        284 => "SQLITE_WARNING_AUTOINDEX",
        512 => "SQLITE_OK_SYMLINK",
        513 => "SQLITE_ERROR_RETRY",
        516 => "SQLITE_ABORT_ROLLBACK",
        517 => "SQLITE_BUSY_SNAPSHOT",
        518 => "SQLITE_LOCKED_VTAB",
        520 => "SQLITE_READONLY_CANTLOCK",
        522 => "SQLITE_IOERR_SHORT_READ",
        523 => "SQLITE_CORRUPT_SEQUENCE",
        526 => "SQLITE_CANTOPEN_ISDIR",
        531 => "SQLITE_CONSTRAINT_COMMITHOOK",
        539 => "SQLITE_NOTICE_RECOVER_ROLLBACK",
        769 => "SQLITE_ERROR_SNAPSHOT",
        773 => "SQLITE_BUSY_TIMEOUT",
        776 => "SQLITE_READONLY_ROLLBACK",
        778 => "SQLITE_IOERR_WRITE",
        779 => "SQLITE_CORRUPT_INDEX",
        782 => "SQLITE_CANTOPEN_FULLPATH",
        787 => "SQLITE_CONSTRAINT_FOREIGNKEY",
        795 => "SQLITE_NOTICE_RBU",
        1025 => "SQLITE_ERROR_RESERVESIZE",
        1032 => "SQLITE_READONLY_DBMOVED",
        1034 => "SQLITE_IOERR_FSYNC",
        1038 => "SQLITE_CANTOPEN_CONVPATH",
        1043 => "SQLITE_CONSTRAINT_FUNCTION",
        1281 => "SQLITE_ERROR_KEY",
        1288 => "SQLITE_READONLY_CANTINIT",
        1290 => "SQLITE_IOERR_DIR_FSYNC",
        1294 => "SQLITE_CANTOPEN_DIRTYWAL",
        1299 => "SQLITE_CONSTRAINT_NOTNULL",
        1537 => "SQLITE_ERROR_UNABLE",
        1544 => "SQLITE_READONLY_DIRECTORY",
        1546 => "SQLITE_IOERR_TRUNCATE",
        1550 => "SQLITE_CANTOPEN_SYMLINK",
        1555 => "SQLITE_CONSTRAINT_PRIMARYKEY",
        1802 => "SQLITE_IOERR_FSTAT",
        1811 => "SQLITE_CONSTRAINT_TRIGGER",
        2058 => "SQLITE_IOERR_UNLOCK",
        2067 => "SQLITE_CONSTRAINT_UNIQUE",
        2314 => "SQLITE_IOERR_RDLOCK",
        2323 => "SQLITE_CONSTRAINT_VTAB",
        2570 => "SQLITE_IOERR_DELETE",
        2579 => "SQLITE_CONSTRAINT_ROWID",
        2826 => "SQLITE_IOERR_BLOCKED",
        2835 => "SQLITE_CONSTRAINT_PINNED",
        3082 => "SQLITE_IOERR_NOMEM",
        3091 => "SQLITE_CONSTRAINT_DATATYPE",
        3338 => "SQLITE_IOERR_ACCESS",
        3594 => "SQLITE_IOERR_CHECKRESERVEDLOCK",
        3850 => "SQLITE_IOERR_LOCK",
        4106 => "SQLITE_IOERR_CLOSE",
        4362 => "SQLITE_IOERR_DIR_CLOSE",
        4618 => "SQLITE_IOERR_SHMOPEN",
        4874 => "SQLITE_IOERR_SHMSIZE",
        5130 => "SQLITE_IOERR_SHMLOCK",
        5386 => "SQLITE_IOERR_SHMMAP",
        5642 => "SQLITE_IOERR_SEEK",
        5898 => "SQLITE_IOERR_DELETE_NOENT",
        6154 => "SQLITE_IOERR_MMAP",
        6410 => "SQLITE_IOERR_GETTEMPPATH",
        6666 => "SQLITE_IOERR_CONVPATH",
        6922 => "SQLITE_IOERR_VNODE",
        7178 => "SQLITE_IOERR_AUTH",
        7434 => "SQLITE_IOERR_BEGIN_ATOMIC",
        7690 => "SQLITE_IOERR_COMMIT_ATOMIC",
        7946 => "SQLITE_IOERR_ROLLBACK_ATOMIC",
        8202 => "SQLITE_IOERR_DATA",
        8458 => "SQLITE_IOERR_CORRUPTFS",
        8714 => "SQLITE_IOERR_IN_PAGE",
        8970 => "SQLITE_IOERR_BADKEY",
        9226 => "SQLITE_IOERR_CODEC",
        _ => "SQLITE_UNKNOWN",
    }
}
