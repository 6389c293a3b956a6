// The `sqlite3` module's constants, and its errors: an `Error` whose message starts with the
// result code's name (`SQLITE_CONSTRAINT: UNIQUE constraint failed: t.a`), with `errno` (the
// primary result code's number) and `code` (its name), which Sequelize, TypeORM and Knex read.

/** SQLite's primary result codes, as the `sqlite3` module exports them. */
export const RESULT_CODES = {
  OK: 0,
  ERROR: 1,
  INTERNAL: 2,
  PERM: 3,
  ABORT: 4,
  BUSY: 5,
  LOCKED: 6,
  NOMEM: 7,
  READONLY: 8,
  INTERRUPT: 9,
  IOERR: 10,
  CORRUPT: 11,
  NOTFOUND: 12,
  FULL: 13,
  CANTOPEN: 14,
  PROTOCOL: 15,
  EMPTY: 16,
  SCHEMA: 17,
  TOOBIG: 18,
  CONSTRAINT: 19,
  MISMATCH: 20,
  MISUSE: 21,
  NOLFS: 22,
  AUTH: 23,
  FORMAT: 24,
  RANGE: 25,
  NOTADB: 26,
} as const

/** `sqlite3_open_v2`'s flags, as the `sqlite3` module exports them. */
export const OPEN_FLAGS = {
  OPEN_READONLY: 0x1,
  OPEN_READWRITE: 0x2,
  OPEN_CREATE: 0x4,
  OPEN_URI: 0x40,
  OPEN_FULLMUTEX: 0x10000,
  OPEN_SHAREDCACHE: 0x20000,
  OPEN_PRIVATECACHE: 0x40000,
} as const

/** `sqlite3_limit`'s categories, as the `sqlite3` module exports them. */
export const LIMITS = {
  LIMIT_LENGTH: 0,
  LIMIT_SQL_LENGTH: 1,
  LIMIT_COLUMN: 2,
  LIMIT_EXPR_DEPTH: 3,
  LIMIT_COMPOUND_SELECT: 4,
  LIMIT_VDBE_OP: 5,
  LIMIT_FUNCTION_ARG: 6,
  LIMIT_ATTACHED: 7,
  LIMIT_LIKE_PATTERN_LENGTH: 8,
  LIMIT_VARIABLE_NUMBER: 9,
  LIMIT_TRIGGER_DEPTH: 10,
  LIMIT_WORKER_THREADS: 11,
} as const

/** The library's codes that have a SQLite counterpart, which `code` and `errno` then carry
 * (the library's own code stays in `resqliteCode`). */
const LIBRARY_TO_SQLITE: Record<string, keyof typeof RESULT_CODES> = {
  ERR_DATABASE_CLOSED: 'MISUSE',
  ERR_PARAMETER_COUNT: 'RANGE',
  ERR_PARAMETER_NAME: 'RANGE',
  ABORT_ERR: 'INTERRUPT',
  ERR_DATABASE_READONLY: 'READONLY',
  ERR_DATABASE_REPLICA: 'READONLY',
}

/** SQLite's message for the library codes whose cause SQLite names the same way. */
const SQLITE_WORDS: Record<string, string> = {
  ABORT_ERR: 'interrupted',
  ERR_DATABASE_READONLY: 'attempt to write a readonly database',
}

/** An error as the `sqlite3` module gives one. */
export interface Sqlite3Error extends Error {
  /** The primary result code's number (`19` for a constraint). */
  errno: number
  /** `SQLITE_` and the primary result code's name (`SQLITE_CONSTRAINT`), or, for a refusal
   * of resqlite's own without a SQLite counterpart, its code (`ERR_MULTIPLE_STATEMENTS`). */
  code: string
  /** resqlite's own code (the extended result code's name, `SQLITE_CONSTRAINT_UNIQUE`, or a
   * library code), when it says more than `code`. */
  resqliteCode?: string
}

/** `error` (resqlite's, or a `TypeError` for a bad argument) as the `sqlite3` module's: a new
 * `Error` whose message starts with its code, with `errno`, `code`, and the original as `cause`.
 * `site` holds the stack of the call that scheduled the work: its frames replace the error's
 * (the work ran later, from a queue). */
export function toSqlite3Error(error: unknown, site?: { stack?: string }): Sqlite3Error {
  if (!(error instanceof Error)) return toSqlite3Error(new Error(String(error)), site)
  if (typeof (error as Partial<Sqlite3Error>).errno === 'number') return error as Sqlite3Error
  const original =
    typeof (error as { code?: unknown }).code === 'string' ? (error as unknown as { code: string }).code : 'ERROR'
  let name: string
  let code: string
  if (original.startsWith('SQLITE_')) {
    // SQLITE_CONSTRAINT_UNIQUE → CONSTRAINT: the primary code is the name's first word.
    name = original.slice(7).split('_')[0]!
    code = `SQLITE_${name}`
  } else {
    name = LIBRARY_TO_SQLITE[original] ?? 'ERROR'
    code = LIBRARY_TO_SQLITE[original] === undefined ? original : `SQLITE_${name}`
  }
  // sqlite3's own words for an interrupted statement and a write to a read-only database
  // (tools match them: Sequelize's tests do).
  const message = SQLITE_WORDS[original] ?? error.message
  const converted = new Error(`${code}: ${message}`, { cause: error }) as Sqlite3Error
  converted.errno = RESULT_CODES[name as keyof typeof RESULT_CODES] ?? RESULT_CODES.ERROR
  converted.code = code
  if (original !== code) converted.resqliteCode = original
  const frames = site?.stack
  if (typeof frames === 'string') {
    const at = frames.indexOf('\n')
    converted.stack = `Error: ${converted.message}${at === -1 ? '' : frames.slice(at)}`
  }
  return converted
}

/** A refusal of this module's own (an argument or an API use that resqlite/sqlite3 does not
 * take), shaped as the `sqlite3` module's errors; `code` is the library's. */
export function refusal(code: string, message: string, errno: keyof typeof RESULT_CODES = 'MISUSE'): Sqlite3Error {
  const error = new Error(`${code}: ${message}`) as Sqlite3Error
  error.errno = RESULT_CODES[errno]
  error.code = code
  return error
}
