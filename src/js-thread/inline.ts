// SQLite work on the JS thread (crates/engine/src/js_thread/runs.rs): reads (experiments/032), and a
// transaction's bounded writes and its COMMIT (experiments/036); which calls are offered here is
// placement.ts's decision. The engine steps the statement
// right away and calls `handle` once with the result as arguments: a read's cells, each TEXT
// cell a string of its own, or a write's changes. Rows are built by one generated function per
// column-name set, as in decode.ts, so every row of a shape shares one hidden class.
import { arrayResult, type Row, rowLiteral } from '../decode'
import { engineError, type ResqliteError } from '../errors'
import { type Done, Inline, InlineResult, type JobCalls, JobKind, type ReadOn } from '../native'
import type { Diagnostics } from '../types'

type MakeRow = (cells: unknown[], k: number) => Row

const EMPTY = new Uint8Array(0)
/** The promise of what ran at once here (a transaction compares against it to skip an await). */
export const RESOLVED: Promise<void> = Promise.resolve()

/** The largest params buffer `read` keeps for the next call: the scratch buffer's first size. */
const REMEMBERED_PARAMS = 64 * 1024

/** What `readInline` writes a result of numbers and NULLs into (`Inline.Numbers`): its cell
 * count, then the cells, NULL as NaN (SQLite stores no NaN). One for every database of this
 * thread: each result is read out before the next read runs. 256 cells fit (2 KiB); a larger
 * result comes through the handler (experiments/059). `writeInline` writes a write's
 * `[changes, lastInsertRowid, checkpointDue]` there, or a COMMIT's `[checkpointDue]`
 * (experiments/060). */
const NUMBERS = new Float64Array(1 + 256)

const rowMakers = new Map<string, MakeRow>()
const MAX_ROW_MAKERS = 512

/** The row maker for `columns` column names joined by NUL (SQLite's names hold no NUL);
 * `arrays` makes arrays (decode.ts `rowLiteral`). The key holds the count and the mode: joined
 * names alone are the same for no column and one named '', or for '' as arrays and two named ''. */
function rowMaker(names: string, columns: number, arrays: boolean): MakeRow {
  const key = `${arrays ? 'a' : 'o'}${columns}\0${names}`
  let make = rowMakers.get(key)
  if (make === undefined) {
    const list = columns === 0 ? [] : names.split('\0')
    make = new Function('v', 'k', `return ${rowLiteral(list, (i) => `v[k + ${i}]`, arrays)}`) as MakeRow
    if (rowMakers.size >= MAX_ROW_MAKERS) rowMakers.clear()
    rowMakers.set(key, make)
  }
  return make
}

/** Counts for `diagnostics().inline` (types.ts `Diagnostics`). */
export type InlineCounters = Diagnostics['inline']

export const NO_INLINE_COUNTS: Readonly<InlineCounters> = {
  runs: 0,
  moved: 0,
  skipped: 0,
  control: 0,
  writes: 0,
  commits: 0,
  groups: 0,
  groupReads: 0,
  live: 0,
  sliced: 0,
}

/** What a live query's first run on the JS thread delivers, as a completion would (engine.ts
 * `#deliver`). */
export interface FirstRun {
  kind: Done
  a: unknown
  b: unknown
}

/** SQLite work on the JS thread through the engine's `readInline`, `controlInline`,
 * `writeInline` and `liveStartInline`: turns the handler's call into a settled promise, and
 * counts what ran where. One per engine, made only when the budget is above 0; the handler is
 * a field so it is created once. A commit here that makes a checkpoint due calls
 * `onCheckpointDue` (the checkpoint is the writer thread's work). */
export class InlineRunner {
  readonly counters: InlineCounters = { ...NO_INLINE_COUNTS }
  readonly #readInline: JobCalls['readInline']
  readonly #controlInline: JobCalls['controlInline']
  readonly #beginGroupInline: JobCalls['beginGroupInline']
  readonly #writeInline: JobCalls['writeInline']
  readonly #liveStartInline: JobCalls['liveStartInline']
  readonly #budgetMicros: number
  readonly #safeIntegers: boolean
  readonly #onCheckpointDue: () => void
  #kind: JobKind = JobKind.Select
  #arrays = false
  #sql = ''
  #value: unknown
  #error: ResqliteError | undefined
  /** The write's error ended the transaction (SQLite rolled it back). */
  #ended = false
  /** What `liveStartInline` handed over. */
  #firstRun: FirstRun | undefined
  /** The SQL and params last given to `readInline`: the engine keeps them. A params buffer is
   * kept only when small (a large one is dropped after its call: params.ts). */
  #lastSql: string | undefined
  #lastParams: Uint8Array | undefined
  /** The names `readInline` handed over last (it hands over null for them again, and none
   * with `Inline.Numbers`), their count, and the row maker for them in the row mode last used. */
  #lastNames: string | undefined
  #lastColumns = 0
  #lastArrays = false
  #lastMake: MakeRow = rowMaker('', 0, false)

  constructor(calls: JobCalls, budgetMicros: number, safeIntegers: boolean, onCheckpointDue: () => void) {
    this.#readInline = calls.readInline
    this.#controlInline = calls.controlInline
    this.#beginGroupInline = calls.beginGroupInline
    this.#writeInline = calls.writeInline
    this.#liveStartInline = calls.liveStartInline
    this.#budgetMicros = budgetMicros
    this.#safeIntegers = safeIntegers
    this.#onCheckpointDue = onCheckpointDue
    calls.shareNumbers(NUMBERS)
  }

  readonly handle = (what: InlineResult, a: unknown, b: unknown, c: unknown, ...cells: unknown[]): void => {
    if (what === InlineResult.Rows) {
      // null: the names handed over last time (the same statement again, most often).
      const names = a === null ? (this.#lastNames as string) : (a as string)
      if (names !== this.#lastNames) {
        this.#lastNames = names
        this.#lastColumns = b as number
        this.#lastMake = rowMaker(names, this.#lastColumns, this.#arrays)
        this.#lastArrays = this.#arrays
      }
      this.#value = this.#rows(cells, c as number)
    } else if (what === InlineResult.Changes) {
      this.#value = this.#changes(a, b as number | bigint)
      if (c === true) this.#onCheckpointDue()
    } else if (what === InlineResult.Committed) {
      if (a === true) this.#onCheckpointDue()
    } else if (what === InlineResult.Json) {
      this.#value = a
    } else {
      this.#error = engineError(a as string, b as string, this.#sql)
      this.#ended = c === true
    }
  }

  /** The result of `rows` rows of cells of the last names' shape, as the call asked for it. */
  #rows(cells: unknown[], rows: number): unknown {
    const columns = this.#lastColumns
    if (this.#arrays !== this.#lastArrays) {
      this.#lastArrays = this.#arrays
      this.#lastMake = rowMaker(this.#lastNames as string, columns, this.#arrays)
    }
    const make = this.#lastMake
    let value: unknown
    if (this.#kind === JobKind.SelectOne) {
      value = rows === 0 ? undefined : make(cells, 0)
    } else {
      const out: Row[] = new Array(rows)
      for (let r = 0; r < rows; r++) out[r] = make(cells, r * columns)
      value = out
    }
    if (!this.#arrays) return value
    const list = columns === 0 ? [] : (this.#lastNames as string).split('\0')
    return arrayResult(list, value, this.#kind === JobKind.SelectOne)
  }

  /** The rows of a result `readInline` left in NUMBERS (`Inline.Numbers`). */
  #numberRows(): unknown {
    const count = NUMBERS[0]
    const cells: unknown[] = new Array(count)
    for (let i = 0; i < count; i++) {
      const n = NUMBERS[i + 1]
      cells[i] = Number.isNaN(n) ? null : n
    }
    return this.#rows(cells, this.#lastColumns === 0 ? 0 : count / this.#lastColumns)
  }

  /** A read run here, on the connection `on` names (the caller checked the writer is idle for
   * one of the writer's): the settled promise, or undefined when it must go to a thread. */
  read<T>(
    kind: JobKind,
    sql: string,
    params: Uint8Array,
    length: number,
    on: ReadOn,
    arrays: boolean,
  ): Promise<T> | undefined {
    this.#kind = kind
    this.#arrays = arrays
    this.#sql = sql
    // The SQL and params are left out when they are the last call's, which the engine kept
    // (js/args.rs `LastArgs`).
    const budget = this.#budgetMicros
    const how =
      params !== this.#lastParams
        ? this.#readInline(kind, length, budget, this.handle, on, sql, params)
        : sql !== this.#lastSql
          ? this.#readInline(kind, length, budget, this.handle, on, sql)
          : this.#readInline(kind, length, budget, this.handle, on)
    this.#lastSql = sql
    this.#lastParams = params.byteLength <= REMEMBERED_PARAMS ? params : undefined
    if (how === Inline.Numbers) {
      this.counters.runs++
      return Promise.resolve(this.#numberRows() as T)
    }
    if (how === Inline.Done) {
      this.counters.runs++
      const { value, error } = this.#take()
      return error === undefined ? Promise.resolve(value as T) : Promise.reject(error)
    }
    if (how === Inline.Moved) this.counters.moved++
    else if (how === Inline.Skipped) this.counters.skipped++
    return undefined
  }

  /** An execute run here on the idle writer's connection when its statement is bounded: inside
   * the transaction, whose errors that end it go to `onEnded`, or without one, alone (it
   * commits as it ends; experiments/040). The settled promise, or undefined when it must go to
   * the writer thread. */
  write<T>(
    sql: string,
    params: Uint8Array,
    length: number,
    onEnded: ((error: ResqliteError) => void) | undefined,
  ): Promise<T> | undefined {
    const how = this.#runWrite(JobKind.Execute, sql, params, length, onEnded !== undefined)
    if (how !== Inline.Done && how !== Inline.Numbers) return undefined
    this.counters.writes++
    if (how === Inline.Numbers) {
      const changes = this.#changes(NUMBERS[0], NUMBERS[1])
      if (NUMBERS[2] === 1) this.#onCheckpointDue()
      return Promise.resolve(changes as T)
    }
    const { value, error } = this.#take(onEnded)
    return error === undefined ? Promise.resolve(value as T) : Promise.reject(error)
  }

  /** A write's result, as `execute` resolves with it. */
  #changes(changes: unknown, rowid: number | bigint): unknown {
    return { changes, lastInsertRowid: this.#safeIntegers ? BigInt(rowid) : rowid }
  }

  /** The transaction's COMMIT run here, when it has little to write; undefined when it must go
   * to the writer thread. A write group's counts as `groups` (an empty one not at all). */
  commit(onEnded: (error: ResqliteError) => void, counter: 'commits' | 'groups' | null): Promise<void> | undefined {
    const how = this.#runWrite(JobKind.Control, 'COMMIT', EMPTY, 0, true)
    if (how !== Inline.Done && how !== Inline.Numbers) return undefined
    if (counter !== null) this.counters[counter]++
    if (how === Inline.Numbers) {
      if (NUMBERS[0] === 1) this.#onCheckpointDue()
      return RESOLVED
    }
    const { error } = this.#take(onEnded)
    return error === undefined ? RESOLVED : Promise.reject(error)
  }

  #runWrite(kind: JobKind, sql: string, params: Uint8Array, length: number, inTransaction: boolean): Inline {
    this.#sql = sql
    return this.#writeInline(kind, sql, params, length, this.#budgetMicros, this.handle, inTransaction)
  }

  /** The handler's result, cleared; an error that ended the transaction goes to `onEnded`. */
  #take(onEnded?: (error: ResqliteError) => void): { value: unknown; error: ResqliteError | undefined } {
    const value = this.#value
    const error = this.#error
    this.#value = undefined
    this.#error = undefined
    if (error !== undefined && this.#ended) onEnded?.(error)
    return { value, error }
  }

  /** Starts live query `id` with its first run here when it fits the budget: what that run
   * delivers, or undefined when the engine started it on the readers instead. */
  liveStart(id: number, sql: string, params: Uint8Array, length: number): FirstRun | undefined {
    const how = this.#liveStartInline(id, sql, params, length, this.#budgetMicros, this.#onFirstRun)
    if (how !== Inline.Done) return undefined
    this.counters.live++
    const first = this.#firstRun
    this.#firstRun = undefined
    return first
  }

  readonly #onFirstRun = (kind: Done, a: unknown, b: unknown): void => {
    this.#firstRun = { kind, a, b }
  }

  /** Opens a write group's transaction on the idle writer's connection (write-group.ts):
   * whether it did (not when the group's COMMIT could not run here). `readsOnly`: a group no
   * write will join (reads in a row), whose COMMIT writes nothing. */
  beginGroup(readsOnly: boolean): boolean {
    return this.#beginGroupInline(readsOnly) === Inline.Done
  }

  /** A cheap control statement run here on the idle writer's connection: whether it ran. */
  control(sql: string, inTransaction: boolean): boolean {
    if (this.#controlInline(sql, inTransaction) !== Inline.Done) return false
    this.counters.control++
    return true
  }
}
