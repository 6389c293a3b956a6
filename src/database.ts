// The public Database: validates arguments, packs parameters, routes calls made inside a
// transaction body to that transaction, and sends the rest to the engine — reads to the
// reader pool, writes to the writer in call order.
import { AsyncLocalStorage } from 'node:async_hooks'
import * as os from 'node:os'

import type { Row } from './decode'
import { Engine, type EngineOptions } from './engine'
import { ResqliteError, abortError, closedError, rangeError, typeError } from './errors'
import { JobKind } from './native'
import { copyPacked, describe, encodeBatch, encodeParams, NO_PARAMS, type Packed, type Params } from './params'
import {
  checkBody,
  checkMode,
  checkQueryOptions,
  checkSql,
  OUTERMOST,
  Transaction,
  Turns,
  type BatchResult,
  type QueryOptions,
  type RunResult,
  type TransactionOptions,
} from './transaction'

export type { Row } from './decode'
export type { Params, Value } from './params'
export type { BatchResult, QueryOptions, RunResult, Transaction, TransactionMode, TransactionOptions } from './transaction'

export interface OpenOptions {
  /** Read-only connections reading in parallel. Default: clamp(cpus − 1, 2, 4). */
  readers?: number
  /** Milliseconds a connection waits for a lock held by another process. Default 5000. */
  busyTimeout?: number
  /** Open without a writer: `execute`, `executeBatch` and `transaction` reject. Default false. */
  readonly?: boolean
  /** Return every INTEGER as a bigint. Default false. */
  safeIntegers?: boolean
}

const OPTION_KEYS = new Set(['readers', 'busyTimeout', 'readonly', 'safeIntegers'])
const TRANSACTION_OPTION_KEYS = new Set(['mode', 'signal'])
const DEBUG_PANIC = Symbol.for('resqlite.debugPanic')

export class Database {
  /** The path the database was opened with. */
  readonly path: string
  /** How many reader connections serve reads. */
  readonly readers: number
  readonly readonly: boolean
  readonly #engine: Engine
  /** Writers wait here in call order; a transaction holds the writer alone. */
  readonly #turns = new Turns()
  /** The innermost open transaction of the current async context. */
  readonly #context = new AsyncLocalStorage<Transaction>()
  #closing: Promise<void> | undefined

  private constructor(path: string, options: EngineOptions) {
    this.path = path
    this.readers = options.readers
    this.readonly = options.readonly
    this.#engine = new Engine(path, options)
  }

  /** Opens (creating if needed) the database at `path`. Every connection is opened and
   * configured on its own thread; the promise settles when all are ready. */
  static async open(path: string, options: OpenOptions = {}): Promise<Database> {
    const db = new Database(checkPath(path), checkOptions(options))
    try {
      await db.#engine.opened
    } catch (error) {
      await db.close()
      throw error
    }
    return db
  }

  /** Runs a read-only statement on a reader connection; resolves with every row. */
  select<T = Row>(sql: string, params?: Params, options?: QueryOptions): Promise<T[]> {
    return this.#context.getStore()?.select<T>(sql, params, options) ?? this.#read(JobKind.Select, sql, params, options)
  }

  /** The first row, or `undefined`. Stops stepping after one row. */
  selectOne<T = Row>(sql: string, params?: Params, options?: QueryOptions): Promise<T | undefined> {
    return this.#context.getStore()?.selectOne<T>(sql, params, options) ?? this.#read(JobKind.SelectOne, sql, params, options)
  }

  /** The rows as JSON text in a Buffer, built natively: `JSON.stringify(await select(…))`. */
  selectBytes(sql: string, params?: Params, options?: QueryOptions): Promise<Buffer> {
    return this.#context.getStore()?.selectBytes(sql, params, options) ?? this.#read(JobKind.SelectBytes, sql, params, options)
  }

  /** Runs a statement on the writer; with no parameters, SQL holding several statements runs them all. */
  execute(sql: string, params?: Params): Promise<RunResult> {
    return this.#context.getStore()?.execute(sql, params) ?? this.#write(JobKind.Execute, sql, () => encodeParams(params))
  }

  /** Runs one statement once per parameter set, in one native loop inside one transaction:
   * all sets apply, or (on any error) none. */
  executeBatch(sql: string, paramSets: readonly Params[]): Promise<BatchResult> {
    return this.#context.getStore()?.executeBatch(sql, paramSets) ?? this.#write(JobKind.Batch, sql, () => encodeBatch(paramSets))
  }

  /** Runs `body` in a transaction that holds the writer across its awaits (README
   * "Transactions"); inside a body it nests as a savepoint. Resolves with the body's value. */
  transaction<T>(body: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T> {
    const current = this.#context.getStore()
    if (current) return current.transaction(body, options as undefined)
    if (this.#closing) return Promise.reject(closedError())
    let mode: string
    let signal: AbortSignal | undefined
    try {
      checkBody(body)
      ;({ mode, signal } = checkTransactionOptions(options))
    } catch (error) {
      return Promise.reject(error)
    }
    if (this.readonly) return Promise.reject(readonlyError('BEGIN'))
    if (signal?.aborted) return Promise.reject(abortError(signal, 'transaction'))
    return this.#transaction(body, mode, signal)
  }

  /** Lets queued and running work finish (an open transaction too), closes every connection
   * and joins every thread. Calls made after `close()` reject with `ERR_DATABASE_CLOSED`. */
  close(): Promise<void> {
    this.#closing ??= this.#turns.idle().then(() => this.#engine.close())
    return this.#closing
  }

  /** Test hook: a write job that panics inside the engine. */
  [DEBUG_PANIC](): Promise<RunResult> {
    return this.#write(JobKind.Panic, 'panic', () => NO_PARAMS)
  }

  async #transaction<T>(body: (tx: Transaction) => Promise<T>, mode: string, signal: AbortSignal | undefined): Promise<T> {
    await this.#turns.acquire(signal, 'transaction')
    try {
      const begun = this.#engine.write(JobKind.Control, `BEGIN ${mode.toUpperCase()}`, NO_PARAMS)
      // 'immediate' and 'exclusive' promise the lock is held once the body runs; a deferred
      // BEGIN takes no lock, so the body need not wait for it (experiments/014).
      if (mode !== 'deferred') await begun
      return await new Transaction(this.#engine, this.#context).run(body, OUTERMOST, begun, signal)
    } finally {
      this.#turns.release()
    }
  }

  #read<T>(kind: JobKind, sql: string, params: Params | undefined, options: QueryOptions | undefined): Promise<T> {
    if (this.#closing) return Promise.reject(closedError())
    let packed: Packed
    let signal: AbortSignal | undefined
    try {
      checkSql(sql)
      signal = checkQueryOptions(options)
      packed = encodeParams(params)
    } catch (error) {
      return Promise.reject(error)
    }
    if (signal?.aborted) return Promise.reject(abortError(signal, sql))
    return this.#engine.read(kind, sql, packed, signal)
  }

  /** Sends a write now, or — while a transaction holds the writer — once every earlier
   * writer of the queue has had its turn. */
  #write<T>(kind: JobKind, sql: string, pack: () => Packed): Promise<T> {
    if (this.#closing) return Promise.reject(closedError())
    let packed: Packed
    try {
      checkSql(sql)
      packed = pack()
    } catch (error) {
      return Promise.reject(error)
    }
    if (this.readonly) return Promise.reject(readonlyError(sql))
    if (this.#turns.free) return this.#engine.write(kind, sql, packed)
    const queued = copyPacked(packed)
    return new Promise<T>((resolve, reject) => {
      this.#turns.write(() => this.#engine.write<T>(kind, sql, queued).then(resolve, reject))
    })
  }
}

function readonlyError(sql: string): ResqliteError {
  return new ResqliteError('ERR_DATABASE_READONLY', 'the database was opened with readonly: true', sql)
}

function checkPath(path: unknown): string {
  if (typeof path !== 'string') throw typeError(`path must be a string, got ${describe(path)}`)
  if (path === '' || path === ':memory:') {
    throw new ResqliteError(
      'ERR_INVALID_PATH',
      `'${path}' would give every connection its own private database; use a file (a temporary one for scratch data)`,
    )
  }
  if (path.includes('\0')) throw new ResqliteError('ERR_INVALID_PATH', 'the path contains a NUL character')
  return path
}

function checkOptions(options: unknown): EngineOptions {
  if (typeof options !== 'object' || options === null) throw typeError(`options must be an object, got ${describe(options)}`)
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw typeError(`unknown option '${key}'`, 'ERR_INVALID_ARG_VALUE')
  }
  const o = options as OpenOptions
  return {
    readers: integerOption('readers', o.readers, 1, 64, Math.min(4, Math.max(2, os.availableParallelism() - 1))),
    busyTimeout: integerOption('busyTimeout', o.busyTimeout, 0, 2 ** 31 - 1, 5000),
    readonly: booleanOption('readonly', o.readonly),
    safeIntegers: booleanOption('safeIntegers', o.safeIntegers),
  }
}

function checkTransactionOptions(options: unknown): { mode: string; signal: AbortSignal | undefined } {
  if (options === undefined) return { mode: 'deferred', signal: undefined }
  if (typeof options !== 'object' || options === null) throw typeError(`options must be an object, got ${describe(options)}`)
  for (const key of Object.keys(options)) {
    if (!TRANSACTION_OPTION_KEYS.has(key)) throw typeError(`unknown transaction option '${key}'`, 'ERR_INVALID_ARG_VALUE')
  }
  const o = options as TransactionOptions
  return { mode: checkMode(o.mode), signal: checkQueryOptions({ signal: o.signal }) }
}

function integerOption(name: string, value: unknown, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value)) throw typeError(`${name} must be an integer, got ${describe(value)}`)
  if (value < min || value > max) throw rangeError(`${name} must be between ${min} and ${max}, got ${value}`)
  return value
}

function booleanOption(name: string, value: unknown): boolean {
  if (value === undefined) return false
  if (typeof value !== 'boolean') throw typeError(`${name} must be a boolean, got ${describe(value)}`)
  return value
}
