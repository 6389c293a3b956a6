// A select calling JavaScript functions, run on the JS thread's connection a slice of about
// 0.25 ms at a time, with a turn of the event loop between slices: its functions are called
// right there, where a reader would hand each call over (experiments/054). Which selects run so
// is placement.ts's decision (`readRunsSliced`); the slice length is the native side's
// (crates/engine/src/js_thread/runs.rs SLICE, napi/inline_calls.rs `read_slice`).
import { awaitedAway } from '../caller-stack'
import { arrayResult, RowsAssembler, type RowsResult } from '../decode'
import { engineError, type ResqliteError } from '../errors'
import { Inline, InlineResult, type JobCalls, JobKind } from '../native'
import { copyPacked, NO_PARAMS, type Packed } from '../params'
import type { InlineCounters } from './inline'
import type { Threads } from './js-thread'

/** The sliced reads of one engine, and those under way (`close` waits for them: they run on the
 * JS thread's connection, which the engine closes). */
export class SlicedReads {
  readonly #calls: JobCalls
  readonly #threads: Threads
  readonly #counters: InlineCounters
  readonly #underWay = new Set<Promise<unknown>>()

  constructor(calls: JobCalls, threads: Threads, counters: InlineCounters) {
    this.#calls = calls
    this.#threads = threads
    this.#counters = counters
  }

  /** Settles when the sliced reads under way now have; undefined when none is. */
  underWay(): Promise<unknown> | undefined {
    return this.#underWay.size > 0 ? Promise.allSettled([...this.#underWay]) : undefined
  }

  /** The read, run in slices; undefined when it calls no JavaScript function (or another runs
   * so): a reader's job then. A step that overruns (a sort, an aggregate: one step over every
   * row) ends it, and it runs on a reader instead. */
  read<T>(sql: string, packed: Packed, arrays: boolean): Promise<T> | undefined {
    let part: RowsResult | undefined
    let last = false
    let error: ResqliteError | undefined
    const handler = (what: InlineResult, a: unknown, b: unknown, c: unknown): void => {
      if (what === InlineResult.Rows) {
        part = this.#threads.rows(a, b, arrays)
        last = c === true
      } else error = engineError(a as string, b as string, sql)
    }
    // A turn steps one slice and decodes its rows in what is left of the turn's budget; rows
    // left over decode in the next turns, before the next slice (experiments/066).
    let turnStart = performance.now()
    if (this.#calls.readSlice(sql, packed.bytes, packed.length, handler) !== Inline.Done) return undefined
    this.#counters.sliced++
    const params = copyPacked(packed)
    const read = new Promise<T>((resolve, reject) => {
      let assembler: RowsAssembler | undefined
      const next = (): void => {
        turnStart = performance.now()
        take(this.#calls.readSlice(null, NO_PARAMS.bytes, 0, handler))
      }
      const take = (status: Inline): void => {
        if (status !== Inline.Done) {
          // Moved (a step overran) or the connection went (a rekey, close): from the start,
          // on a reader; nothing was resolved yet.
          this.#threads.readOnThreads<T>(JobKind.Select, sql, params, undefined, arrays).then(resolve, reject)
          return
        }
        if (error !== undefined) {
          reject(error)
          return
        }
        const rows = part as RowsResult
        assembler ??= new RowsAssembler(
          arrays ? (all) => resolve(arrayResult(rows.columns, all, false) as T) : (all) => resolve(all as T),
          reject,
        )
        assembler.add(rows, last, turnStart)
        if (!last) assembler.afterDecoding(next)
      }
      take(Inline.Done)
    })
    this.#underWay.add(read)
    const forget = () => this.#underWay.delete(read)
    read.then(forget, forget)
    return awaitedAway(read)
  }
}
