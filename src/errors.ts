/** Every failure SQLite or the engine reports. `code` is an extended SQLite result-code name
 * (`SQLITE_CONSTRAINT_UNIQUE`) or a library code (`ERR_DATABASE_CLOSED`). Parameters are never
 * copied into errors: they may hold personal data. */
export class ResqliteError extends Error {
  readonly code: string
  readonly sql: string | undefined

  constructor(code: string, message: string, sql?: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'ResqliteError'
    this.code = code
    this.sql = sql
  }
}

export function closedError(): ResqliteError {
  return new ResqliteError('ERR_DATABASE_CLOSED', 'the database is closed')
}

export function abortError(signal: AbortSignal, sql: string): ResqliteError {
  return new ResqliteError('ABORT_ERR', 'the operation was aborted', sql, { cause: signal.reason })
}

/** Argument errors, shaped like Node's own (`code` on a TypeError / RangeError). */
export function typeError(message: string, code = 'ERR_INVALID_ARG_TYPE'): TypeError {
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
