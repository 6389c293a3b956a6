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
import { Database as Resqlite, ROW_CHANGES } from './database'
import { ResqliteError } from './errors'
import type { NativeRowChanges } from './native'
import type { Params } from './params'
import {
  beVerbose,
  type Callback,
  call,
  DEFAULT_MODE,
  ignore,
  inTick,
  KNOWN_FLAGS,
  parseArgs,
  site,
  unboundAsNull,
  type Work,
} from './sqlite3-args'
import { Backup, DEFAULT_RETRY_ERRORS } from './sqlite3-backup'
import { Connection, changesOf, parse } from './sqlite3-connection'
import { LIMITS, OPEN_FLAGS, RESULT_CODES, refusal, type Sqlite3Error, toSqlite3Error } from './sqlite3-errors'
import { ONE_SHOT, Statement } from './sqlite3-statement'
import type { OpenOptions, Row } from './types'

export type { Sqlite3Error } from './sqlite3-errors'
export { Backup, Statement }

/** Rows of an `each` read fetched at a time: a page per event-loop turn, so memory stays flat. */
const EACH_PAGE = 256
/** The 'change' event's types, by the engine's numbers (crates/engine/src/sqlite/row_changes.rs). */
const CHANGE_KINDS = ['insert', 'update', 'delete'] as const
export const { OPEN_READONLY, OPEN_READWRITE, OPEN_CREATE, OPEN_URI, OPEN_FULLMUTEX, OPEN_SHAREDCACHE } = OPEN_FLAGS
export const { OPEN_PRIVATECACHE } = OPEN_FLAGS
export const { OK, ERROR, INTERNAL, PERM, ABORT, BUSY, LOCKED, NOMEM, READONLY, INTERRUPT } = RESULT_CODES
export const { IOERR, CORRUPT, NOTFOUND, FULL, CANTOPEN, PROTOCOL, EMPTY, SCHEMA, TOOBIG } = RESULT_CODES
export const { CONSTRAINT, MISMATCH, MISUSE, NOLFS, AUTH, FORMAT, RANGE, NOTADB } = RESULT_CODES
export const { LIMIT_LENGTH, LIMIT_SQL_LENGTH, LIMIT_COLUMN, LIMIT_EXPR_DEPTH, LIMIT_COMPOUND_SELECT } = LIMITS
export const { LIMIT_VDBE_OP, LIMIT_FUNCTION_ARG, LIMIT_ATTACHED, LIMIT_LIKE_PATTERN_LENGTH } = LIMITS
export const { LIMIT_VARIABLE_NUMBER, LIMIT_TRIGGER_DEPTH, LIMIT_WORKER_THREADS } = LIMITS

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
  #tracing = false
  #profiling = false
  /** 'change' has listeners: the engine records the rows writes change (`#changed`). */
  #changing = false
  /** Statements prepared and not finalized: sqlite3 refuses to close while there are some. */
  readonly prepared = new Set<Statement>()
  /** Backups started and not finished (a token each, not the Backup, which may be collected and
   * then finished): sqlite3 refuses to close while there are some too. */
  readonly backups = new Set<object>()
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
      if (this.#changing) db[ROW_CHANGES](this.#changed)
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
      work().then(after, after)
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
    const finish = (): void => {
      this.#pending--
      after?.()
      this.#process()
    }
    work().then(finish, finish)
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
    throw this.#failure ?? refusal('SQLITE_MISUSE', 'Database handle is closed', 'MISUSE')
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

  /** Runs `sql` for `each`: a read a page at a time (memory stays flat whatever the result's
   * size, and `interrupt()` reaches it between pages), `onRow` called for each row; anything
   * else as `statement`. Resolves with the count. */
  async eachRow(sql: string, params: Params | undefined, onRow: (row: Row) => void): Promise<number> {
    const connection = this.connection()
    const parsed = parse(sql)
    let count = 0
    if (parsed.pieces.length === 1 && parsed.control === undefined && parsed.kind !== 'write') {
      connection.check(parsed, sql)
      const bound = unboundAsNull(params, parsed.pieces[0]?.parameters)
      if (this.#tracing) this.emit('trace', sql)
      try {
        const pages = connection.target.iterate(sql, bound, { signal: this.#interrupt.signal, pageRows: EACH_PAGE })
        for await (const page of pages.pages()) {
          for (const row of page as Row[]) {
            count++
            onRow(row)
          }
        }
        return count
      } catch (error) {
        // A statement that writes is refused at the first step, before it ran: run it below.
        if ((error as { code?: unknown }).code !== 'ERR_NOT_READ_ONLY' || count > 0) throw error
      }
    }
    const rows = await this.statement(sql, params, false)
    for (const row of rows) onRow(row)
    return rows.length
  }

  /** `statement.lastID` and `changes`: its own write's, or (a read) as the connection's last
   * write left them. */
  changes(statement: Statement, rows: Row[]): void {
    const last = changesOf(rows) ?? this.#connection?.last
    if (last === undefined) return
    statement.lastID = last.lastID
    statement.changes = last.changes
  }

  /** Whether `sql` runs alone (a transaction step): calls after it wait until it is done. */
  exclusive(sql: string): boolean {
    return parse(sql).control !== undefined
  }

  /** Runs `work` (which never rejects) in the scheduler's turn. */
  enqueue(work: Work, exclusive = false): void {
    this.#schedule(work, exclusive)
  }

  /** Runs `work` (which never rejects) now, ahead of the calls waiting, counted among those
   * running so that a close or an exclusive call waits for it: a Backup's step or finish, as
   * sqlite3 runs them beside its queue. */
  alongside(work: Work): void {
    this.#start(work)
  }

  #traced<T>(sql: string, work: () => Promise<T>): Promise<T> {
    if (this.#tracing) this.emit('trace', sql)
    if (!this.#profiling) return work()
    const start = performance.now()
    const profile = (): void => void this.emit('profile', sql, Math.round(performance.now() - start))
    return work().finally(profile)
  }

  /** The rows writes changed, as 'change' events (type, database, table, rowid), in the order
   * SQLite changed them, on the next tick: after the statement, before its callback. Rows past
   * the engine's bound between two takes are reported as one error. */
  readonly #changed = (taken: NativeRowChanges): void => {
    process.nextTick(() => {
      const tables = taken.tables.map((name) => name.split('\0'))
      for (let i = 0; i < taken.kinds.length; i++) {
        const [database, table] = tables[taken.tableOf[i]!]!
        this.emit('change', CHANGE_KINDS[taken.kinds[i]!], database, table, taken.rowids[i])
      }
      if (taken.dropped === 0) return
      const error = refusal(
        'ERR_RESULT_TOO_LARGE',
        `'change': ${taken.dropped} rows changed past the ${taken.kinds.length} reported between two deliveries (after each statement); their events were dropped`,
        'TOOBIG',
      )
      if (this.listenerCount('error') > 0) this.emit('error', error)
      else process.emitWarning(error)
    })
  }

  /** An error no callback takes: sqlite3 emits it on the statement, else on the database. With
   * no 'error' listener the emit throws: uncaught, on a tick of its own (as from sqlite3's libuv
   * callback), never into the queue, whose later calls and close must still run. */
  unhandled(error: Error, statement?: Statement): void {
    try {
      if (statement !== undefined && statement.listenerCount('error') > 0) statement.emit('error', error)
      else this.emit('error', error)
    } catch (thrown) {
      process.nextTick(() => {
        throw thrown
      })
    }
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
      this.changes(statement, rows)
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
      () =>
        this.statement(sql, params, method === 'get').then(
          (rows) => inTick(() => done(rows)),
          (error) => inTick(() => failed(error)),
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
  run(sql: string, ...args: [...params: unknown[], callback: (this: Statement, err: Error | null) => void]): this
  run(sql: string, ...args: unknown[]): this
  run(sql: string, ...args: unknown[]): this {
    return this.#oneShot('run', sql, args, this.run)
  }

  /** Runs `sql`, then the callback with its first row (or `undefined`). */
  get(
    sql: string,
    ...args: [...params: unknown[], callback: (this: Statement, err: Error | null, row?: Row) => void]
  ): this
  get(sql: string, ...args: unknown[]): this
  get(sql: string, ...args: unknown[]): this {
    return this.#oneShot('get', sql, args, this.get)
  }

  /** Runs `sql`, then the callback with all its rows. */
  all(
    sql: string,
    ...args: [...params: unknown[], callback: (this: Statement, err: Error | null, rows: Row[]) => void]
  ): this
  all(sql: string, ...args: unknown[]): this
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
            if (this.#tracing) this.emit('trace', text)
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
    // sqlite3's messages: not open (before the open, after the close), then closing.
    if (this.#connection === undefined || this.#failure !== undefined) {
      throw refusal('SQLITE_MISUSE', 'Database is not open')
    }
    if (this.#closing) throw refusal('SQLITE_MISUSE', 'Database is closing')
    this.#interrupt.abort()
    this.#interrupt = new AbortController()
  }

  /** `backup(filename, callback?)`: a {@link Backup} of the database into the new file
   * `filename`; or sqlite3's full form, `backup(filename, sourceName, destName, filenameIsDest,
   * callback?)`, of which resqlite takes `'main'`, `'main'`, `true`. */
  backup(filename: string, ...args: unknown[]): Backup {
    const backup =
      args.length <= 1
        ? new Backup(this, filename, 'main', 'main', true, args[0] as Callback | undefined)
        : new Backup(this, filename, args[0] as string, args[1] as string, args[2] as boolean, args[3] as Callback)
    backup.retryErrors = [...DEFAULT_RETRY_ERRORS]
    return backup
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
        if (this.prepared.size > 0 || this.backups.size > 0) {
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
        this.#failure = refusal('SQLITE_MISUSE', 'Database handle is closed', 'MISUSE')
        call(callback, this, null)
        this.emit('close')
      } else if (callback !== undefined) call(callback, this, error)
      else this.emit('error', error)
      for (const queued of this.#queue.splice(0)) this.#start(queued.work, queued.after)
    }, true)
  }

  // biome-ignore lint/suspicious/noExplicitAny: EventEmitter's own signature
  override on(event: string | symbol, listener: (...args: any[]) => void): this {
    super.on(event, listener)
    this.#hooks()
    return this
  }

  // biome-ignore lint/suspicious/noExplicitAny: EventEmitter's own signature
  override addListener(event: string | symbol, listener: (...args: any[]) => void): this {
    return this.on(event, listener)
  }

  // biome-ignore lint/suspicious/noExplicitAny: EventEmitter's own signature
  override removeListener(event: string | symbol, listener: (...args: any[]) => void): this {
    super.removeListener(event, listener)
    this.#hooks()
    return this
  }

  // biome-ignore lint/suspicious/noExplicitAny: EventEmitter's own signature
  override off(event: string | symbol, listener: (...args: any[]) => void): this {
    return this.removeListener(event, listener)
  }

  override removeAllListeners(event?: string | symbol): this {
    super.removeAllListeners(event)
    this.#hooks()
    return this
  }

  /** Whether 'trace', 'profile' and 'change' are emitted: set as listeners are added and
   * removed, as sqlite3 switches its hooks on and off (`configure('trace', …)`, the update hook). */
  #hooks(): void {
    this.#tracing = this.listenerCount('trace') > 0
    this.#profiling = this.listenerCount('profile') > 0
    const changing = this.listenerCount('change') > 0
    if (changing === this.#changing) return
    this.#changing = changing
    // Before the open: set as it completes.
    this.#connection?.db[ROW_CHANGES](changing ? this.#changed : undefined)
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
  beVerbose()
  return module.exports
}
