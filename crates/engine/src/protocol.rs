//! The wire protocol's numbers, the one place they are defined: job kinds (what JS asks for),
//! completion kinds and the mailbox's layout (how results come back, handoff/mailbox.rs), what a
//! read on the JS thread returns (napi/inline_calls.rs), the cell tags of an encoded result
//! (encode/rows.rs) and the tags of packed parameters (sqlite/params.rs).
//!
//! The TypeScript side has its own copies as const enums (src/native.ts `JobKind`, `Done`,
//! `Mailbox`, `ParamSet`, `ParamTag`; src/decode.ts `Tag`), which tsc inlines into the hot paths. `protocol()` hands
//! these numbers to JS, and test/protocol.test.mjs checks that both sides hold the same names
//! with the same values: `Done.RowsPart` in TypeScript is `DONE_ROWS_PART` here (the group's
//! name and the member's, in upper snake case).

use std::collections::BTreeMap;

use napi_derive::napi;

/// Defines each constant, and `GROUPS`: every group's name with its constants and values.
macro_rules! protocol {
    ($( $group:ident: $ty:ty { $( $(#[$doc:meta])* $name:ident = $value:expr; )* } )*) => {
        $( $( $(#[$doc])* pub const $name: $ty = $value; )* )*

        /// Every group (its TypeScript enum's name) with its constants and their values.
        const GROUPS: &[(&str, &[(&str, u32)])] =
            &[ $( (stringify!($group), &[ $( (stringify!($name), $name as u32), )* ]), )* ];
    };
}

protocol! {
    // What a job does (`read`/`write` in job_calls.rs). Reads run on the readers, or on the
    // writer inside a transaction.
    JobKind: u32 {
        JOB_KIND_EXECUTE = 0;
        JOB_KIND_BATCH = 1;
        JOB_KIND_SELECT = 2;
        /// A select that stops after its first row.
        JOB_KIND_SELECT_ONE = 3;
        /// A select whose result is JSON text.
        JOB_KIND_SELECT_BYTES = 4;
        /// The library's BEGIN/SAVEPOINT/RELEASE/COMMIT/ROLLBACK: the only jobs that open or
        /// end a transaction.
        JOB_KIND_CONTROL = 5;
        /// Has another process committed? If so, every live query re-runs.
        JOB_KIND_DATA_VERSION = 6;
        /// `db.serialize()`: the database's image, on a reader.
        JOB_KIND_SERIALIZE = 7;
        /// `db.columns(sql)`: the statement's column names and declared types, as JSON.
        JOB_KIND_COLUMNS = 8;
        /// `db.prepare(sql)`: whether the statement is a read (what select takes) and its
        /// columns, as JSON.
        JOB_KIND_DESCRIBE = 9;
        /// Test hook: a job that panics inside the engine.
        JOB_KIND_PANIC = 99;
        /// Or-ed into a kind: the call is traced (src/tracing.ts), so the engine reports how long
        /// the job waited in its queue (DONE_QUEUED) before its result.
        JOB_KIND_TRACED = 256;
    }

    // Completion kinds. A completion is `[id, kind, a, b]` in a mailbox slot; the values that
    // are not numbers are the JS handler's arguments, in completion order ("objects" below).
    Done: u32 {
        /// Objects: the ArrayBuffer (encode/rows.rs layout), the column names (one string,
        /// joined by NUL).
        DONE_ROWS = 0;
        /// Objects: an ArrayBuffer holding the JSON text (or, for JOB_KIND_SERIALIZE, the image).
        DONE_JSON = 1;
        /// a: changes, b: lastInsertRowid; no objects.
        DONE_CHANGES = 2;
        DONE_VOID = 3;
        /// Objects: code, message.
        DONE_ERROR = 4;
        /// As DONE_ROWS, for a part of a result: more follow.
        DONE_ROWS_PART = 5;
        /// As DONE_ERROR; the writer is outside any transaction now.
        DONE_ERROR_NO_TRANSACTION = 6;
        /// As DONE_ROWS, for live query `id`: its new rows.
        DONE_LIVE_ROWS = 7;
        /// As DONE_ERROR, for live query `id`: a run failed.
        DONE_LIVE_ERROR = 8;
        /// a: changes; objects: lastInsertRowid as a bigint (beyond 2^53).
        DONE_CHANGES_BIG = 9;
        /// A backup's step: a: pages remaining, b: pages in all; the job goes on.
        DONE_PROGRESS = 10;
        /// As DONE_ROWS, for a page of an iteration that has more rows (threads/iterate.rs);
        /// its last page is a DONE_ROWS.
        DONE_PAGE = 11;
        /// A write's RETURNING rows: objects as DONE_ROWS; a: changes, b: lastInsertRowid, or
        /// NaN when it is beyond 2^53 and follows the rows' objects as a bigint.
        DONE_RETURNED = 12;
        /// A paused backup's step ended (threads/paused_backups.rs), after its DONE_PROGRESS:
        /// a: sqlite3_backup_step's code, SQLITE_OK or SQLITE_DONE.
        DONE_STEPPED = 13;
        /// A traced job's wait in its queue (JOB_KIND_TRACED): a: microseconds; its result follows.
        DONE_QUEUED = 14;
    }

    // The mailbox: MAILBOX_WORDS i32 words (signals and counts), then MAILBOX_SLOTS
    // completions of four f64 each.
    Mailbox: usize {
        /// Word: the engine has completions queued.
        MAILBOX_QUEUED = 0;
        /// Word: the JS thread's loop is polling for completions, so it needs no wake-up.
        MAILBOX_POLLING = 1;
        /// Word: completions in the slots now.
        MAILBOX_COUNT = 2;
        /// Word, kept by JS: writer jobs sent and not yet completed.
        MAILBOX_WRITES_IN_FLIGHT = 3;
        /// Word: writer jobs queued (added as each is sent) and not yet finished by the writer
        /// thread (it subtracts once it released the connection, before it queues the job's
        /// completion).
        MAILBOX_WRITES_RUNNING = 4;
        /// How many words come before the slots (even: the slots are f64).
        MAILBOX_WORDS = 6;
        MAILBOX_SLOTS = 256;
        MAILBOX_BYTES = MAILBOX_WORDS * 4 + MAILBOX_SLOTS * 4 * 8;
    }

    // What `readInline` and `writeInline` return (napi/inline_calls.rs): whether the statement
    // ran on the JS thread.
    Inline: u32 {
        /// The handler was called with the result or the error.
        INLINE_DONE = 0;
        /// It ran past its budget, or its result is too large: send it to a thread.
        INLINE_MOVED = 1;
        /// Its statement overran recently (or returns no rows) and it did not run: send it to a
        /// thread.
        INLINE_SKIPPED = 2;
        /// No inline connection now (closing, a rekey in progress, or the writer busy).
        INLINE_UNAVAILABLE = 3;
        /// It ran, and its result is in the shared numbers, without a call of the handler:
        /// `readInline`'s cells, all numbers or NULL (NaN), after their count (the names are the
        /// last ones); `writeInline`'s `[changes, lastInsertRowid, checkpointDue]` of a write,
        /// `[checkpointDue]` of a COMMIT.
        INLINE_NUMBERS = 4;
    }

    // Which connection `readInline` runs a read on (napi/inline_calls.rs).
    ReadOn: u32 {
        /// The JS thread's own read-only connection.
        READ_ON_OWN = 0;
        /// The writer's, inside the caller's transaction (which the writer must be in).
        READ_ON_TRANSACTION = 1;
        /// The writer's when it is idle outside any transaction (its page cache holds what it
        /// last wrote: experiments/040); else the JS thread's own.
        READ_ON_IDLE_WRITER = 2;
    }

    // The first argument of `readInline`'s and `writeInline`'s handler: what the others hold.
    InlineResult: u32 {
        /// Names joined by NUL, columns, rows, then every cell.
        INLINE_RESULT_ROWS = 0;
        /// Code, message; for `writeInline`, whether the error ended the transaction.
        INLINE_RESULT_ERROR = 1;
        /// A Buffer holding the JSON text.
        INLINE_RESULT_JSON = 2;
        /// `writeInline`: changes, last insert rowid (a bigint beyond ±(2^53−1)), and whether the
        /// commit of a write alone made a checkpoint due.
        INLINE_RESULT_CHANGES = 3;
        /// `writeInline`'s COMMIT: whether a checkpoint is due (for the writer thread).
        INLINE_RESULT_COMMITTED = 4;
    }

    // A cell's type in an encoded result (encode/rows.rs).
    Tag: u8 {
        TAG_NULL = 0;
        /// The slot holds an f64.
        TAG_NUMBER = 1;
        /// The slot holds the start and length of the text in the arena (encode/rows.rs).
        TAG_TEXT = 2;
        /// The slot holds the start and length of the bytes in the arena.
        TAG_BLOB = 3;
        /// The slot holds an i64 beyond ±(2^53−1), or any integer with safeIntegers.
        TAG_INT64 = 4;
        /// ASCII text of at most SHORT_TEXT_MAX characters; the slot as for TAG_TEXT.
        TAG_SHORT_TEXT = 5;
    }

    // A parameter set's first byte in the packed parameters (src/params.ts → sqlite/params.rs).
    ParamSet: u8 {
        /// No parameters.
        PARAM_SET_NONE = 0;
        /// u32 count, then each value.
        PARAM_SET_POSITIONAL = 1;
        /// u32 count, then each value after its name (u32 length, UTF-8).
        PARAM_SET_NAMED = 2;
    }

    // A packed parameter's type, the byte before its payload.
    ParamTag: u8 {
        PARAM_TAG_NULL = 0;
        /// 8 bytes, little-endian.
        PARAM_TAG_INT64 = 1;
        /// 8 bytes, little-endian.
        PARAM_TAG_FLOAT64 = 2;
        /// u32 length, UTF-8.
        PARAM_TAG_TEXT = 3;
        /// u32 length, bytes.
        PARAM_TAG_BLOB = 4;
    }
}

/// The protocol's numbers by group and name: `{ Done: { DONE_ROWS: 0, … }, … }`. For
/// test/protocol.test.mjs; the library itself uses its const enums.
#[napi]
pub fn protocol() -> BTreeMap<&'static str, BTreeMap<&'static str, u32>> {
    GROUPS.iter().map(|(group, numbers)| (*group, numbers.iter().copied().collect())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Within a group no two names share a value (a completion or job kind would be ambiguous),
    /// and `protocol()` hands JS every constant.
    #[test]
    fn every_group_has_distinct_values_and_reaches_js() {
        let js = protocol();
        for (group, numbers) in GROUPS {
            let mut values: Vec<u32> = numbers.iter().map(|(_, v)| *v).collect();
            values.sort_unstable();
            values.dedup();
            if *group != "Mailbox" {
                assert_eq!(values.len(), numbers.len(), "{group} repeats a value");
            }
            assert_eq!(js[group].len(), numbers.len(), "{group}");
        }
    }
}
