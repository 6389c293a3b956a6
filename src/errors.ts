// The library's errors: ResqliteError, its codes, and the argument errors shaped like Node's own.
import { join, sep } from 'node:path'

/** Every `code` the library's errors carry (docs/values-and-errors.md "Errors").
 *
 * - Failures of a call (SQLite's, the engine's, the library's) reject with a {@link ResqliteError}:
 *   its `code` is SQLite's extended result code name (`SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_BUSY`,
 *   `SQLITE_NOTADB`, …; `SQLITE_UNKNOWN` for a code the library has no name for) or one of the
 *   library codes below.
 * - Argument mistakes reject with a `TypeError` or `RangeError` whose `code` is
 *   `ERR_INVALID_ARG_TYPE`, `ERR_INVALID_ARG_VALUE`, `ERR_OUT_OF_RANGE` or
 *   `ERR_INVALID_RETURN_VALUE`, as Node's own do.
 *
 * Nothing is thrown synchronously: every method reports its errors as a rejected promise (a
 * live query, to its subscribers), except `LiveQuery.subscribe` given no subscriber (a
 * `TypeError`: there is no one to report to). */
export type ResqliteErrorCode =
  /** SQLite's result code, by name: `SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_BUSY`, `SQLITE_NOTADB`, … */
  | `SQLITE_${string}`
  /** A call after `close()`, or a live query subscribed after it. */
  | 'ERR_DATABASE_CLOSED'
  /** `execute`, `executeBatch`, `transaction` or `rekey` on a database opened with `readonly: true`. */
  | 'ERR_DATABASE_READONLY'
  /** The same on a database opened with `replica: true`: a read replica, whose writes belong on the primary. */
  | 'ERR_DATABASE_REPLICA'
  /** The `signal` aborted (before the call ran, while it waited, or while it ran); `cause` holds
   * the signal's reason. */
  | 'ABORT_ERR'
  /** Positional parameters that do not match the statement's parameter count. */
  | 'ERR_PARAMETER_COUNT'
  /** A named parameter the object lacks, a key the statement does not have, or an object given
   * to a statement with positional parameters. */
  | 'ERR_PARAMETER_NAME'
  /** SQL holding several statements given to a `select*` method, to `executeBatch`, or to
   * `execute` with parameters (without parameters, `execute` runs them all). */
  | 'ERR_MULTIPLE_STATEMENTS'
  /** SQL holding no statement (empty, or only whitespace and comments). */
  | 'ERR_EMPTY_STATEMENT'
  /** A `select*` method, `iterate` or a live query given a statement that writes, one that
   * begins or ends a transaction or a savepoint, or a PRAGMA that changes a setting: use
   * `execute`. */
  | 'ERR_NOT_READ_ONLY'
  /** A TEXT value that is not valid UTF-8; the message names the column (read it with
   * `CAST(col AS BLOB)`). */
  | 'ERR_INVALID_UTF8'
  /** SQL holding a NUL character, which SQLite would stop reading at: the message gives its
   * offset; nothing runs. */
  | 'ERR_NUL_IN_SQL'
  /** A result set larger than 4 GiB, or one with more text than a JavaScript string can hold. */
  | 'ERR_RESULT_TOO_LARGE'
  /** A path that is `''` or holds a NUL character, for the database or an `attach` entry
   * (`':memory:'` is refused in `attach` only); `':memory:'` with `readonly: true`. */
  | 'ERR_INVALID_PATH'
  /** At `open()`: an `extensions` library could not be loaded; the message names the file and
   * gives SQLite's reason. The same from `Database.loadExtension`. */
  | 'ERR_EXTENSION'
  /** At `open()`: no VFS of the `vfs` option's name is registered in the process (its
   * extension is not loaded with `Database.loadExtension`); the message names it. */
  | 'ERR_VFS_NOT_FOUND'
  /** `backup`: the finished copy could not be given the destination's name (a file system
   * error, named in the message). resqlite/sqlite3's `Backup#step` after a `rekey`, which
   * finished the backup (the rekey replaces the file it read). */
  | 'ERR_BACKUP'
  /** At `open()` (or when the writer reopens after `rekey()`): the database, or an attached one,
   * could not be switched to WAL mode, which the library needs (a file another process keeps in
   * another journal mode, a file system without shared memory, …). */
  | 'ERR_WAL_UNAVAILABLE'
  /** `PRAGMA journal_mode` given a mode other than WAL (refused before it runs): the readers
   * read beside the writer in WAL mode. Reading the mode is fine. */
  | 'ERR_JOURNAL_MODE'
  /** At `open()` or `rekey()`: a PRAGMA the library runs to set the connection up (such as
   * `journal_mode`) returned no row. */
  | 'ERR_EMPTY_RESULT'
  /** At `open()`: the encryption key or cipher settings do not match the database (or the file
   * is not a database). */
  | 'ERR_ENCRYPTION_KEY'
  /** At `open()` or `rekey()`: SQLite3 Multiple Ciphers refused to select the cipher, or one of
   * its parameters. */
  | 'ERR_ENCRYPTION_CONFIG'
  /** `rekey` on a database opened with `attach`, a re-encrypted copy that failed its check, or
   * a writer that could not reopen after a rekey. Other rekey failures carry SQLite's code
   * (`SQLITE_BUSY`: another process kept the database open past `busyTimeout`); either way, a
   * rekey that fails before the swap leaves the database under its old key. */
  | 'ERR_REKEY'
  /** `rekey` called inside a transaction body. */
  | 'ERR_REKEY_IN_TRANSACTION'
  /** `close` called inside a transaction body (it would wait for that transaction forever). */
  | 'ERR_CLOSE_IN_TRANSACTION'
  /** A `tx` (or `db.*` routed to it) used after its transaction body returned or threw. */
  | 'ERR_TRANSACTION_FINISHED'
  /** SQLite rolled the transaction back on its own (`SQLITE_FULL`, a trigger's
   * `RAISE(ROLLBACK)`, …): later statements of the transaction, and the transaction itself,
   * reject with this; `cause` holds the error that did it. */
  | 'ERR_TRANSACTION_ROLLED_BACK'
  /** `execute` left a transaction open (`BEGIN` without `COMMIT`); it was rolled back. Use
   * `db.transaction()` for a transaction that spans several calls. */
  | 'ERR_OPEN_TRANSACTION'
  /** A `BEGIN`, `COMMIT`, `ROLLBACK`, `END`, `SAVEPOINT`, `RELEASE` or `ROLLBACK TO` statement
   * inside a transaction body (refused before it runs; the transaction is rolled back and
   * rejects with `ERR_TRANSACTION_ROLLED_BACK`), or given to `executeBatch`. */
  | 'ERR_TRANSACTION_CONTROL'
  /** `PRAGMA key`, `rekey`, `hexkey`, `hexrekey` or `textkey` in any statement: the key is given
   * to `Database.open` and changed with `db.rekey()`. */
  | 'ERR_KEY_PRAGMA'
  /** An iteration (`iterate`) read a second time: call `iterate` again to read the rows again. */
  | 'ERR_ITERATION_STARTED'
  /** A page asked of an iteration that has ended, or one started while the database closes (one
   * started during a rekey waits for it). */
  | 'ERR_ITERATION_ENDED'
  /** `rekey` while an iteration is open outside a transaction: finish or end it first. */
  | 'ERR_ITERATION_OPEN'
  /** A SQL function written in JavaScript threw: the statement failed, and `cause` holds what
   * was thrown. */
  | 'ERR_FUNCTION_THREW'
  /** A SQL function written in JavaScript returned what cannot be stored (a Promise, NaN, an
   * object, a boolean, …): the statement failed; the message says what was returned. */
  | 'ERR_FUNCTION_RESULT'
  /** A database call made from inside a SQL function written in JavaScript (a function must
   * compute its result from its arguments alone): the call rejects with it, and the statement
   * running the function fails with `ERR_FUNCTION_THREW` and it as `cause`. */
  | 'ERR_CALL_IN_FUNCTION'
  /** A bug inside the engine (a Rust panic): the job fails, the engine stays usable. */
  | 'ERR_INTERNAL'
  /** (`TypeError`) An argument of the wrong type: the message names the argument and its type. */
  | 'ERR_INVALID_ARG_TYPE'
  /** (`TypeError`) An argument of the right type with a wrong value: an unknown option, mode or
   * cipher, NaN or a lone surrogate as a parameter, a lone surrogate in SQL text, a view of a
   * detached ArrayBuffer as a parameter, an empty key, … */
  | 'ERR_INVALID_ARG_VALUE'
  /** (`RangeError`) A number outside its range: an option, a bigint parameter outside 64 bits, a
   * raw key of the wrong length, or an INTEGER column value beyond ±(2^53−1) read without
   * `safeIntegers`. */
  | 'ERR_OUT_OF_RANGE'
  /** (`TypeError`) A transaction body that did not return a promise (make it an async function). */
  | 'ERR_INVALID_RETURN_VALUE'

/** A failure SQLite, the engine or the library reports. Parameters are never copied into
 * errors: they may hold personal data. */
export class ResqliteError extends Error {
  /** What failed: SQLite's extended result code name (`SQLITE_CONSTRAINT_UNIQUE`) or a library
   * code (`ERR_DATABASE_CLOSED`); {@link ResqliteErrorCode} lists them. */
  readonly code: ResqliteErrorCode
  /** The SQL the failure belongs to (a transaction's own failures name it: `'transaction'`,
   * `'BEGIN'`), or `undefined` when it belongs to none (a closed database, a failed open). */
  readonly sql: string | undefined

  /** @param code a {@link ResqliteErrorCode} (typed `string` because codes arrive from the
   * engine as text). `options.cause` becomes the standard `cause`. */
  constructor(code: string, message: string, sql?: string, options?: { cause?: unknown }) {
    // The library's own frames (a call runs through several) would take the room V8 keeps for
    // the caller's (10 frames by default): the stack is taken deeper, and they are left out.
    const limit = Error.stackTraceLimit
    if (typeof limit === 'number') Error.stackTraceLimit = limit + LIBRARY_FRAMES
    super(message, options)
    Error.stackTraceLimit = limit
    this.name = 'ResqliteError'
    this.code = code as ResqliteErrorCode
    this.sql = sql
    if (typeof limit === 'number') this.stack = withoutLibraryFrames(this.stack, limit)
  }
}

/** At most how many frames of the library's own a call runs through. */
export const LIBRARY_FRAMES = 16
/** The built package's folder (this file is dist/cjs/errors.js): frames under it are the
 * library's (the ESM adapters' included). */
const LIBRARY_DIR = join(__dirname, '..', sep)

/** `stack` without the library's frames, at most `limit` frames. */
export function withoutLibraryFrames(stack: string | undefined, limit: number): string | undefined {
  if (stack === undefined) return stack
  const framesAt = stack.indexOf('\n    at ')
  if (framesAt === -1) return stack
  const frames = stack
    .slice(framesAt + 1)
    .split('\n')
    .filter((frame) => !frame.includes(LIBRARY_DIR))
  const header = stack.slice(0, framesAt)
  return frames.length === 0 ? header : `${header}\n${frames.slice(0, limit).join('\n')}`
}

/** How SQL functions failed (src/functions.ts), by token, until the failed statement's error
 * takes the code and the cause. */
const failures = new Map<number, { code: ResqliteErrorCode; cause: unknown }>()
/** The statement's error may never come (SQLite may drop a function's error): the oldest
 * failures are forgotten. */
const KEEP_THROWN = 64
let nextToken = 1
const TOKEN = / \[function error (\d+)\]$/

/** Keeps how a SQL function failed for the error of the statement that called it; the token to
 * end the function's error message with. */
export function failureToken(code: ResqliteErrorCode, cause: unknown): string {
  const token = nextToken++
  failures.set(token, { code, cause })
  if (failures.size > KEEP_THROWN) failures.delete(failures.keys().next().value as number)
  return ` [function error ${token}]`
}

/** An error the engine reports. A SQL function's failure gives it its code
 * (`ERR_FUNCTION_THREW`, `ERR_FUNCTION_RESULT`) and cause. */
export function engineError(code: string, message: string, sql: string | undefined): ResqliteError {
  const match = TOKEN.exec(message)
  const failure = match === null ? undefined : failures.get(Number(match[1]))
  if (match === null || failure === undefined) return new ResqliteError(code, message, sql)
  failures.delete(Number(match[1]))
  const text = message.slice(0, match.index)
  return new ResqliteError(failure.code, text, sql, failure.cause === undefined ? undefined : { cause: failure.cause })
}

export function closedError(): ResqliteError {
  return new ResqliteError('ERR_DATABASE_CLOSED', 'the database is closed')
}

export function abortError(signal: AbortSignal, sql: string | undefined): ResqliteError {
  return new ResqliteError('ABORT_ERR', 'the operation was aborted', sql, { cause: signal.reason })
}

/** Argument errors, shaped like Node's own (`code` on a TypeError / RangeError). */
export function typeError(message: string, code: ResqliteErrorCode = 'ERR_INVALID_ARG_TYPE'): TypeError {
  return Object.assign(new TypeError(message), { code })
}

export function rangeError(message: string): RangeError {
  return Object.assign(new RangeError(message), { code: 'ERR_OUT_OF_RANGE' })
}

/** How an unexpected argument is named in error messages: its type, never its value. */
export function describe(v: unknown): string {
  if (v === null) return 'null'
  if (typeof v === 'object') return v.constructor?.name ? `an instance of ${v.constructor.name}` : 'an object'
  if (typeof v === 'function') return 'a function'
  return `type ${typeof v}`
}
