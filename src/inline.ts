// Reads on the JS thread (crates/engine/src/inline.rs; experiments/032): the engine steps the
// statement right away and calls `handle` once with the result's cells as arguments, each TEXT
// cell a string of its own. Rows are built by one generated function per column-name set, as
// in decode.ts, so every row of a shape shares one hidden class.
import type { Row } from './decode'
import { ResqliteError } from './errors'
import { Inline, InlineResult, type JobCalls, JobKind } from './native'

type MakeRow = (cells: unknown[], k: number) => Row

const rowMakers = new Map<string, MakeRow>()
const MAX_ROW_MAKERS = 512

/** The row maker for column names joined by NUL (SQLite's names hold no NUL). */
function rowMaker(names: string, columns: number): MakeRow {
  let make = rowMakers.get(names)
  if (make === undefined) {
    const list = columns === 0 ? [] : names.split('\0')
    // `__proto__` as a literal key would set the prototype; a computed key defines a property.
    const props = list.map((n, i) => `${n === '__proto__' ? '["__proto__"]' : JSON.stringify(n)}: v[k + ${i}]`)
    make = new Function('v', 'k', `return {${props.join(', ')}}`) as MakeRow
    if (rowMakers.size >= MAX_ROW_MAKERS) rowMakers.clear()
    rowMakers.set(names, make)
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

/** Runs reads inline through the engine's `readInline` and turns its handler call into a
 * settled promise. One per engine; the handler is a bound field so it is created once. */
export class InlineReads {
  readonly counters: InlineCounters = { runs: 0, moved: 0, skipped: 0, control: 0 }
  #kind: JobKind = JobKind.Select
  #value: unknown
  #error: ResqliteError | undefined

  readonly handle = (what: InlineResult, a: unknown, b: unknown, c: unknown, ...cells: unknown[]): void => {
    if (what === InlineResult.Rows) {
      const rows = c as number
      const columns = b as number
      const make = rowMaker(a as string, columns)
      if (this.#kind === JobKind.SelectOne) {
        this.#value = rows === 0 ? undefined : make(cells, 0)
      } else {
        const out: Row[] = new Array(rows)
        for (let r = 0; r < rows; r++) out[r] = make(cells, r * columns)
        this.#value = out
      }
    } else if (what === InlineResult.Json) {
      this.#value = a
    } else {
      this.#error = new ResqliteError(a as string, b as string, this.#sql)
    }
  }
  #sql = ''

  /** The settled read, or undefined when it must go to a reader. */
  run<T>(
    read: JobCalls['readInline'],
    kind: JobKind,
    sql: string,
    params: Uint8Array,
    length: number,
    budgetMicros: number,
    inTransaction: boolean,
  ): Promise<T> | undefined {
    this.#kind = kind
    this.#sql = sql
    const how = read(kind, sql, params, length, budgetMicros, this.handle, inTransaction)
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
}
