// Reads on the JS thread (crates/engine/src/inline.rs; experiments/032): the engine steps the
// statement right away and calls `handle` once with the result's cells as arguments, each TEXT
// cell a string of its own. Rows are built by one generated function per column-name set, as
// in decode.ts, so every row of a shape shares one hidden class.
import { arrayResult, type Row, rowLiteral } from './decode'
import { ResqliteError } from './errors'
import { Inline, InlineResult, type JobCalls, JobKind } from './native'

type MakeRow = (cells: unknown[], k: number) => Row

const rowMakers = new Map<string, MakeRow>()
const MAX_ROW_MAKERS = 512

/** The row maker for column names joined by NUL (SQLite's names hold no NUL); `arrays` makes
 * arrays (decode.ts `rowLiteral`). */
function rowMaker(names: string, columns: number, arrays: boolean): MakeRow {
  const key = arrays ? `\0${names}` : names
  let make = rowMakers.get(key)
  if (make === undefined) {
    const list = columns === 0 ? [] : names.split('\0')
    make = new Function('v', 'k', `return ${rowLiteral(list, (i) => `v[k + ${i}]`, arrays)}`) as MakeRow
    if (rowMakers.size >= MAX_ROW_MAKERS) rowMakers.clear()
    rowMakers.set(key, make)
  }
  return make
}

/** Counts for `diagnostics().inline`. */
export interface InlineCounters {
  runs: number
  moved: number
  skipped: number
  control: number
}

/** SQLite work on the JS thread through the engine's `readInline` and `controlInline`: turns
 * the handler's call into a settled promise, and counts what ran where. One per engine, made
 * only when the budget is above 0; the handler is a field so it is created once. */
export class InlineReads {
  readonly counters: InlineCounters = { runs: 0, moved: 0, skipped: 0, control: 0 }
  readonly #readInline: JobCalls['readInline']
  readonly #controlInline: JobCalls['controlInline']
  readonly #budgetMicros: number
  #kind: JobKind = JobKind.Select
  #arrays = false
  #sql = ''
  #value: unknown
  #error: ResqliteError | undefined

  constructor(calls: JobCalls, budgetMicros: number) {
    this.#readInline = calls.readInline
    this.#controlInline = calls.controlInline
    this.#budgetMicros = budgetMicros
  }

  readonly handle = (what: InlineResult, a: unknown, b: unknown, c: unknown, ...cells: unknown[]): void => {
    if (what === InlineResult.Rows) {
      const rows = c as number
      const columns = b as number
      const make = rowMaker(a as string, columns, this.#arrays)
      if (this.#kind === JobKind.SelectOne) {
        this.#value = rows === 0 ? undefined : make(cells, 0)
      } else {
        const out: Row[] = new Array(rows)
        for (let r = 0; r < rows; r++) out[r] = make(cells, r * columns)
        this.#value = out
      }
      if (this.#arrays) {
        const names = columns === 0 ? [] : (a as string).split('\0')
        this.#value = arrayResult(names, this.#value, this.#kind === JobKind.SelectOne)
      }
    } else if (what === InlineResult.Json) {
      this.#value = a
    } else {
      this.#error = new ResqliteError(a as string, b as string, this.#sql)
    }
  }

  /** A read run here: the settled promise, or undefined when it must go to a thread. With
   * `inTransaction` it runs on the writer's connection (the caller checked the writer is idle). */
  read<T>(
    kind: JobKind,
    sql: string,
    params: Uint8Array,
    length: number,
    inTransaction: boolean,
    arrays: boolean,
  ): Promise<T> | undefined {
    this.#kind = kind
    this.#arrays = arrays
    this.#sql = sql
    const how = this.#readInline(kind, sql, params, length, this.#budgetMicros, this.handle, inTransaction)
    if (how === Inline.Done) {
      this.counters.runs++
      const error = this.#error
      const value = this.#value
      this.#error = undefined
      this.#value = undefined
      return error === undefined ? Promise.resolve(value as T) : Promise.reject(error)
    }
    if (how === Inline.Moved) this.counters.moved++
    else if (how === Inline.Skipped) this.counters.skipped++
    return undefined
  }

  /** A cheap control statement run here on the idle writer's connection: whether it ran. */
  control(sql: string, inTransaction: boolean): boolean {
    if (this.#controlInline(sql, inTransaction) !== Inline.Done) return false
    this.counters.control++
    return true
  }
}
