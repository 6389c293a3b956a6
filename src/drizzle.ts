// Drizzle ORM over resqlite (`resqlite/drizzle`, docs/integrations.md): a driver on Drizzle's
// SQLiteSession classes, as its own async drivers (libsql, sqlite-proxy) are written. Not
// sqlite-proxy itself: that sends transactions as BEGIN/COMMIT SQL, which resqlite refuses
// (transactions are `db.transaction()` so that they hold the writer).
//
// Drizzle's transactions are callbacks, so each maps onto a resqlite transaction directly:
// the callback runs as the body, and the session it is given sends to that body's `tx`.
// Queries built with fields (typed selects, `.returning()`, relational queries) take their rows
// as arrays (`rowMode: 'array'`), which Drizzle maps to objects itself.
//
// `db.batch([...])` (as Drizzle's libsql and D1 drivers have it) runs its queries in order in
// one resqlite transaction: all or nothing, one result per query. Migrations
// (`resqlite/drizzle/migrator`) run Drizzle's SQLite migration steps inside one transaction.
import * as orm from 'drizzle-orm'
import {
  createTableRelationsHelpers,
  DefaultLogger,
  type DrizzleConfig,
  type ExtractTablesWithRelations,
  entityKind,
  extractTablesRelationalConfig,
  fillPlaceholders,
  is,
  type Logger,
  NoopLogger,
  type Query,
  type RelationalSchemaConfig,
  type SQL,
  type TablesRelationalConfig,
} from 'drizzle-orm'
import type { BatchItem, BatchResponse } from 'drizzle-orm/batch'
import type { MigrationConfig, MigrationMeta } from 'drizzle-orm/migrator'
import {
  BaseSQLiteDatabase,
  type PreparedQueryConfig,
  type SelectedFieldsOrdered,
  SQLiteAsyncDialect,
  type SQLiteExecuteMethod,
  SQLitePreparedQuery,
  SQLiteSession,
  SQLiteTransaction,
  type SQLiteTransactionConfig,
} from 'drizzle-orm/sqlite-core'
import { isDatabase, readThenWrite } from './builder-support.js'
import type { Database } from './database.js'
import { typeError } from './errors.js'
import type { Params } from './params.js'
import type { Transaction } from './transaction.js'
import type { Queryable, RunResult } from './types.js'

/** Drizzle's row mapper: exported by 'drizzle-orm' at run time (its own drivers use it) but left
 * out of its type declarations. */
const mapResultRow = (
  orm as unknown as {
    mapResultRow: (
      fields: SelectedFieldsOrdered,
      row: unknown[],
      joinsNotNullableMap?: Record<string, boolean>,
    ) => unknown
  }
).mapResultRow

/** What a query's metadata says it is (Drizzle sets it on the queries it builds; raw SQL has none). */
type QueryMetadata = { type: 'select' | 'update' | 'delete' | 'insert'; tables: string[] }
type Schema = RelationalSchemaConfig<TablesRelationalConfig>
type Mapper = (rows: unknown[][], mapColumnValue?: (value: unknown) => unknown) => unknown

/** A Drizzle database over resqlite: what {@link drizzle} returns. `db.run()` resolves
 * resqlite's {@link RunResult}. */
export class ResqliteDrizzleDatabase<
  TSchema extends Record<string, unknown> = Record<string, never>,
> extends BaseSQLiteDatabase<'async', RunResult, TSchema> {
  static readonly [entityKind]: string = 'ResqliteDrizzleDatabase'
  /** The resqlite database underneath. */
  declare $client: Database

  /** Runs the queries in order in one transaction and resolves one result per query, each what
   * the query alone resolves (`db.run()`'s: resqlite's {@link RunResult}). All or nothing: the
   * first that fails rolls the whole batch back and rejects the batch with its error. */
  batch<U extends BatchItem<'sqlite'>, T extends Readonly<[U, ...U[]]>>(batch: T): Promise<BatchResponse<T>> {
    return sessionOf(this).batch(batch) as Promise<BatchResponse<T>>
  }
}

/** The session of one of this module's databases (Drizzle keeps it on the database, typed as
 * internal; resqlite/drizzle/migrator reaches it the same way). */
function sessionOf(db: object): ResqliteSession {
  const session = (db as { session?: unknown }).session
  if (!is(db, ResqliteDrizzleDatabase) || !is(session, ResqliteSession)) {
    throw typeError("expected a database made by resqlite/drizzle's drizzle()")
  }
  return session as ResqliteSession
}

/** A Drizzle database over an open resqlite {@link Database}: `drizzle(db, { schema })`. Takes
 * Drizzle's config (`schema`, `logger`, `casing`); Drizzle's query cache (`cache`) is not
 * supported. */
export function drizzle<TSchema extends Record<string, unknown> = Record<string, never>>(
  database: Database,
  config: DrizzleConfig<TSchema> = {},
): ResqliteDrizzleDatabase<TSchema> {
  if (!isDatabase(database)) {
    throw typeError('drizzle() needs an open resqlite Database')
  }
  if (config.cache !== undefined) {
    throw typeError(
      "resqlite's drizzle() does not support Drizzle's query cache (the cache option)",
      'ERR_INVALID_ARG_VALUE',
    )
  }
  const dialect = new SQLiteAsyncDialect({ casing: config.casing })
  const logger = config.logger === true ? new DefaultLogger() : config.logger || new NoopLogger()
  let schema: Schema | undefined
  if (config.schema) {
    const tables = extractTablesRelationalConfig(config.schema, createTableRelationsHelpers)
    schema = { fullSchema: config.schema, schema: tables.tables, tableNamesMap: tables.tableNamesMap }
  }
  const session = new ResqliteSession(database, dialect, schema, logger)
  // The session serves any schema; Drizzle's database is typed by the one it was given.
  const db = new ResqliteDrizzleDatabase<TSchema>(
    'async',
    dialect,
    session as unknown as SQLiteSession<'async', RunResult, TSchema, ExtractTablesWithRelations<TSchema>>,
    schema as RelationalSchemaConfig<ExtractTablesWithRelations<TSchema>> | undefined,
  )
  db.$client = database
  return db
}

class ResqliteSession extends SQLiteSession<'async', RunResult, Record<string, unknown>, TablesRelationalConfig> {
  static readonly [entityKind]: string = 'ResqliteSession'

  constructor(
    /** Where statements run: the database, or the transaction (level) this session belongs to. */
    readonly target: Database | Transaction,
    readonly asyncDialect: SQLiteAsyncDialect,
    readonly schema: Schema | undefined,
    readonly logger: Logger,
  ) {
    super(asyncDialect)
  }

  prepareQuery(
    query: Query,
    fields: SelectedFieldsOrdered | undefined,
    executeMethod: SQLiteExecuteMethod,
    _isResponseInArrayMode: boolean,
    customResultMapper?: Mapper,
    queryMetadata?: QueryMetadata,
  ): ResqlitePreparedQuery {
    return new ResqlitePreparedQuery(this, query, executeMethod, fields, customResultMapper, queryMetadata)
  }

  /** A resqlite transaction (`behavior` is its mode), the callback as its body. */
  transaction<T>(
    transaction: (
      tx: SQLiteTransaction<'async', RunResult, Record<string, unknown>, TablesRelationalConfig>,
    ) => Promise<T>,
    config?: SQLiteTransactionConfig,
  ): Promise<T> {
    return this.target.transaction(
      (tx) => transaction(new ResqliteTransaction('async', this.asyncDialect, this.within(tx), this.schema)),
      config?.behavior === undefined ? undefined : { mode: config.behavior },
    )
  }

  /** This session's twin for a transaction level. */
  within(tx: Transaction): ResqliteSession {
    return new ResqliteSession(tx, this.asyncDialect, this.schema, this.logger)
  }

  /** `db.batch()`: every item checked before any runs, then each run in order on one
   * transaction's session. */
  async batch(items: readonly unknown[]): Promise<unknown[]> {
    if (!Array.isArray(items)) throw typeError('db.batch() takes an array of Drizzle queries')
    const steps = items.map((item, index) => batchStep(item, index, this.asyncDialect))
    if (steps.length === 0) return []
    // Awaited, not returned: an error's async frames then reach the batch's caller.
    return await this.target.transaction(async (tx) => {
      const session = this.within(tx)
      const results: unknown[] = []
      for (const step of steps) results.push(await step(session))
      return results
    })
  }

  /** Drizzle's SQLite migration steps (its async dialect's), in one transaction that begins
   * IMMEDIATE, so that reading which migrations ran and running the others is one step even
   * when another connection migrates at the same time. */
  async migrate(migrations: MigrationMeta[], config: MigrationConfig): Promise<void> {
    await this.target.transaction(
      (tx) =>
        this.asyncDialect.migrate(
          migrations,
          this.within(tx) as unknown as Parameters<SQLiteAsyncDialect['migrate']>[1],
          config,
        ),
      { mode: 'immediate' },
    )
  }
}

type BatchStep = (session: ResqliteSession) => Promise<unknown>
type RawQuery = { config: { action: 'run' | 'all' | 'get' | 'values' }; getSQL: () => SQL; dialect: unknown }

/** How `db.batch()` runs one item on a transaction's session: a query builder's (or relational
 * query's) prepared query, re-made on that session; raw SQL (`db.run(sql)`, `db.all`, `db.get`,
 * `db.values`) through the session's method of the same name. An item must come from the same
 * database (`drizzle()` gives each its own `dialect`), or it would run on the wrong one. */
function batchStep(item: unknown, index: number, dialect: SQLiteAsyncDialect): BatchStep {
  const candidate = item as { _prepare?: () => unknown; constructor?: { [entityKind]?: string } } | null
  if (typeof candidate?._prepare === 'function') {
    if (candidate.constructor?.[entityKind] === 'SQLiteRaw') {
      const { config, getSQL, dialect: of } = candidate as unknown as RawQuery
      if (of === dialect) {
        const sql = getSQL()
        return (session) => (session[config.action] as (query: SQL) => Promise<unknown>).call(session, sql)
      }
    } else {
      const prepared = candidate._prepare()
      if (prepared instanceof ResqlitePreparedQuery && prepared.dialect === dialect) {
        return (session) => prepared.on(session).execute()
      }
    }
  }
  throw typeError(
    `db.batch(): item ${index} is not a query of this database (a query builder, or db.run/all/get/values)`,
  )
}

class ResqliteTransaction extends SQLiteTransaction<
  'async',
  RunResult,
  Record<string, unknown>,
  TablesRelationalConfig
> {
  static readonly [entityKind]: string = 'ResqliteTransaction'
  readonly #session: ResqliteSession

  constructor(
    resultType: 'async',
    dialect: SQLiteAsyncDialect,
    session: ResqliteSession,
    schema: Schema | undefined,
    nestedIndex = 0,
  ) {
    super(resultType, dialect, session, schema, nestedIndex)
    this.#session = session
  }

  /** A nested transaction: a savepoint, through `tx.transaction()`. */
  override transaction<T>(
    transaction: (
      tx: SQLiteTransaction<'async', RunResult, Record<string, unknown>, TablesRelationalConfig>,
    ) => Promise<T>,
  ): Promise<T> {
    const session = this.#session
    return session.target.transaction((tx) =>
      transaction(
        new ResqliteTransaction('async', session.asyncDialect, session.within(tx), this.schema, this.nestedIndex + 1),
      ),
    )
  }
}

type Config = PreparedQueryConfig & { type: 'async'; run: RunResult }

class ResqlitePreparedQuery extends SQLitePreparedQuery<Config> {
  static readonly [entityKind]: string = 'ResqlitePreparedQuery'
  /** Set by Drizzle's select builder: which joined tables' columns may all be null. */
  declare joinsNotNullableMap?: Record<string, boolean>
  /** Drizzle's `executeMethod` (private to its class). */
  readonly #method: SQLiteExecuteMethod

  constructor(
    private readonly session: ResqliteSession,
    query: Query,
    executeMethod: SQLiteExecuteMethod,
    private readonly fields: SelectedFieldsOrdered | undefined,
    private readonly customResultMapper: Mapper | undefined,
    private readonly metadata: QueryMetadata | undefined,
  ) {
    super('async', executeMethod, query, undefined, metadata, undefined)
    this.#method = executeMethod
  }

  /** The dialect of the database this query was built for. */
  get dialect(): SQLiteAsyncDialect {
    return this.session.asyncDialect
  }

  /** This query on another session (a transaction's, for `db.batch()`). */
  on(session: ResqliteSession): ResqlitePreparedQuery {
    const twin = new ResqlitePreparedQuery(
      session,
      this.query,
      this.#method,
      this.fields,
      this.customResultMapper,
      this.metadata,
    )
    twin.joinsNotNullableMap = this.joinsNotNullableMap
    return twin
  }

  #params(placeholderValues: Record<string, unknown> | undefined): Params {
    const params = fillPlaceholders(this.query.params, placeholderValues ?? {})
    this.session.logger.logQuery(this.query.sql, params)
    return params as Params
  }

  run(placeholderValues?: Record<string, unknown>): Promise<RunResult> {
    return this.session.target.execute(this.query.sql, this.#params(placeholderValues))
  }

  async all(placeholderValues?: Record<string, unknown>): Promise<unknown[]> {
    if (this.fields === undefined && this.customResultMapper === undefined) {
      return this.#rows(this.#params(placeholderValues), false)
    }
    return this.mapAllResult(await this.values(placeholderValues))
  }

  override mapAllResult(rows: unknown): unknown[] {
    const arrays = rows as unknown[][]
    if (this.customResultMapper) return this.customResultMapper(arrays) as unknown[]
    if (this.fields === undefined) return arrays
    const fields = this.fields
    return arrays.map((row) => mapResultRow(fields, row, this.joinsNotNullableMap))
  }

  async get(placeholderValues?: Record<string, unknown>): Promise<unknown> {
    if (this.fields === undefined && this.customResultMapper === undefined) {
      return (await this.#rows(this.#params(placeholderValues), false, true))[0]
    }
    return this.mapGetResult(await this.#rows(this.#params(placeholderValues), true, true))
  }

  override mapGetResult(rows: unknown): unknown {
    const arrays = rows as unknown[][]
    const row = arrays[0]
    if (row === undefined) return undefined
    if (this.customResultMapper) return this.customResultMapper(arrays)
    return mapResultRow(this.fields!, row, this.joinsNotNullableMap)
  }

  values(placeholderValues?: Record<string, unknown>): Promise<unknown[][]> {
    return this.#rows(this.#params(placeholderValues), true) as Promise<unknown[][]>
  }

  /** The rows (objects, or `arrays`): a select on the readers (`one`: its first row only), a
   * write's RETURNING rows from the writer; raw SQL, which has no metadata, tried as a read
   * first. */
  async #rows(params: Params, arrays: boolean, one = false): Promise<unknown[]> {
    const target: Queryable = this.session.target
    const sql = this.query.sql
    const read = async (): Promise<unknown[]> => {
      if (arrays && one) return present((await target.selectOne(sql, params, { rowMode: 'array' })).row)
      if (arrays) return (await target.select(sql, params, { rowMode: 'array' })).rows
      return one ? present(await target.selectOne(sql, params)) : target.select(sql, params)
    }
    const write = async (): Promise<unknown[]> =>
      (arrays
        ? (await target.execute(sql, params, { rowMode: 'array' })).rows
        : (await target.execute(sql, params)).rows) ?? []
    const type = this.metadata?.type
    if (type === 'select') return read()
    if (type !== undefined) return write()
    return readThenWrite(read, write)
  }
}

/** A row as a list of at most one. */
function present(row: unknown): unknown[] {
  return row === undefined ? [] : [row]
}
