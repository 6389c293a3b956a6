// Prepared statements (`db.prepare(sql)`, docs/api.md "prepare"): one statement compiled once
// and checked (one statement, whether `select` takes it, its columns), then run by SQL text
// like every other call. Its methods are the database's, with the SQL already given: they run
// where `db.*` calls run (on the JS thread, in a write group, on the readers or the writer, by
// the rules of placement.ts) and, inside a transaction body, in the transaction. A statement holds no result, and once
// its database has closed it no longer holds the database either.

import { type CallKind, checkOptionsObject, checkSql, type PreparedCall, prepareCall } from './arguments'
import { withCallerFrames } from './caller-stack'
import type { Database } from './database'
import { closedError, typeError } from './errors'
import { rejected } from './functions'
import { iteration, type RowIterator } from './iterate'
import { LiveQueries, LiveQuery } from './live-queries'
import { JobKind } from './native'
import { NOTHING } from './nothing'
import { encodeBatch, encodeParams, type Params } from './params'
import { type PlacementRecord, tracedQuery, traceQuery, Where } from './tracing'
import type {
  BatchResult,
  ColumnInfo,
  ExecuteOptions,
  ExecuteResult,
  IteratedRow,
  IterateOptions,
  QueryOptions,
  Row,
  SelectOneResult,
  SelectResult,
} from './types'

/** What `db.prepare` learns from the engine (crates/engine/src/threads/worker.rs `describe`). */
export interface Description {
  /** `select` takes it: one read-only statement that neither begins nor ends a transaction
   * nor changes a setting. */
  reads: boolean
  columns: ColumnInfo[]
}

/** The statements' way to their database: one per database, shared by its statements, and
 * emptied once the database has closed, so a statement kept afterwards keeps nothing of it
 * (database.ts `prepare`, `close`). */
export class StatementLink {
  db: Database | undefined
  /** Runs a call whose arguments the statement checked and packed, where the same `db.*` call
   * would run (database.ts `#runPrepared`). */
  run: RunPrepared
  /** Where tracing learns where a call ran (the engine; once closed, only the path), and
   * whether a call is made inside a transaction body. */
  record: PlacementRecord
  inTransaction: () => boolean
  constructor(db: Database, run: RunPrepared, record: PlacementRecord, inTransaction: () => boolean) {
    this.db = db
    this.run = run
    this.record = record
    this.inTransaction = inTransaction
  }

  /** The database closed: nothing of it is kept. */
  close(): void {
    this.db = undefined
    this.run = closedRun
    this.record = { trace: undefined, placed: Where.None, database: this.record.database, tracedSettled: NOTHING }
    this.inTransaction = () => false
  }
}

type RunPrepared = <T>(kind: JobKind, sql: string, call: PreparedCall) => Promise<T>

const closedRun: RunPrepared = () => Promise.reject(closedError())

/** Live queries of a closed database: every subscription gets `ERR_DATABASE_CLOSED`. */
let closedLive: LiveQueries | undefined
function closedLiveQueries(): LiveQueries {
  if (closedLive === undefined) {
    // A LiveQueries that is closed never reaches its engine (subscribe refuses first).
    closedLive = new LiveQueries(undefined as never)
    closedLive.closeAll()
  }
  return closedLive
}

/** A statement prepared once with `db.prepare(sql)` and run any number of times with different
 * parameters. Its methods take what the database's do, without the SQL, and run the same way:
 * on the JS thread when small, else on the readers or the writer, in call order with every
 * other call; inside a transaction body (the async context of `db.transaction(async tx => …)`)
 * they run in that transaction, as `db.*` calls do there. After `db.close()` every method
 * rejects with `ERR_DATABASE_CLOSED`.
 *
 * @typeParam T - The row's shape, as the caller declares it (not checked). Default {@link Row}. */
export class Statement<T = Row> {
  readonly #link: StatementLink
  readonly #sql: string
  readonly #readonly: boolean
  readonly #columnNames: readonly string[]

  /** @internal Made by `db.prepare()`. */
  constructor(link: StatementLink, sql: string, description: Description) {
    this.#link = link
    this.#sql = sql
    this.#readonly = description.reads
    this.#columnNames = Object.freeze(description.columns.map((c) => c.name))
  }

  /** The statement's SQL, as given to `db.prepare()`. */
  get sql(): string {
    return this.#sql
  }

  /** Whether it is a read that `select`, `selectOne`, `selectBytes`, `iterate` and `stream`
   * take: one statement that does not write, begin or end a transaction, or change a setting
   * (`sqlite3_stmt_readonly`, less what select refuses). `execute` runs either kind. */
  get readonly(): boolean {
    return this.#readonly
  }

  /** Its result columns' names when it was prepared, in order (`[]` for a write without
   * `RETURNING`); a frozen array. A schema change since (`SELECT *` over a table that gained a
   * column) shows in the rows and in `columns()`, not here. */
  get columnNames(): readonly string[] {
    return this.#columnNames
  }

  /** As `db.select(sql, params, options)`. */
  select<R = T, O extends QueryOptions = QueryOptions>(params?: Params, options?: O): Promise<SelectResult<R, O>> {
    return this.#run(JobKind.Select, 'read', params, options)
  }

  /** As `db.selectOne(sql, params, options)`. */
  selectOne<R = T, O extends QueryOptions = QueryOptions>(
    params?: Params,
    options?: O,
  ): Promise<SelectOneResult<R, O>> {
    return this.#run(JobKind.SelectOne, 'read', params, options)
  }

  /** As `db.selectBytes(sql, params, options)`. */
  selectBytes(params?: Params, options?: Omit<QueryOptions, 'rowMode'>): Promise<Buffer> {
    return this.#run(JobKind.SelectBytes, 'bytes', params, options)
  }

  /** As `db.execute(sql, params, options)`. */
  execute<R = T, O extends ExecuteOptions = ExecuteOptions>(
    params?: Params,
    options?: O,
  ): Promise<ExecuteResult<R, O>> {
    return this.#run(JobKind.Execute, 'write', params, options)
  }

  /** As `db.executeBatch(sql, paramSets)`. */
  executeBatch(paramSets: readonly Params[], options?: unknown): Promise<BatchResult> {
    return this.#run(JobKind.Batch, 'batch', paramSets, options)
  }

  /** Checks and packs a call's arguments here (so a bad one's error names the caller's frames,
   * not the library's), then runs it where the same `db.*` call would. */
  #run<R>(kind: JobKind, call: CallKind, params: unknown, options: unknown): Promise<R> {
    const operation = tracedQuery(kind)
    if (operation === undefined) return this.#runUntraced(kind, call, params, options)
    const link = this.#link
    return traceQuery(link.record, operation, this.#sql, link.inTransaction(), true, () =>
      this.#runUntraced<R>(kind, call, params, options),
    )
  }

  #runUntraced<R>(kind: JobKind, call: CallKind, params: unknown, options: unknown): Promise<R> {
    const link = this.#link
    if (link.db === undefined) return Promise.reject(withCallerFrames(closedError()))
    let prepared: PreparedCall
    try {
      if (typeof params === 'string' && call !== 'batch') throw sqlGivenAgain(params === this.#sql)
      prepared = prepareCall(this.#sql, options, call === 'batch' ? encodeBatch : encodeParams, params, call)
    } catch (error) {
      return rejected(withCallerFrames(error))
    }
    return link.run<R>(kind, this.#sql, prepared)
  }

  /** As `db.iterate(sql, params, options)`: a `RowIterator` (not a promise); after close its
   * first step rejects with `ERR_DATABASE_CLOSED`. */
  iterate<R = T, O extends IterateOptions = IterateOptions>(
    params?: Params,
    options?: O,
  ): RowIterator<IteratedRow<R, O>> {
    const db = this.#link.db
    if (db === undefined)
      return iteration(this.#sql, params, options, neverOpened, closedError, this.#link.record, false)
    return db.iterate<R, O>(this.#sql, params, options)
  }

  /** As `db.columns(sql)`: its result columns now (prepared again, in the transaction inside a
   * transaction body), each `{ name, declaredType }`. */
  columns(): Promise<ColumnInfo[]> {
    const db = this.#link.db
    if (db === undefined) return Promise.reject(closedError())
    return db.columns(this.#sql)
  }

  /** As `db.stream(sql, params)`: a `LiveQuery` (not a promise); after close its subscribers
   * get `ERR_DATABASE_CLOSED`. */
  stream<R = T>(params?: Params, options?: unknown): LiveQuery<R> {
    const db = this.#link.db
    if (db === undefined) return new LiveQuery<R>(closedLiveQueries(), this.#sql, params, options)
    return db.stream<R>(this.#sql, params, options)
  }
}

/** A closed database's iterations never open (their first step rejects before). */
function neverOpened(): never {
  throw closedError()
}

/** A statement's call given SQL where its parameters belong (`stmt.select(sql, params)`). */
function sqlGivenAgain(same: boolean): TypeError {
  return typeError(
    `params must be an array (positional) or a plain object (named), got type string: a statement has its SQL${same ? ' (this is it, given again)' : ''}; give only its parameters`,
  )
}

/** Checks `db.prepare`'s arguments: the SQL (a string) and no options. */
export function checkPrepare(sql: unknown, options: unknown): asserts sql is string {
  checkSql(sql)
  if (options === undefined) return
  checkOptionsObject(options)
  for (const key of Object.keys(options))
    throw typeError(`unknown option '${key}': prepare takes no options`, 'ERR_INVALID_ARG_VALUE')
}

/** `db.prepare(sql)`: checks the arguments, describes the statement (`describe`: on a reader,
 * or in the transaction of the body it is called in) and makes the `Statement`. A statement
 * `execute` could only run as a script (several statements) is refused, as `columns` refuses
 * it. */
export async function prepareStatement<T>(
  link: StatementLink,
  sql: unknown,
  options: unknown,
  describeSql: (sql: string) => Promise<Description>,
): Promise<Statement<T>> {
  checkPrepare(sql, options)
  return new Statement<T>(link, sql, await describeSql(sql))
}
