// Kysely over resqlite (`resqlite/kysely`, docs/integrations.md): Kysely's own SQLite compiler,
// adapter and introspector, with a driver that sends selects to the readers, writes to the
// writer, and holds each Kysely transaction as a resqlite transaction.
//
// Kysely runs a transaction as begin → queries on one connection → commit or rollback, in
// separate calls, and its queries do not run inside the resqlite transaction's body (so the
// body's async context never reaches them). The driver therefore opens `db.transaction()` at
// `beginTransaction` with a body that waits until commit or rollback, and keeps its `tx` on
// the Kysely connection: the connection's queries go to that `tx` explicitly. Savepoints are
// nested `tx.transaction()` levels held the same way. Each of these steps goes through the
// connection's `executeQuery` as the statement Kysely's own SQLite driver sends (`begin`,
// `savepoint "sp"`, …), so Kysely's `log` shows them; the connection recognises the query
// objects the driver made (never SQL text) and takes the step in the statement's place.
//
// Migrations: Kysely's SqliteAdapter has no migration lock (its own driver has one connection
// behind a mutex). Here connections are many, so the adapter's lock is real: it serialises the
// migrations of one Database in this process, and each migration run is one transaction, which
// begins IMMEDIATE (so a run in another process waits for it instead of failing).
import {
  CompiledQuery,
  createQueryId,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  IdentifierNode,
  type Kysely,
  type MigrationLockOptions,
  type QueryCompiler,
  type QueryResult,
  RawNode,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type TransactionSettings,
} from 'kysely'
import { Held, isDatabase, readThenWrite } from './builder-support.js'
import type { Database } from './database.js'
import { describe, ResqliteError, typeError } from './errors.js'
import type { Params } from './params.js'
import type { Queryable } from './types.js'

/** Options of {@link ResqliteDialect}. */
export interface ResqliteDialectConfig {
  /** An open database, or a function that opens one (called once, when Kysely first needs it).
   * `kysely.destroy()` closes it. */
  database: Database | (() => Promise<Database>)
}

/** A Kysely dialect over a resqlite {@link Database}: `new Kysely<DB>({ dialect: new
 * ResqliteDialect({ database }) })`. */
export class ResqliteDialect implements Dialect {
  readonly #config: ResqliteDialectConfig
  /** The driver Kysely created last: Kysely creates the adapter right after it, and the
   * adapter's migration lock is the lock of that driver's database. */
  #driver: ResqliteDriver | undefined

  constructor(config: ResqliteDialectConfig) {
    const database = (config as ResqliteDialectConfig | undefined)?.database
    if (typeof database !== 'function' && !isDatabase(database)) {
      throw typeError('ResqliteDialect needs { database }: an open Database or a function that opens one')
    }
    this.#config = { ...config }
  }

  createDriver(): Driver {
    this.#driver = new ResqliteDriver(this.#config)
    return this.#driver
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler()
  }

  createAdapter(): DialectAdapter {
    return new ResqliteAdapter(this.#driver)
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own dialects take Kysely<any>
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db)
  }
}

/** The connections a migration runs on, whose transactions begin IMMEDIATE: reading which
 * migrations ran and running the others is then one step against other processes too (a
 * deferred transaction that read first could not write after another process had). */
const migrating = new WeakSet<DatabaseConnection>()

/** Serialises Kysely's migrations per Database, in this process: what Kysely's SQLite adapter
 * leaves to its driver's single connection. */
class MigrationLock {
  static readonly #locks = new WeakMap<object, MigrationLock>()
  #tail: Promise<void> = Promise.resolve()
  #release: (() => void) | undefined

  static of(owner: object): MigrationLock {
    const known = MigrationLock.#locks.get(owner)
    if (known !== undefined) return known
    const lock = new MigrationLock()
    MigrationLock.#locks.set(owner, lock)
    return lock
  }

  /** Resolves once every earlier holder has released the lock. */
  async acquire(): Promise<void> {
    const previous = this.#tail
    let release!: () => void
    this.#tail = new Promise<void>((resolve) => (release = resolve))
    await previous
    this.#release = release
  }

  release(): void {
    const release = this.#release
    this.#release = undefined
    release?.()
  }
}

/** Kysely's SQLite adapter with many connections at once, a real migration lock (see {@link MigrationLock}), and each
 * migration run as one transaction (`supportsTransactionalDdl`: SQLite's DDL is transactional),
 * so a run that fails leaves no part of itself behind. Kysely's Migrator takes the lock, then
 * begins the transaction (unless the Migrator's `disableTransactions` is set). */
class ResqliteAdapter extends SqliteAdapter {
  readonly #driver: ResqliteDriver | undefined

  constructor(driver: ResqliteDriver | undefined) {
    super()
    this.#driver = driver
  }

  override get supportsTransactionalDdl(): boolean {
    return true
  }

  /** Many connections at once: each is only a handle, reads from many run in parallel and
   * writes queue on the writer (`ResqliteDriver.acquireConnection`). Kysely 0.29 reads this
   * and, for SQLite's `false`, lets one connection out at a time, so a read outside an open
   * transaction would wait for its commit. (No `override`: Kysely 0.28's SQLite adapter, whose
   * types this is built against, does not declare it.) */
  get supportsMultipleConnections(): boolean {
    return true
  }

  /** Takes the lock, and marks the connection `db` runs on (the Migrator's, which then begins
   * the migration's transaction on it) to begin IMMEDIATE. */
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's adapters take Kysely<any>
  override async acquireMigrationLock(db: Kysely<any>, _options: MigrationLockOptions): Promise<void> {
    const lock = this.#lock()
    await lock.acquire()
    try {
      await db.getExecutor().provideConnection(async (connection) => {
        migrating.add(connection)
      })
    } catch (error) {
      lock.release()
      throw error
    }
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's adapters take Kysely<any>
  override async releaseMigrationLock(db: Kysely<any>, _options: MigrationLockOptions): Promise<void> {
    try {
      await db.getExecutor().provideConnection(async (connection) => {
        migrating.delete(connection)
      })
    } finally {
      this.#lock().release()
    }
  }

  /** The lock of the driver's database (every dialect over that Database shares it); this
   * adapter's own when Kysely made it without a driver. */
  #lock(): MigrationLock {
    return MigrationLock.of(this.#driver?.database ?? this)
  }
}

class ResqliteDriver implements Driver {
  readonly #config: ResqliteDialectConfig
  #db: Database | undefined

  constructor(config: ResqliteDialectConfig) {
    this.#config = config
  }

  /** The database, once `init` has opened it. */
  get database(): Database | undefined {
    return this.#db
  }

  async init(): Promise<void> {
    const { database } = this.#config
    const db = typeof database === 'function' ? await database() : database
    if (!isDatabase(db)) {
      throw typeError(`ResqliteDialect's database function resolved to ${describe(db)}, not a resqlite Database`)
    }
    this.#db = db
  }

  /** A connection is only a handle: reads from many of them run in parallel on the readers,
   * writes queue on the writer in call order. */
  async acquireConnection(): Promise<DatabaseConnection> {
    return new ResqliteConnection(this.#db!)
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (settings.isolationLevel !== undefined || settings.accessMode !== undefined) {
      // SQLite transactions are serializable and read-write; refusing beats ignoring.
      throw new ResqliteError(
        'ERR_INVALID_ARG_VALUE',
        'resqlite transactions take no isolation level or access mode (SQLite transactions are serializable)',
      )
    }
    const db = this.#db!
    await connection.executeQuery(
      control(CompiledQuery.raw('begin'), async (c) => {
        const options = migrating.has(connection) ? ({ mode: 'immediate' } as const) : undefined
        c.levels.push(await Held.begin((body) => db.transaction(body, options)))
      }),
    )
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(control(CompiledQuery.raw('commit'), (c) => c.end(0, true)))
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(control(CompiledQuery.raw('rollback'), (c) => c.end(0, false)))
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    await connection.executeQuery(
      control(savepointCommand(compile, 'savepoint', name), async (c) => {
        const outer = c.levels.at(-1)
        if (outer === undefined) throw notInTransaction('savepoint')
        c.levels.push(await Held.begin((body) => outer.tx.transaction(body), name))
      }),
    )
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    await connection.executeQuery(
      control(savepointCommand(compile, 'rollback to', name), (c) => c.end(c.savepoint(name), false)),
    )
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    await connection.executeQuery(
      control(savepointCommand(compile, 'release', name), (c) => c.end(c.savepoint(name), true)),
    )
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    await this.#db?.close()
  }
}

type Compile = QueryCompiler['compileQuery']

/** The transaction steps the driver sends through `executeQuery`: each query object the driver
 * made, with what the connection does in its place. SQL text alone (a raw `begin`) is never
 * taken for a step. */
const controls = new WeakMap<CompiledQuery, (connection: ResqliteConnection) => Promise<void>>()

function control(query: CompiledQuery, step: (connection: ResqliteConnection) => Promise<void>): CompiledQuery {
  controls.set(query, step)
  return query
}

/** `savepoint "name"` (or `rollback to`, `release`) compiled as Kysely's own SQLite driver
 * compiles it: the name as a quoted identifier. */
function savepointCommand(compile: Compile, command: string, name: string): CompiledQuery {
  const node = RawNode.createWithChildren([RawNode.createWithSql(`${command} `), IdentifierNode.create(name)])
  return compile(node, createQueryId())
}

function notInTransaction(what: string): ResqliteError {
  return new ResqliteError('ERR_TRANSACTION_FINISHED', `${what}: the connection has no open transaction`)
}

class ResqliteConnection implements DatabaseConnection {
  readonly #db: Database
  /** The open transaction, then its open savepoints, innermost last. */
  readonly levels: Held[] = []

  constructor(db: Database) {
    this.#db = db
  }

  /** Where this connection's statements run: its innermost open level, or the database. */
  get #target(): Queryable {
    return this.levels.at(-1)?.tx ?? this.#db
  }

  async executeQuery<R>(compiled: CompiledQuery, options?: { signal?: AbortSignal }): Promise<QueryResult<R>> {
    const step = controls.get(compiled)
    if (step !== undefined) {
      await step(this)
      return { rows: [] }
    }
    const { sql, query } = compiled
    const params = compiled.parameters as Params
    const target = this.#target
    const signal = options?.signal
    const read = async (): Promise<QueryResult<R>> => ({ rows: await target.select<R>(sql, params, { signal }) })
    const write = async (): Promise<QueryResult<R>> => {
      const result = await target.execute<R>(sql, params)
      // As Kysely's SqliteDialect: a statement that returns rows gives only its rows.
      if (result.rows !== undefined) return { rows: result.rows }
      return { rows: [], numAffectedRows: BigInt(result.changes), insertId: BigInt(result.lastInsertRowid) }
    }
    if (SelectQueryNode.is(query)) return read()
    return query.kind === 'RawNode' ? readThenWrite(read, write) : write()
  }

  async *streamQuery<R>(
    compiled: CompiledQuery,
    chunkSize?: number,
    options?: { signal?: AbortSignal },
  ): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiled.query)) {
      throw new ResqliteError('ERR_NOT_READ_ONLY', 'resqlite streams select queries only', compiled.sql)
    }
    const rows = this.#target.iterate<R>(compiled.sql, compiled.parameters as Params, {
      pageRows: chunkSize,
      signal: options?.signal,
    })
    for await (const page of rows.pages()) yield { rows: page }
  }

  /** The level of savepoint `name`. */
  savepoint(name: string): number {
    let at = this.levels.length - 1
    while (at > 0 && this.levels[at]!.name !== name) at--
    if (at < 1) throw new ResqliteError('ERR_INVALID_ARG_VALUE', `no open savepoint named '${name}'`)
    return at
  }

  /** Commits (or rolls back) level `at` and every level inside it, innermost first. */
  async end(at: number, commit: boolean): Promise<void> {
    if (this.levels.length <= at) throw notInTransaction(commit ? 'commit' : 'rollback')
    await Held.endFrom(this.levels, at, commit)
  }
}
