// The public Database: validates arguments, packs parameters, queues jobs on the native engine
// and settles their promises when the engine hands back a batch of completions.
import * as os from 'node:os'

import { DIRECT_DECODE_CELLS, RowsAssembler, RowsResult, type Row } from './decode'
import { ResqliteError, abortError, closedError, rangeError, typeError } from './errors'
import { binding, Done, ReadKind, WriteKind, type NativeDatabase } from './native'
import { describe, encodeBatch, encodeParams, type Packed, type Params } from './params'

export type { Row } from './decode'
export type { Params, Value } from './params'

export interface OpenOptions {
  /** Read-only connections reading in parallel. Default: clamp(cpus − 1, 2, 4). */
  readers?: number
  /** Milliseconds a connection waits for a lock held by another process. Default 5000. */
  busyTimeout?: number
  /** Open without a writer: `execute` and `executeBatch` reject. Default false. */
  readonly?: boolean
  /** Return every INTEGER as a bigint. Default false. */
  safeIntegers?: boolean
}

export interface QueryOptions {
  /** Aborting cancels the query, queued or running; the promise rejects with `ABORT_ERR`. */
  signal?: AbortSignal
}

export interface RunResult {
  changes: number
  lastInsertRowid: number | bigint
}

export interface BatchResult {
  changes: number
}

const enum Settle {
  Rows,
  One,
  Bytes,
  Run,
  Batch,
  Void,
}

interface Job {
  settle: Settle
  sql: string | undefined
  resolve: (value: any) => void
  reject: (error: unknown) => void
  signal?: AbortSignal
  onAbort?: () => void
  /** Assembles a large result arriving in parts. */
  parts?: RowsAssembler
  /** Rejected early (aborted, or a part failed to decode): later completions are ignored. */
  settled?: boolean
}

const OPTION_KEYS = new Set(['readers', 'busyTimeout', 'readonly', 'safeIntegers'])
const DEBUG_PANIC = Symbol.for('resqlite.debugPanic')

export class Database {
  /** The path the database was opened with. */
  readonly path: string
  /** How many reader connections serve reads. */
  readonly readers: number
  readonly readonly: boolean
  readonly #safeIntegers: boolean
  readonly #native: NativeDatabase
  readonly #jobs = new Map<number, Job>()
  #nextId = 0
  #closing: Promise<void> | undefined
  readonly #opened: Promise<void>

  private constructor(path: string, options: Required<OpenOptions>) {
    this.path = path
    this.readers = options.readers
    this.readonly = options.readonly
    this.#safeIntegers = options.safeIntegers
    const openId = this.#newId()
    this.#native = new binding.NativeDatabase(
      path,
      options.readers,
      options.busyTimeout,
      options.readonly,
      options.safeIntegers,
      this.#onComplete,
      openId,
    )
    this.#opened = new Promise((resolve, reject) => this.#track(openId, { settle: Settle.Void, sql: undefined, resolve, reject }))
  }

  /** Opens (creating if needed) the database at `path`. Every connection is opened and
   * configured on its own thread; the promise settles when all are ready. */
  static async open(path: string, options: OpenOptions = {}): Promise<Database> {
    const db = new Database(checkPath(path), checkOptions(options))
    try {
      await db.#opened
    } catch (error) {
      await db.close()
      throw error
    }
    return db
  }

  /** Runs a read-only statement on a reader connection; resolves with every row. */
  select<T = Row>(sql: string, params?: Params, options?: QueryOptions): Promise<T[]> {
    return this.#read(ReadKind.Select, Settle.Rows, sql, params, options)
  }

  /** The first row, or `undefined`. Stops stepping after one row. */
  selectOne<T = Row>(sql: string, params?: Params, options?: QueryOptions): Promise<T | undefined> {
    return this.#read(ReadKind.SelectOne, Settle.One, sql, params, options)
  }

  /** The rows as JSON text in a Buffer, built natively: `JSON.stringify(await select(…))`. */
  selectBytes(sql: string, params?: Params, options?: QueryOptions): Promise<Buffer> {
    return this.#read(ReadKind.SelectBytes, Settle.Bytes, sql, params, options)
  }

  /** Runs a statement on the writer; with no parameters, SQL holding several statements runs them all. */
  execute(sql: string, params?: Params): Promise<RunResult> {
    return this.#write(WriteKind.Execute, Settle.Run, sql, () => encodeParams(params))
  }

  /** Runs one statement once per parameter set, in one native loop inside one transaction:
   * all sets apply, or (on any error) none. */
  executeBatch(sql: string, paramSets: readonly Params[]): Promise<BatchResult> {
    return this.#write(WriteKind.Batch, Settle.Batch, sql, () => encodeBatch(paramSets))
  }

  /** Lets queued and running jobs finish, closes every connection and joins every thread.
   * Calls made after `close()` reject with `ERR_DATABASE_CLOSED`. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve, reject) => {
      const id = this.#newId()
      this.#track(id, {
        settle: Settle.Void,
        sql: undefined,
        resolve: () => {
          this.#native.release()
          resolve()
        },
        reject,
      })
      this.#native.close(id)
    })
    return this.#closing
  }

  /** Test hook: a write job that panics inside the engine. */
  [DEBUG_PANIC](): Promise<RunResult> {
    return this.#write(WriteKind.Panic, Settle.Run, 'panic', () => encodeParams(undefined))
  }

  #read<T>(kind: ReadKind, settle: Settle, sql: string, params: Params | undefined, options: QueryOptions | undefined): Promise<T> {
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
    return new Promise<T>((resolve, reject) => {
      const id = this.#newId()
      const job: Job = { settle, sql, resolve, reject }
      if (signal) {
        job.signal = signal
        job.onAbort = () => {
          this.#native.cancel(id)
          job.settled = true
          reject(abortError(signal, sql))
        }
        signal.addEventListener('abort', job.onAbort, { once: true })
      }
      this.#track(id, job)
      this.#native.read(id, kind, sql, packed.bytes, packed.length, signal !== undefined)
    })
  }

  #write<T>(kind: WriteKind, settle: Settle, sql: string, pack: () => Packed): Promise<T> {
    if (this.#closing) return Promise.reject(closedError())
    let packed: Packed
    try {
      checkSql(sql)
      packed = pack()
    } catch (error) {
      return Promise.reject(error)
    }
    if (this.readonly) {
      return Promise.reject(new ResqliteError('ERR_DATABASE_READONLY', 'the database was opened with readonly: true', sql))
    }
    return new Promise<T>((resolve, reject) => {
      const id = this.#newId()
      this.#track(id, { settle, sql, resolve, reject })
      this.#native.write(id, kind, sql, packed.bytes, packed.length)
    })
  }

  #newId(): number {
    this.#nextId = (this.#nextId + 1) >>> 0 || 1
    return this.#nextId
  }

  /** Registers a job; the first pending job keeps the process alive until the last settles. */
  #track(id: number, job: Job): void {
    if (this.#jobs.size === 0) this.#native.ref()
    this.#jobs.set(id, job)
  }

  /** Called by the engine once per batch of finished jobs: [id, kind, a, b, …]. */
  readonly #onComplete = (done: unknown[]): void => {
    const turnStart = performance.now()
    for (let i = 0; i < done.length; i += 4) {
      const id = done[i] as number
      const job = this.#jobs.get(id)
      if (job === undefined) continue
      if (done[i + 1] === Done.RowsPart) {
        if (!job.settled) this.#assembler(job).add(this.#rows(done[i + 2], done[i + 3]), false, turnStart)
        continue
      }
      this.#jobs.delete(id)
      if (this.#jobs.size === 0) this.#native.unref()
      if (job.onAbort) job.signal!.removeEventListener('abort', job.onAbort)
      if (job.settled) continue
      try {
        this.#settle(job, done[i + 1] as Done, done[i + 2], done[i + 3], turnStart)
      } catch (error) {
        job.reject(error)
      }
    }
  }

  #assembler(job: Job): RowsAssembler {
    return (job.parts ??= new RowsAssembler(job.resolve, (error) => {
      job.settled = true
      job.reject(error)
    }))
  }

  #rows(buffer: unknown, text: unknown): RowsResult {
    return new RowsResult(buffer as ArrayBuffer, text as string, this.#safeIntegers)
  }

  #settle(job: Job, kind: Done, a: unknown, b: unknown, turnStart: number): void {
    switch (kind) {
      case Done.Rows: {
        const result = this.#rows(a, b)
        if (job.settle === Settle.One) {
          job.resolve(result.first())
        } else if (job.parts || result.cells > DIRECT_DECODE_CELLS) {
          this.#assembler(job).add(result, true, turnStart)
        } else {
          const rows: Row[] = []
          result.appendTo(rows)
          job.resolve(rows)
        }
        return
      }
      case Done.Json:
        job.resolve(Buffer.from(a as ArrayBuffer))
        return
      case Done.Changes:
        if (job.settle === Settle.Batch) job.resolve({ changes: a })
        else job.resolve({ changes: a, lastInsertRowid: this.#safeIntegers ? BigInt(b as number | bigint) : b })
        return
      case Done.Void:
        job.resolve(undefined)
        return
      case Done.Error:
        job.reject(new ResqliteError(a as string, b as string, job.sql))
        return
    }
  }
}

function checkSql(sql: unknown): asserts sql is string {
  if (typeof sql !== 'string') throw typeError(`sql must be a string, got ${describe(sql)}`)
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

function checkOptions(options: unknown): Required<OpenOptions> {
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

function checkQueryOptions(options: unknown): AbortSignal | undefined {
  if (options === undefined) return undefined
  if (typeof options !== 'object' || options === null) throw typeError(`options must be an object, got ${describe(options)}`)
  const signal = (options as QueryOptions).signal
  if (signal === undefined) return undefined
  if (!(signal instanceof AbortSignal)) throw typeError(`options.signal must be an AbortSignal, got ${describe(signal)}`)
  return signal
}
