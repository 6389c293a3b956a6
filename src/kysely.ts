// Kysely over resqlite (`resqlite/kysely`, docs/integrations.md): Kysely's own SQLite compiler,
// adapter and introspector, with a driver that sends selects to the readers, writes to the
// writer, and holds each Kysely transaction as a resqlite transaction.
//
// Kysely runs a transaction as begin → queries on one connection → commit or rollback, in
// separate calls, and its queries do not run inside the resqlite transaction's body (so the
// body's async context never reaches them). The driver therefore opens `db.transaction()` at
// `beginTransaction` with a body that waits until commit or rollback, and keeps its `tx` on
// the Kysely connection: the connection's queries go to that `tx` explicitly. Savepoints are
// nested `tx.transaction()` levels held the same way.
import {
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type TransactionSettings,
} from 'kysely'
import { Held, readThenWrite } from './builder-support'
import type { Database } from './database'
import { ResqliteError } from './errors'
import type { Params } from './params'
import type { Queryable } from './types'

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

  constructor(config: ResqliteDialectConfig) {
    if (typeof config !== 'object' || config === null || config.database === undefined) {
      throw new TypeError('ResqliteDialect needs { database }: an open Database or a function that opens one')
    }
    this.#config = { ...config }
  }

  createDriver(): Driver {
    return new ResqliteDriver(this.#config)
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler()
  }

  createAdapter(): DialectAdapter {
    return new SqliteAdapter()
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own dialects take Kysely<any>
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db)
  }
}

class ResqliteDriver implements Driver {
  readonly #config: ResqliteDialectConfig
  #db: Database | undefined

  constructor(config: ResqliteDialectConfig) {
    this.#config = config
  }

  async init(): Promise<void> {
    const { database } = this.#config
    this.#db = typeof database === 'function' ? await database() : database
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
    const c = connection as ResqliteConnection
    c.levels.push(await Held.begin((body) => this.#db!.transaction(body)))
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as ResqliteConnection).end(0, true)
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as ResqliteConnection).end(0, false)
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    const c = connection as ResqliteConnection
    const outer = c.levels.at(-1)
    if (outer === undefined) throw notInTransaction('savepoint')
    c.levels.push(await Held.begin((body) => outer.tx.transaction(body), name))
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    const c = connection as ResqliteConnection
    await c.end(c.savepoint(name), false)
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    const c = connection as ResqliteConnection
    await c.end(c.savepoint(name), true)
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    await this.#db?.close()
  }
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
    let failure: unknown
    for (const level of this.levels.splice(at).reverse()) {
      try {
        await level.end(commit)
      } catch (error) {
        failure ??= error
      }
    }
    if (failure !== undefined) throw failure
  }
}
