// Prisma 7 over resqlite (`resqlite/prisma`, docs/integrations.md): a driver adapter factory, used
// as Prisma's own: `new PrismaClient({ adapter: new PrismaResqlite({ url }) })`, or over an open
// Database: `new PrismaResqlite(db)`.
//
// It gives Prisma what @prisma/adapter-better-sqlite3 7.10 gives it, value for value (the
// differential test, test/prisma.test.mjs, runs one program through both): the same column
// types (from the declared types of the columns read, else from the first non-null value), the
// same conversions of arguments and results, the same errors. Where the statements run is
// resqlite's: reads on the readers (or the JS thread), writes on the writer, and a Prisma
// transaction (interactive or batch) as one `db.transaction()` held across Prisma's calls
// (builder-support.ts's Held), its statements sent to its `tx` explicitly.
//
// Nothing here imports Prisma at run time, so `resqlite` needs no Prisma package: the public
// types are @prisma/client's (an optional peer: every Prisma app has it), the inner ones
// @prisma/driver-adapter-utils' (a development dependency, erased from the build), and the error
// class is recognised by its name, as Prisma's client (which bundles its own copy of the utils)
// recognises every adapter's.
import type { SqlDriverAdapterFactory } from '@prisma/client/runtime/client'
import type * as Prisma from '@prisma/driver-adapter-utils'
import { Held, isDatabase, readThenWrite } from './builder-support.js'
import { Database } from './database.js'
import { ResqliteError, typeError } from './errors.js'
import type { Params } from './params.js'
import type { Transaction as ResqliteTransaction } from './transaction.js'
import type { OpenOptions, Queryable } from './types.js'

/** Options of {@link PrismaResqlite}, as @prisma/adapter-better-sqlite3's second argument. */
export interface PrismaResqliteOptions {
  /** How a DateTime argument is stored: `'iso8601'` (the default, as Prisma's other SQLite
   * adapters) or `'unixepoch-ms'`. */
  timestampFormat?: 'iso8601' | 'unixepoch-ms'
  /** The shadow database `prisma migrate diff` and `migrate dev` use through the adapter
   * (default `':memory:'`). */
  shadowDatabaseUrl?: string
}

/** `{ url }` (a path, `file:` optional) and the options of `Database.open`, which
 * `connect()` opens it with (`safeIntegers` is always on: Prisma reads 64-bit integers). */
export type PrismaResqliteConfig = { url: string } & Omit<OpenOptions, 'safeIntegers'>

// Prisma's column types (ColumnTypeEnum of @prisma/driver-adapter-utils), those SQLite gives.
const Int32 = 0
const Int64 = 1
const Float = 2
const Double = 3
const Numeric = 4
const Boolean_ = 5
const Text = 7
const Date_ = 8
const Time = 9
const DateTime = 10
const Json = 11
const Bytes = 13
const UnknownNumber = 128

/** A declared type's column type, as Prisma's SQLite adapters read it; `null`: from the values. */
const DECLARED = new Map<string, Prisma.ColumnType>([
  ['DECIMAL', Numeric],
  ['FLOAT', Float],
  ...['DOUBLE', 'DOUBLE PRECISION', 'NUMERIC', 'REAL'].map((t) => [t, Double] as const),
  ...['TINYINT', 'SMALLINT', 'MEDIUMINT', 'INT', 'INTEGER', 'SERIAL', 'INT2'].map((t) => [t, Int32] as const),
  ...['BIGINT', 'UNSIGNED BIG INT', 'INT8'].map((t) => [t, Int64] as const),
  ['DATETIME', DateTime],
  ['TIMESTAMP', DateTime],
  ['TIME', Time],
  ['DATE', Date_],
  ...['TEXT', 'CLOB', 'CHARACTER', 'VARCHAR', 'VARYING CHARACTER', 'NCHAR', 'NATIVE CHARACTER', 'NVARCHAR'].map(
    (t) => [t, Text] as const,
  ),
  ['BLOB', Bytes],
  ['BOOLEAN', Boolean_],
  ['JSONB', Json],
])

/** Prisma's own error shape: Prisma recognises it by `name` and reads the mapped error from
 * `cause` (isDriverAdapterError of @prisma/driver-adapter-utils). */
class DriverAdapterError extends Error {
  override readonly name = 'DriverAdapterError'
  override readonly cause: Prisma.Error

  constructor(payload: Prisma.Error) {
    super('message' in payload && typeof payload.message === 'string' ? payload.message : payload.kind)
    this.cause = payload
  }
}

/** A resqlite failure as Prisma's error, mapped as @prisma/adapter-better-sqlite3 maps SQLite's
 * (the same codes reach the app: P2002, P2003, P2011, …). A closed database is Prisma's closed
 * connection. Anything else (a library code, an argument error) reaches the app as it was
 * thrown, as better-sqlite3's own errors without a SQLite code do. */
function driverError(error: unknown): unknown {
  const { code, message } = error as { code?: unknown; message?: unknown }
  if (typeof code !== 'string' || typeof message !== 'string') return error
  if (code === 'ERR_DATABASE_CLOSED') return new DriverAdapterError({ kind: 'ConnectionClosed' })
  if (!code.startsWith('SQLITE_')) return error
  return new DriverAdapterError({ originalCode: code, originalMessage: message, ...mapSqliteError(code, message) })
}

function mapSqliteError(code: string, message: string): Prisma.MappedError {
  const fields = () =>
    message
      .split('constraint failed: ')[1]
      ?.split(', ')
      .map((field) => field.split('.').pop()!)
  switch (code) {
    case 'SQLITE_CONSTRAINT_UNIQUE':
    case 'SQLITE_CONSTRAINT_PRIMARYKEY': {
      const columns = message.split('constraint failed: ')[1]?.split(', ')
      const names = fields()
      const table = columns?.[0]?.split('.').slice(0, -1).join('.') || undefined
      return { kind: 'UniqueConstraintViolation', constraint: names && { fields: names }, table }
    }
    case 'SQLITE_CONSTRAINT_NOTNULL': {
      const names = fields()
      return { kind: 'NullConstraintViolation', constraint: names && { fields: names } }
    }
    case 'SQLITE_CONSTRAINT_FOREIGNKEY':
    case 'SQLITE_CONSTRAINT_TRIGGER':
      return { kind: 'ForeignKeyConstraintViolation', constraint: { foreignKey: {} } }
  }
  if (code.startsWith('SQLITE_BUSY')) return { kind: 'SocketTimeout' }
  if (message.startsWith('no such table')) return { kind: 'TableDoesNotExist', table: message.split(': ')[1] }
  if (message.startsWith('no such column')) return { kind: 'ColumnNotFound', column: message.split(': ')[1] }
  if (message.includes('has no column named ')) {
    return { kind: 'ColumnNotFound', column: message.split('has no column named ')[1] }
  }
  // better-sqlite3 gives Prisma no extended code either: SQLite's generic one.
  return { kind: 'sqlite', extendedCode: 1, message }
}

/** An argument as Prisma's SQLite adapters bind it: Prisma sends numbers of some types as
 * strings, booleans as 0/1, DateTimes as text (or milliseconds), Bytes as base64. */
function bindArg(arg: unknown, type: Prisma.ArgType | undefined, format: string): unknown {
  if (arg === null) return null
  const scalar = type?.scalarType
  if (typeof arg === 'string') {
    // biome-ignore lint/correctness/useParseIntRadix: parsed as Prisma's SQLite adapters parse it
    if (scalar === 'int') return Number.parseInt(arg)
    if (scalar === 'float' || scalar === 'decimal') return Number.parseFloat(arg)
    if (scalar === 'bigint') return BigInt(arg)
    if (scalar === 'datetime') arg = new Date(arg)
    else if (scalar === 'bytes') return Buffer.from(arg, 'base64')
  }
  if (typeof arg === 'boolean') return arg ? 1 : 0
  if (arg instanceof Date) {
    if (format === 'unixepoch-ms') return arg.getTime()
    if (format === 'iso8601') return arg.toISOString().replace('Z', '+00:00')
    throw new ResqliteError('ERR_INVALID_ARG_VALUE', `unknown timestampFormat '${format}'`)
  }
  return arg
}

/** A column's type from its values when its declared type says nothing: the first non-null
 * value's (Int32 when all are null), as Prisma's SQLite adapters infer it. */
function inferType(rows: unknown[][], column: number): Prisma.ColumnType {
  for (const row of rows) {
    const value = row[column]
    if (value === null) continue
    switch (typeof value) {
      case 'string':
        return Text
      case 'bigint':
        return Int64
      case 'number':
        return UnknownNumber
    }
    // A blob: better-sqlite3's adapter fails here (it expects an ArrayBuffer, gets a Buffer).
    if (value instanceof Uint8Array) return Bytes
    throw new TypeError(`unexpected value of type ${typeof value} in column ${column}`)
  }
  return Int32
}

/** A row's values as Prisma takes them: integers as numbers when safe (else their digits), an
 * integer or a fraction in a DateTime column as the instant, a fraction in an integer column
 * truncated. */
function convertRow(row: unknown[], types: Prisma.ColumnType[]): unknown[] {
  for (let i = 0; i < row.length; i++) {
    const value = row[i]
    const type = types[i]
    if (typeof value === 'number') {
      if ((type === Int32 || type === Int64) && !Number.isInteger(value)) row[i] = Math.trunc(value)
      else if (type === DateTime) row[i] = new Date(value).toISOString()
    } else if (typeof value === 'bigint') {
      if (type === DateTime) row[i] = new Date(Number(value)).toISOString()
      else {
        const asNumber = Number(value)
        row[i] = Number.isSafeInteger(asNumber) ? asNumber : value.toString()
      }
    }
  }
  return row
}

/** Statements that may only write: sent to the writer at once (any other goes to a reader
 * first, `readThenWrite`). */
const WRITE = /^\s*(?:insert|update|delete|replace)\b/i
/** Statements that change the schema: the declared types known so far may have changed. */
const DDL = /^\s*(?:create|alter|drop)\b/i
/** At most how many statements' declared types are kept (Prisma's own statements are a few
 * per model; raw SQL may be any number). */
const DECLARED_TYPES_KEPT = 1000

/** The declared types of statements' result columns, by SQL: `db.columns()` asked once per
 * statement (resqlite's rows do not carry them), beside the statement's first run. */
class DeclaredTypes {
  readonly #known = new Map<string, (string | null)[]>()

  has(sql: string): boolean {
    return this.#known.has(sql)
  }

  /** The types of `sql`'s `count` columns, or `undefined` when not known. */
  get(sql: string, count: number): (string | null)[] | undefined {
    const known = this.#known.get(sql)
    // A different number of columns (`SELECT *` over a table that changed): ask again.
    return known?.length === count ? known : undefined
  }

  async learn(target: Queryable, sql: string): Promise<(string | null)[]> {
    const types = (await target.columns(sql)).map((c) => c.declaredType)
    if (this.#known.size >= DECLARED_TYPES_KEPT) this.#known.delete(this.#known.keys().next().value!)
    this.#known.set(sql, types)
    return types
  }

  forget(): void {
    this.#known.clear()
  }
}

class ResqliteQueryable implements Prisma.SqlQueryable {
  readonly provider = 'sqlite'
  readonly adapterName = 'resqlite/prisma'
  protected readonly db: Database
  protected readonly settings: PrismaResqliteOptions
  protected readonly declared: DeclaredTypes

  constructor(db: Database, options: PrismaResqliteOptions, declared: DeclaredTypes) {
    this.db = db
    this.settings = options
    this.declared = declared
  }

  /** Where the statements go: the database, or a transaction's `tx`. */
  protected get target(): Queryable {
    return this.db
  }

  async queryRaw(query: Prisma.SqlQuery): Promise<Prisma.SqlResultSet> {
    const { sql } = query
    const target = this.target
    const params = this.#params(query)
    if (DDL.test(sql)) this.declared.forget()
    try {
      const run = (): Promise<{ columns?: string[]; rows?: unknown[][] }> =>
        WRITE.test(sql)
          ? target.execute(sql, params, { rowMode: 'array' })
          : readThenWrite<{ columns?: string[]; rows?: unknown[][] }>(
              () => target.select(sql, params, { rowMode: 'array' }),
              () => target.execute(sql, params, { rowMode: 'array' }),
            )
      const known = this.declared
      // The first run of a statement asks for its declared types beside it.
      const learning = known.has(sql) ? undefined : known.learn(target, sql)
      learning?.catch(() => {})
      const result = await run()
      const columnNames = result.columns ?? []
      const rows = result.rows ?? []
      const declared = known.get(sql, columnNames.length) ?? (await (learning ?? known.learn(target, sql)))
      const columnTypes = declared.map((type, i) => {
        const mapped = type === null ? undefined : DECLARED.get(type.toUpperCase())
        return mapped ?? inferType(rows, i)
      })
      for (const row of rows) convertRow(row, columnTypes)
      return { columnNames, columnTypes, rows }
    } catch (error) {
      throw driverError(error)
    }
  }

  async executeRaw(query: Prisma.SqlQuery): Promise<number> {
    if (DDL.test(query.sql)) this.declared.forget()
    try {
      return (await this.target.execute(query.sql, this.#params(query))).changes
    } catch (error) {
      throw driverError(error)
    }
  }

  #params(query: Prisma.SqlQuery): Params {
    const format = this.settings.timestampFormat ?? 'iso8601'
    return query.args.map((arg, i) => bindArg(arg, query.argTypes[i], format)) as Params
  }
}

/** A Prisma transaction: one resqlite transaction, held open until Prisma commits or rolls it
 * back; Prisma's nested transactions are its savepoints, nested `tx.transaction()` levels. */
class ResqliteTransaction_ extends ResqliteQueryable implements Prisma.Transaction {
  // Prisma sends no COMMIT or ROLLBACK statement: it calls commit() or rollback(), which end the
  // resqlite transaction (a statement would be refused inside it).
  readonly options: Prisma.TransactionOptions = { usePhantomQuery: true }
  /** The transaction, then its open savepoints, innermost last. */
  readonly #levels: Held[]
  /** Savepoints rolled back to, which Prisma then releases. */
  readonly #rolledBack = new Set<string>()

  constructor(db: Database, options: PrismaResqliteOptions, declared: DeclaredTypes, held: Held) {
    super(db, options, declared)
    this.#levels = [held]
  }

  protected override get target(): Queryable {
    return this.#tx
  }

  get #tx(): ResqliteTransaction {
    const level = this.#levels.at(-1)
    if (level === undefined) throw new ResqliteError('ERR_TRANSACTION_FINISHED', 'the Prisma transaction has ended')
    return level.tx
  }

  commit(): Promise<void> {
    return this.#end(0, true)
  }

  rollback(): Promise<void> {
    return this.#end(0, false)
  }

  async createSavepoint(name: string): Promise<void> {
    const outer = this.#tx
    try {
      this.#levels.push(await Held.begin((body) => outer.transaction(body), name))
    } catch (error) {
      throw driverError(error)
    }
  }

  /** Rolls back to savepoint `name`: its level ends; Prisma releases it next. */
  async rollbackToSavepoint(name: string): Promise<void> {
    await this.#end(this.#savepoint(name), false)
    this.#rolledBack.add(name)
  }

  async releaseSavepoint(name: string): Promise<void> {
    if (this.#rolledBack.delete(name)) return
    await this.#end(this.#savepoint(name), true)
  }

  #savepoint(name: string): number {
    let at = this.#levels.length - 1
    while (at > 0 && this.#levels[at]!.name !== name) at--
    if (at < 1) throw new ResqliteError('ERR_INVALID_ARG_VALUE', `no open savepoint named '${name}'`)
    return at
  }

  /** Commits (or rolls back) level `at` and every level inside it, innermost first. */
  async #end(at: number, commit: boolean): Promise<void> {
    if (this.#levels.length <= at) {
      throw new ResqliteError(
        'ERR_TRANSACTION_FINISHED',
        `${commit ? 'commit' : 'rollback'}: the transaction has ended`,
      )
    }
    await Held.endFrom(this.#levels, at, commit).catch((error) => {
      throw driverError(error)
    })
  }
}

class ResqliteAdapter extends ResqliteQueryable implements Prisma.SqlDriverAdapter {
  readonly #owned: boolean

  constructor(db: Database, options: PrismaResqliteOptions, declared: DeclaredTypes, owned: boolean) {
    super(db, options, declared)
    this.#owned = owned
  }

  /** A script (Prisma's migrations through the adapter) runs on the writer, as one call. */
  async executeScript(script: string): Promise<void> {
    this.declared.forget()
    try {
      await this.db.execute(script)
    } catch (error) {
      throw driverError(error)
    }
  }

  async startTransaction(isolationLevel?: Prisma.IsolationLevel): Promise<Prisma.Transaction> {
    // SQLite's transactions are serializable: any other level is refused, as Prisma's SQLite
    // adapters refuse it.
    if (isolationLevel !== undefined && isolationLevel !== 'SERIALIZABLE') {
      throw new DriverAdapterError({ kind: 'InvalidIsolationLevel', level: isolationLevel })
    }
    const db = this.db
    try {
      const held = await Held.begin((body) => db.transaction(body))
      return new ResqliteTransaction_(db, this.settings, this.declared, held)
    } catch (error) {
      throw driverError(error)
    }
  }

  /** `$disconnect()`: closes the database the adapter opened from `url`; a Database given to
   * the adapter stays open (its owner closes it; Prisma connects again on the next query). */
  async dispose(): Promise<void> {
    if (this.#owned) await this.db.close()
  }
}

/** What `connect()` resolves with, in the types of @prisma/client (which every Prisma app has). */
type Connected = ReturnType<SqlDriverAdapterFactory['connect']>

/** A Prisma 7 driver adapter factory over resqlite: `new PrismaClient({ adapter: new
 * PrismaResqlite({ url: 'file:./app.db' }) })`, or over an open Database (opened with
 * `safeIntegers: true`): `new PrismaResqlite(db)`. */
export class PrismaResqlite implements SqlDriverAdapterFactory {
  readonly provider = 'sqlite'
  readonly adapterName = 'resqlite/prisma'
  readonly #source: Database | PrismaResqliteConfig
  readonly #options: PrismaResqliteOptions
  readonly #declared = new DeclaredTypes()

  constructor(source: Database | PrismaResqliteConfig, options: PrismaResqliteOptions = {}) {
    if (!isDatabase(source) && typeof (source as PrismaResqliteConfig | undefined)?.url !== 'string') {
      throw typeError('PrismaResqlite needs an open Database or { url }')
    }
    const format = options.timestampFormat
    if (format !== undefined && format !== 'iso8601' && format !== 'unixepoch-ms') {
      throw typeError("timestampFormat is 'iso8601' or 'unixepoch-ms'", 'ERR_INVALID_ARG_VALUE')
    }
    if (!isDatabase(source) && 'safeIntegers' in source) {
      throw typeError(
        'PrismaResqlite opens the database with safeIntegers: true (leave it out)',
        'ERR_INVALID_ARG_VALUE',
      )
    }
    this.#source = isDatabase(source) ? source : { ...source }
    this.#options = { ...options }
  }

  async connect(): Connected {
    const source = this.#source
    if (!isDatabase(source)) return this.#open(source.url)
    // Prisma reads BigInt columns and counts as 64-bit integers, which only `safeIntegers` keeps.
    const one = (await source.selectOne('SELECT 1', [], { rowMode: 'array' })).row?.[0]
    if (typeof one !== 'bigint') {
      throw typeError('PrismaResqlite needs a Database opened with safeIntegers: true', 'ERR_INVALID_ARG_VALUE')
    }
    return new ResqliteAdapter(source, this.#options, this.#declared, false)
  }

  /** The shadow database of `prisma migrate` through the adapter: `shadowDatabaseUrl`, else a
   * database in memory. */
  async connectToShadowDb(): Connected {
    return this.#open(this.#options.shadowDatabaseUrl ?? ':memory:', new DeclaredTypes())
  }

  async #open(url: string, declared = this.#declared): Promise<ResqliteAdapter> {
    const { url: _, ...openOptions } = isDatabase(this.#source) ? { url } : this.#source
    const db = await Database.open(url.replace(/^file:/, ''), { ...openOptions, safeIntegers: true })
    return new ResqliteAdapter(db, this.#options, declared, true)
  }
}
