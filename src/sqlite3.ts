// resqlite/sqlite3 (docs/integrations.md): the `sqlite3` module's API (node-sqlite3: callbacks,
// `Database`, `Statement`, serialize/parallelize) over one resqlite Database, so that the code
// and the tools written for it (Sequelize, TypeORM, Knex) run on resqlite by changing the module
// they are given.
//
// Scheduling is sqlite3's (its Database::Schedule and ::Process): a call made in serialized
// mode waits until every call before it has completed and runs alone; in parallel mode calls
// start at once (resqlite then runs reads in parallel and writes in call order). Calls made
// before the database is open wait for it. A prepared statement's calls run in their order.
import { EventEmitter } from 'node:events'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { Database as Resqlite } from './database'
import { ResqliteError } from './errors'
import type { Params, Value } from './params'
import { Connection, parse } from './sqlite3-connection'
import { LIMITS, OPEN_FLAGS, RESULT_CODES, refusal, type Sqlite3Error, toSqlite3Error } from './sqlite3-errors'
import type { OpenOptions, Row } from './types'

export type { Sqlite3Error } from './sqlite3-errors'
export const { OPEN_READONLY, OPEN_READWRITE, OPEN_CREATE, OPEN_URI, OPEN_FULLMUTEX, OPEN_SHAREDCACHE } = OPEN_FLAGS
export const { OPEN_PRIVATECACHE } = OPEN_FLAGS
export const { OK, ERROR, INTERNAL, PERM, ABORT, BUSY, LOCKED, NOMEM, READONLY, INTERRUPT } = RESULT_CODES
export const { IOERR, CORRUPT, NOTFOUND, FULL, CANTOPEN, PROTOCOL, EMPTY, SCHEMA, TOOBIG } = RESULT_CODES
export const { CONSTRAINT, MISMATCH, MISUSE, NOLFS, AUTH, FORMAT, RANGE, NOTADB } = RESULT_CODES
export const { LIMIT_LENGTH, LIMIT_SQL_LENGTH, LIMIT_COLUMN, LIMIT_EXPR_DEPTH, LIMIT_COMPOUND_SELECT } = LIMITS
export const { LIMIT_VDBE_OP, LIMIT_FUNCTION_ARG, LIMIT_ATTACHED, LIMIT_LIKE_PATTERN_LENGTH } = LIMITS
export const { LIMIT_VARIABLE_NUMBER, LIMIT_TRIGGER_DEPTH, LIMIT_WORKER_THREADS } = LIMITS

const ignore = (): void => {}
const DONE = Promise.resolve()

type Callback = (this: unknown, err: Error | null, ...results: unknown[]) => void
/** A call's work. It calls `finish` (or its promise settles) once the call's result is in,
 * before the user's callback runs: the next call then starts in the same microtask, so awaited
 * reads in a row keep sharing resqlite's snapshot (experiments/061). */
type Work = (finish: () => void) => Promise<void>

const DEFAULT_MODE = OPEN_FLAGS.OPEN_READWRITE | OPEN_FLAGS.OPEN_CREATE | OPEN_FLAGS.OPEN_FULLMUTEX
/** Flags resqlite has no use for: it keeps its connections thread-safe and private itself. */
const KNOWN_FLAGS = DEFAULT_MODE | OPEN_FLAGS.OPEN_READONLY | OPEN_FLAGS.OPEN_URI | OPEN_FLAGS.OPEN_PRIVATECACHE

/** Calls a user's callback; what it throws surfaces as an uncaught exception (as from sqlite3's
 * native callbacks), not inside the queue, which goes on. */
function call(callback: Callback | undefined, self: unknown, ...args: unknown[]): void {
  if (callback === undefined) return
  try {
    callback.apply(self, args as [Error | null, ...unknown[]])
  } catch (error) {
    process.nextTick(() => {
      throw error
    })
  }
}

/** sqlite3's parameters after the SQL: an array (by position), an object (by name: `$a`, `:a`,
 * `@a` or an index), or the values themselves; a function last is the callback. */
function parseArgs(args: readonly unknown[], callbacks = 1): { params: Params | undefined; fns: Callback[] } {
  let end = args.length
  const fns: Callback[] = []
  while (fns.length < callbacks && end > 0 && typeof args[end - 1] === 'function') fns.unshift(args[--end] as Callback)
  if (end === 0) return { params: undefined, fns }
  const first = args[0]
  if (Array.isArray(first)) return { params: first.map(bindValue), fns }
  if (first === null || typeof first !== 'object' || first instanceof Date || first instanceof RegExp) {
    return { params: args.slice(0, end).map(bindValue), fns }
  }
  if (ArrayBuffer.isView(first)) return { params: args.slice(0, end).map(bindValue), fns }
  const named: Record<string, Value> = {}
  const positional: Value[] = []
  for (const [key, value] of Object.entries(first)) {
    if (/^[1-9][0-9]*$/.test(key)) positional[Number(key) - 1] = bindValue(value)
    else named[/^[$:@]/.test(key) ? key.slice(1) : key] = bindValue(value)
  }
  if (positional.length === 0) return { params: named, fns }
  if (Object.keys(named).length > 0) {
    throw refusal('ERR_INVALID_ARG_VALUE', 'parameters by index and by name in one object', 'RANGE')
  }
  return { params: Array.from(positional, (v) => v ?? null), fns }
}

/** A value as sqlite3 binds it, where resqlite's own binding would refuse it: `undefined` is
 * NULL, a boolean 1 or 0, a `Date` its milliseconds, a `RegExp` its text. Anything else goes to
 * resqlite as it is (so `NaN` and plain objects are refused, not stored as NULL or text). */
function bindValue(value: unknown): Value {
  // Kept undefined until the statement's parameters are known (see unboundAsNull).
  if (value === undefined) return value as unknown as Value
  if (typeof value === 'boolean') return value ? 1 : 0
  if (value instanceof Date) return value.getTime()
  if (value instanceof RegExp) return String(value)
  return value as Value
}

/** sqlite3 leaves a parameter it was given no value for NULL (resqlite refuses the call):
 * positional values are padded, named ones the object lacks are given as null, and an
 * `undefined` is NULL (one past the statement's parameters is not bound at all, as in sqlite3). */
function unboundAsNull(
  params: Params | undefined,
  parameters: { readonly count: number; readonly names: readonly string[] } | undefined,
): Params | undefined {
  const count = parameters?.count ?? 0
  if (params === undefined || Array.isArray(params)) {
    const given = (params ?? []) as (Value | undefined)[]
    if (given.length === count && !given.includes(undefined)) return params
    const values = given.filter((value, at) => at < count || value !== undefined).map((value) => value ?? null)
    while (values.length < count) values.push(null)
    return values
  }
  const filled: Record<string, Value> = {}
  for (const name of parameters?.names ?? []) filled[name] = null
  for (const [name, value] of Object.entries(params as Record<string, Value | undefined>)) filled[name] = value ?? null
  return filled
}

/** Set by {@link verbose}: errors then carry the stack of the call that queued their work. */
let verbosity = false
const NO_SITE: { stack?: string } = {}

/** The stack of the application's call, to give the error of the work it queued; taken in
 * verbose mode only, as sqlite3 does: it costs more than a small read (about 30 µs under
 * async hooks, measured with bench/lanes point-awaited). */
// biome-ignore lint/complexity/noBannedTypes: any function or class, as Error.captureStackTrace takes
function site(fn: Function): { stack?: string } {
  if (!verbosity) return NO_SITE
  const holder: { stack?: string } = {}
  Error.captureStackTrace(holder, fn)
  return holder
}

export class Database extends EventEmitter {
  #connection: Connection | undefined
  #failure: Sqlite3Error | undefined
  #closing = false
  #serialized = false
  /** sqlite3's scheduler: calls running, calls waiting, and whether an exclusive one runs. */
  #pending = 0
  #locked = false
  readonly #queue: { work: Work; exclusive: boolean; after: (() => void) | undefined }[] = []
  /** Settings given before the open started (configure, loadExtension right after `new`). */
  readonly #options: OpenOptions = {}
  readonly #extensions: string[] = []
  readonly #extensionCallbacks: Callback[] = []
  #interrupt = new AbortController()
  /** Statements prepared and not finalized: sqlite3 refuses to close while there are some. */
  readonly prepared = new Set<Statement>()
  readonly filename: string
  readonly mode: number

  constructor(filename: string, mode?: number | Callback, callback?: Callback) {
    super()
    if (typeof filename !== 'string') {
      throw Object.assign(new TypeError('Database: the filename must be a string'), { code: 'ERR_INVALID_ARG_TYPE' })
    }
    if (typeof mode === 'function') {
      callback = mode
      mode = undefined
    }
    this.filename = filename
    this.mode = typeof mode === 'number' ? mode : DEFAULT_MODE
    // Settings given right after `new` (sqlite3 opens on its thread pool meanwhile) join the open.
    process.nextTick(() => void this.#open(callback))
  }

  /** Whether the database is open: as sqlite3's `open` property. */
  get open(): boolean {
    return this.#connection !== undefined && !this.#closing
  }

  /** The resqlite Database underneath, once open: live queries (`stream`), `backup` and the
   * rest of resqlite's API over the same database. */
  get resqlite(): Resqlite | undefined {
    return this.#connection?.db
  }

  async #open(callback: Callback | undefined): Promise<void> {
    let path: string
    try {
      path = this.#path()
      this.#options.readonly = (this.mode & OPEN_FLAGS.OPEN_READONLY) !== 0 || this.#options.readonly === true
      if (this.#extensions.length > 0) this.#options.extensions = this.#extensions
      const db = await Resqlite.open(path, this.#options)
      // sqlite3's connections start with foreign keys off (resqlite's with them on): the tools
      // on top turn them on when they want them. Writes run on the writer alone.
      if (this.#options.readonly !== true) await db.execute('PRAGMA foreign_keys = OFF')
      this.#connection = new Connection(db)
    } catch (error) {
      this.#failure = toSqlite3Error(error)
    }
    for (const done of this.#extensionCallbacks) call(done, this, this.#failure ?? null)
    if (this.#failure === undefined) {
      call(callback, this, null)
      this.emit('open')
    } else if (callback !== undefined) call(callback, this, this.#failure)
    else this.emit('error', this.#failure)
    this.#process()
  }

  /** The path resqlite opens: `''` is a private database as `':memory:'` is (both gone after
   * close); a `file:` URI's path and `mode`. */
  #path(): string {
    let name = this.filename
    if (name === '' || name === ':memory:') return ':memory:'
    if (name.startsWith('file:')) {
      const [rest = '', query = ''] = name.slice(5).split('#')[0]!.split('?')
      for (const [key, value] of new URLSearchParams(query)) {
        if (key === 'mode' && value === 'memory') return ':memory:'
        if (key === 'mode' && value === 'ro') this.#options.readonly = true
        else if (
          !(key === 'mode' && (value === 'rw' || value === 'rwc')) &&
          !(key === 'cache' && value === 'private')
        ) {
          throw refusal(
            'ERR_INVALID_ARG_VALUE',
            `URI parameter ${key}: resqlite/sqlite3 takes mode and cache=private only`,
          )
        }
      }
      name = decodeURIComponent(rest.replace(/^\/\/(localhost)?(?=\/)/, ''))
      if (name === ':memory:') return ':memory:'
    }
    if ((this.mode & ~KNOWN_FLAGS) !== 0) {
      throw refusal('ERR_INVALID_ARG_VALUE', 'open flags: resqlite/sqlite3 takes no OPEN_SHAREDCACHE or unknown flags')
    }
    if ((this.mode & OPEN_FLAGS.OPEN_CREATE) === 0 && !existsSync(resolve(name))) {
      throw toSqlite3Error(
        new ResqliteError('SQLITE_CANTOPEN', `unable to open database file: ${name} does not exist (no OPEN_CREATE)`),
      )
    }
    return name
  }

  // ---- sqlite3's scheduler ----

  #schedule(work: Work, exclusive = false, after?: () => void): void {
    if (this.#closing) {
      work(ignore).then(after, after)
      return
    }
    exclusive ||= this.#serialized
    // Behind a call still waiting (a close, a transaction step) a call waits too: FIFO.
    const waits = this.#queue.length > 0 || ((this.#locked || exclusive) && this.#pending > 0)
    if (this.#connection === undefined || waits) {
      this.#queue.push({ work, exclusive, after })
    } else {
      this.#locked = exclusive
      this.#start(work, after)
    }
  }

  #start(work: Work, after?: () => void): void {
    this.#pending++
    let finished = false
    const finish = (): void => {
      if (finished) return
      finished = true
      this.#pending--
      after?.()
      this.#process()
    }
    work(finish).then(finish, finish)
  }

  #process(): void {
    if (this.#connection === undefined && this.#failure === undefined) return
    while ((!this.#locked || this.#pending === 0) && this.#queue.length > 0) {
      const next = this.#queue[0]!
      if (next.exclusive && this.#pending > 0) break
      this.#queue.shift()
      this.#locked = next.exclusive
      this.#start(next.work, next.after)
      if (this.#locked) break
    }
  }

  /** The connection, or the reason there is none (a failed open, a closed database). */
  connection(): Connection {
    if (this.#connection !== undefined && !this.#closing) return this.#connection
    throw this.#failure ?? refusal('SQLITE_MISUSE', 'Database is closed', 'MISUSE')
  }

  // ---- statements ----

  /** Runs one statement for `run`, `get`, `all` or `each`: its rows. Rejects with resqlite's
   * error (the caller converts it). */
  statement(sql: string, params: Params | undefined, one: boolean): Promise<Row[]> {
    try {
      const connection = this.connection()
      const parsed = parse(sql)
      if (parsed.pieces.length > 1) {
        throw refusal(
          'ERR_MULTIPLE_STATEMENTS',
          'several statements in one run/get/all/each/prepare (sqlite3 would run the first alone): use exec',
          'ERROR',
        )
      }
      const bound = unboundAsNull(params, parsed.pieces[0]?.parameters)
      const step = parsed.control
      // Handed back as resqlite's own promise: the caller's one `then` delivers the result.
      return this.#traced(sql, () =>
        step === undefined
          ? connection.run(parsed, sql, bound, one, this.#interrupt.signal)
          : connection.control(step, sql).then(() => []),
      )
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /** `statement.lastID` and `changes` as the connection's last write left them. */
  changes(statement: Statement): void {
    const last = this.#connection?.last
    if (last === undefined) return
    statement.lastID = last.lastID
    statement.changes = last.changes
  }

  /** Whether `sql` runs alone (a transaction step): calls after it wait until it is done. */
  exclusive(sql: string): boolean {
    return parse(sql).control !== undefined
  }

  /** Runs `work` (which never rejects) in the scheduler's turn, then `after`. */
  enqueue(work: Work, exclusive = false, after?: () => void): void {
    this.#schedule(work, exclusive, after)
  }

  #traced<T>(sql: string, work: () => Promise<T>): Promise<T> {
    if (this.listenerCount('trace') > 0) this.emit('trace', sql)
    if (this.listenerCount('profile') === 0) return work()
    const start = performance.now()
    const profile = (): void => void this.emit('profile', sql, Math.round(performance.now() - start))
    return work().finally(profile)
  }

  /** An error no callback takes: sqlite3 emits it on the statement, else on the database. */
  unhandled(error: Error, statement?: Statement): void {
    if (statement !== undefined && statement.listenerCount('error') > 0) statement.emit('error', error)
    else this.emit('error', error)
  }

  #oneShot(method: 'run' | 'get' | 'all', sql: string, args: unknown[], fn: (...a: never[]) => unknown): this {
    const where = site(fn)
    const statement = new Statement(this, sql, ONE_SHOT)
    let parsedArgs: ReturnType<typeof parseArgs>
    try {
      parsedArgs = parseArgs(args)
    } catch (error) {
      this.#fail(error as Error, typeof args.at(-1) === 'function' ? (args.at(-1) as Callback) : undefined, statement)
      return this
    }
    const { params, fns } = parsedArgs
    const [callback] = fns
    const done = (rows: Row[]): void => {
      this.changes(statement)
      if (method === 'run') call(callback, statement, null)
      else if (method === 'get') call(callback, statement, null, rows[0])
      else call(callback, statement, null, rows)
    }
    const failed = (error: unknown): void => {
      const converted = toSqlite3Error(error, where)
      if (callback !== undefined) call(callback, statement, converted)
      else this.unhandled(converted)
    }
    this.#schedule(
      (finish) =>
        this.statement(sql, params, method === 'get').then(
          (rows) => (finish(), done(rows)),
          (error) => (finish(), failed(error)),
        ),
      this.exclusive(sql),
    )
    return this
  }

  #fail(error: Error, callback: Callback | undefined, self: unknown): void {
    const converted = toSqlite3Error(error)
    process.nextTick(() => (callback !== undefined ? call(callback, self, converted) : this.unhandled(converted)))
  }

  /** Runs `sql` (with parameters after it), then the callback with `this.lastID` and `this.changes`. */
  run(sql: string, ...args: unknown[]): this {
    return this.#oneShot('run', sql, args, this.run)
  }

  /** Runs `sql`, then the callback with its first row (or `undefined`). */
  get(sql: string, ...args: unknown[]): this {
    return this.#oneShot('get', sql, args, this.get)
  }

  /** Runs `sql`, then the callback with all its rows. */
  all(sql: string, ...args: unknown[]): this {
    return this.#oneShot('all', sql, args, this.all)
  }

  /** Runs `sql`: the first callback gets each row, the second (if given) the count. */
  each(sql: string, ...args: unknown[]): this {
    const statement = new Statement(this, sql, ONE_SHOT)
    statement.each(...args)
    return this
  }

  /** Runs `sql`, then the callback with its rows as an object keyed by their first column. */
  map(sql: string, ...args: unknown[]): this {
    new Statement(this, sql, ONE_SHOT).map(...args)
    return this
  }

  /** Runs a script (no parameters), then the callback. Its `BEGIN`/`COMMIT`/`SAVEPOINT`s are
   * resqlite transaction steps. */
  exec(sql: string, callback?: Callback): this {
    const where = site(this.exec)
    this.#schedule(
      async () => {
        try {
          await this.connection().exec(parse(sql), sql, (text) => {
            if (this.listenerCount('trace') > 0) this.emit('trace', text)
          })
          call(callback, this, null)
        } catch (error) {
          const converted = toSqlite3Error(error, where)
          if (callback !== undefined) call(callback, this, converted)
          else this.unhandled(converted)
        }
      },
      // A script that holds a transaction step runs alone.
      parse(sql).pieces.length !== 1 || this.exclusive(sql),
    )
    return this
  }

  /** Prepares `sql` (parameters after it are bound): a {@link Statement}. */
  prepare(sql: string, ...args: unknown[]): Statement {
    const { fns } = parseArgs(args)
    const statement = new Statement(this, sql, fns[0])
    const rest = args.slice(0, args.length - fns.length)
    if (rest.length > 0) statement.bind(...rest)
    return statement
  }

  /** Calls after this one, inside `callback` (or all, without one), run one at a time. */
  serialize(callback?: () => void): void {
    this.#mode(true, callback)
  }

  /** Calls after this one, inside `callback` (or all, without one), start at once. */
  parallelize(callback?: () => void): void {
    this.#mode(false, callback)
  }

  #mode(serialized: boolean, callback: (() => void) | undefined): void {
    const before = this.#serialized
    this.#serialized = serialized
    if (typeof callback !== 'function') return
    try {
      callback()
    } finally {
      this.#serialized = before
    }
  }

  /** `configure('busyTimeout', ms)`; `'trace'`, `'profile'` (set through `on`). */
  configure(option: string, value: unknown, ...rest: unknown[]): void {
    if (option === 'trace' || option === 'profile') return
    if (option === 'busyTimeout') {
      if (!Number.isInteger(value) || (value as number) < 0) {
        throw Object.assign(new TypeError('configure: busyTimeout must be an integer ≥ 0'), {
          code: 'ERR_INVALID_ARG_VALUE',
        })
      }
      // Before the open: every connection's; after: the writer's, which waits for other
      // processes' locks (a WAL reader does not).
      if (this.#connection === undefined) this.#options.busyTimeout = value as number
      else this.enqueue(() => this.connection().db.execute(`PRAGMA busy_timeout = ${value}`).then(ignore, ignore))
      return
    }
    throw refusal(
      'ERR_INVALID_ARG_VALUE',
      option === 'limit'
        ? `configure('limit', ${String(value)}, ${String(rest[0])}): resqlite sets no per-connection limits`
        : `configure: unknown option ${String(option)}`,
    )
  }

  /** Loads a SQLite extension. resqlite loads extensions on every connection as it opens, so
   * it must be called right after `new Database()` (before the open completes). */
  loadExtension(path: string, callback?: Callback): this {
    if (this.#connection !== undefined || this.#failure !== undefined) {
      this.#fail(
        refusal(
          'ERR_EXTENSION',
          'loadExtension after the database opened: resqlite loads extensions on every connection as it opens; call it right after new Database()',
          'ERROR',
        ),
        callback,
        this,
      )
    } else {
      this.#extensions.push(path)
      if (callback !== undefined) this.#extensionCallbacks.push(callback)
    }
    return this
  }

  /** Interrupts the reads running now (they fail with `SQLITE_INTERRUPT`); writes run to their end. */
  interrupt(): void {
    if (this.#closing) throw refusal('SQLITE_MISUSE', 'Database is closing')
    if (this.#connection === undefined) throw refusal('SQLITE_MISUSE', 'Database is not open')
    this.#interrupt.abort()
    this.#interrupt = new AbortController()
  }

  /** Calls `callback` once every call before it has completed. */
  wait(callback?: Callback): this {
    this.#schedule(async () => call(callback, this, null), true)
    return this
  }

  /** Closes once every call before it has completed (an open transaction is rolled back). */
  close(callback?: Callback): void {
    const where = site(this.close)
    this.#schedule(async () => {
      let error: Sqlite3Error | null = null
      try {
        const connection = this.connection()
        if (this.prepared.size > 0) {
          throw new ResqliteError('SQLITE_BUSY', 'unable to close due to unfinalized statements or unfinished backups')
        }
        this.#closing = true
        try {
          await connection.abandon()
        } finally {
          await connection.db.close()
        }
      } catch (failure) {
        error = toSqlite3Error(failure, where)
      }
      if (error === null) {
        this.#failure = refusal('SQLITE_MISUSE', 'Database is closed', 'MISUSE')
        call(callback, this, null)
        this.emit('close')
      } else if (callback !== undefined) call(callback, this, error)
      else this.emit('error', error)
      for (const queued of this.#queue.splice(0)) this.#start(queued.work, queued.after)
    }, true)
  }

  // biome-ignore lint/suspicious/noExplicitAny: EventEmitter's own signature
  override on(event: string | symbol, listener: (...args: any[]) => void): this {
    if (event === 'change') {
      throw refusal(
        'ERR_INVALID_ARG_VALUE',
        "resqlite/sqlite3 emits no 'change' events (no per-row update hook): subscribe to a live query with db.resqlite.stream()",
      )
    }
    return super.on(event, listener)
  }

  // biome-ignore lint/suspicious/noExplicitAny: EventEmitter's own signature
  override addListener(event: string | symbol, listener: (...args: any[]) => void): this {
    return this.on(event, listener)
  }
}

/** Marks a Statement made by the Database's own one-shot calls: it prepares nothing. */
const ONE_SHOT = Symbol('one-shot')

export class Statement extends EventEmitter {
  readonly #db: Database
  readonly sql: string
  lastID: number | bigint | undefined
  changes: number | undefined
  /** The parameters bound last (`bind`, or given to a call). */
  #params: Params | undefined
  /** sqlite3's `get` steps on from the row it returned last until the statement is reset. */
  #cursor: { at: number; rows: Row[] | undefined } | undefined
  #finalized = false
  /** The statement's calls waiting, in order: each is handed to the Database's scheduler once
   * the one before has completed (the prepare first). */
  readonly #ops: Work[] = []
  #running = false
  #prepareError: Sqlite3Error | undefined

  constructor(db: Database, sql: string, callback?: Callback | typeof ONE_SHOT) {
    super()
    this.#db = db
    this.sql = sql
    if (callback === ONE_SHOT) return
    db.prepared.add(this)
    // Compiled once (on a reader, or in the open transaction, to see its schema): its errors go
    // to the callback; the statement's later calls get them too.
    const where = site(Statement)
    this.#push(async () => {
      try {
        const connection = db.connection()
        const parsed = parse(sql)
        if (parsed.pieces.length > 1) {
          throw refusal('ERR_MULTIPLE_STATEMENTS', 'several statements in one prepare: use exec', 'ERROR')
        }
        connection.check(parsed, sql)
        if (parsed.control === undefined) await connection.target.columns(sql)
        if (typeof callback === 'function') call(callback, this, null)
      } catch (error) {
        db.prepared.delete(this)
        this.#prepareError = toSqlite3Error(error, where)
        if (typeof callback === 'function') call(callback, this, this.#prepareError)
        else db.unhandled(this.#prepareError, this)
      }
    })
  }

  /** Queues `work` after the statement's earlier calls, in the Database's scheduler. */
  #queue(
    fn: (...args: never[]) => unknown,
    args: unknown[],
    callbacks: number,
    work: (params: Params | undefined, fns: Callback[], finish: () => void) => Promise<void>,
  ): this {
    const where = site(fn)
    let parsed: ReturnType<typeof parseArgs>
    try {
      parsed = parseArgs(args, callbacks)
    } catch (error) {
      const last = args.at(-1)
      this.#errorTo(toSqlite3Error(error, where), typeof last === 'function' ? (last as Callback) : undefined)
      return this
    }
    const { params, fns } = parsed
    const finalized = this.#finalized
    const failed = (error: unknown): void => this.#errorTo(toSqlite3Error(error, where), fns.at(-1))
    // Not an async function: each promise costs a small read's worth under async hooks.
    this.#push((finish) => {
      try {
        if (finalized) throw refusal('SQLITE_MISUSE', 'Statement is already finalized', 'MISUSE')
        if (this.#prepareError !== undefined) throw this.#prepareError
        return work(params, fns, finish).then(undefined, (error) => (finish(), failed(error)))
      } catch (error) {
        finish()
        failed(error)
        return DONE
      }
    })
    return this
  }

  /** Queues `op` (which never rejects) after the statement's earlier calls. */
  #push(op: Work): void {
    this.#ops.push(op)
    if (!this.#running) this.#next()
  }

  #next(): void {
    const op = this.#ops.shift()
    this.#running = op !== undefined
    if (op === undefined) return
    this.#db.enqueue(op, this.#db.exclusive(this.sql), () => this.#next())
  }

  #errorTo(error: Sqlite3Error, callback: Callback | undefined): void {
    if (callback !== undefined) call(callback, this, error)
    else this.#db.unhandled(error, this)
  }

  /** Parameters given to a call replace those bound before, and start the statement over. */
  #bound(params: Params | undefined): Params | undefined {
    if (params !== undefined) {
      this.#params = params
      this.#cursor = undefined
    }
    return this.#params
  }

  /** Runs the statement; its `lastID` and `changes` are set once the rows are in. */
  #rows(params: Params | undefined, one: boolean): Promise<Row[]> {
    return this.#db.statement(this.sql, params, one)
  }

  bind(...args: unknown[]): this {
    return this.#queue(this.bind, args, 1, async (params, [callback]) => {
      this.#params = params
      this.#cursor = undefined
      call(callback, this, null)
    })
  }

  reset(callback?: Callback): this {
    return this.#queue(this.reset, callback === undefined ? [] : [callback], 1, async (_params, [done]) => {
      this.#cursor = undefined
      call(done, this, null)
    })
  }

  run(...args: unknown[]): this {
    return this.#queue(this.run, args, 1, (params, [callback], finish) =>
      this.#rows(this.#bound(params), true).then((rows) => {
        this.#db.changes(this)
        finish()
        // A read stepped once: a `get` after it goes on from its first row.
        this.#cursor = rows.length > 0 ? { at: 1, rows: undefined } : { at: Infinity, rows: undefined }
        call(callback, this, null)
      }),
    )
  }

  get(...args: unknown[]): this {
    return this.#queue(this.get, args, 1, async (params, [callback], finish) => {
      const bound = this.#bound(params)
      const cursor = this.#cursor
      let row: Row | undefined
      if (cursor === undefined) {
        row = (await this.#rows(bound, true))[0]
        this.#cursor = { at: row === undefined ? Infinity : 1, rows: undefined }
      } else if (cursor.at !== Infinity) {
        cursor.rows ??= await this.#rows(bound, false)
        row = cursor.rows[cursor.at]
        cursor.at = row === undefined ? Infinity : cursor.at + 1
      }
      call(callback, this, null, row)
    })
  }

  all(...args: unknown[]): this {
    return this.#queue(this.all, args, 1, (params, [callback], finish) =>
      this.#rows(this.#bound(params), false).then((rows) => {
        this.#db.changes(this)
        this.#cursor = { at: Infinity, rows: undefined }
        finish()
        call(callback, this, null, rows)
      }),
    )
  }

  each(...args: unknown[]): this {
    return this.#queue(this.each, args, 2, async (params, fns) => {
      const [row, complete] = fns.length === 2 ? fns : [fns[0], undefined]
      const rows = await this.#rows(this.#bound(params), false)
      this.#cursor = { at: Infinity, rows: undefined }
      for (const each of rows) call(row, this, null, each)
      call(complete, this, null, rows.length)
    })
  }

  map(...args: unknown[]): this {
    return this.#queue(this.map, args, 1, async (params, [callback], finish) => {
      const rows = await this.#rows(this.#bound(params), false)
      this.#cursor = { at: Infinity, rows: undefined }
      const result: Record<string, unknown> = {}
      if (rows.length > 0) {
        const keys = Object.keys(rows[0]!)
        const [key, value] = keys as [string, string]
        for (const row of rows) result[String(row[key])] = keys.length > 2 ? row : row[value]
      }
      call(callback, this, null, result)
    })
  }

  /** Finalizes after the calls queued before; later calls fail. Returns the Database. */
  finalize(callback?: Callback): Database {
    this.#queue(this.finalize, callback === undefined ? [] : [callback], 1, async (_params, [done]) => {
      call(done, this, null)
    })
    this.#finalized = true
    this.#db.prepared.delete(this)
    return this.#db
  }
}

/** sqlite3's `cached.Database`: one Database per resolved file name (`''` and `':memory:'`
 * are never shared). A plain function, as sqlite3's: called with or without `new`. */
export const cached = {
  objects: {} as Record<string, Database>,
  // biome-ignore lint/complexity/useArrowFunction: `new cached.Database(…)` needs a constructible function
  Database: function (filename: string, mode?: number | Callback, callback?: Callback): Database {
    if (filename === '' || filename === ':memory:') return new Database(filename, mode, callback)
    const file = resolve(filename)
    const known = cached.objects[file]
    if (known === undefined) {
      const db = new Database(filename, mode, callback)
      cached.objects[file] = db
      return db
    }
    const done = typeof mode === 'function' ? mode : callback
    if (typeof done === 'function') {
      if (known.open) process.nextTick(() => call(done, known, null))
      else known.once('open', () => call(done, known, null))
    }
    return known
  },
}

/** sqlite3's `verbose()`: from now on, errors carry the stack of the call that queued their
 * work (else the stack of where the work ran). Returns the module. */
export function verbose(): typeof import('./sqlite3') {
  verbosity = true
  return module.exports
}
