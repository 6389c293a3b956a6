// Iterations (`db.iterate`, `tx.iterate`): a query's rows a page at a time, its statement held
// open on the engine between pages (crates/engine/src/threads/iterate.rs), so memory stays flat
// whatever the result's size. The next page is asked for as soon as one arrives, so the engine
// steps it while the caller works through this one: at most two pages are alive at a time.

import { abortable } from './abort-listeners'
import { prepareIterate } from './arguments'
import { ResqliteError } from './errors'
import { encodeParams, type Packed, type Params } from './params'
import { endIteration, type PlacementRecord, type QueryContext, queryChannel, startIteration, traced } from './tracing'
import type { IterateOptions } from './types'

/** One page, whether it is the last, and the column names. */
export interface Page<T> {
  rows: T[]
  last: boolean
  columns: string[]
}

/** Where an iteration's pages come from (Database, Transaction). */
export interface PageSource<T> {
  /** The first page (the statement starts), then each next one. */
  next(): Promise<Page<T>>
  /** Ends the iteration before its last page: the engine frees its statement. */
  end(): void
}

const DONE: IteratorReturnResult<undefined> = { value: undefined, done: true }

/** The pages of an iteration that cannot start: its first step rejects with `error`. */
function failedSource<T>(error: unknown): PageSource<T> {
  return { next: () => Promise.reject(error), end: () => {} }
}

/** An iteration of `sql` (Database.iterate, Transaction.iterate): its arguments are checked
 * now (a bad one rejects its first step), its pages come from `open` once it starts, and
 * `blocked` says why a step cannot run now (a closed database, a finished transaction). */
export function iteration<T>(
  sql: string,
  params: Params | undefined,
  options: IterateOptions | undefined,
  open: (packed: Packed, pageRows: number, arrays: boolean) => PageSource<T>,
  blocked: () => ResqliteError | undefined,
  record: PlacementRecord | undefined,
  inTransaction: boolean,
): RowIterator<T> {
  let args: ReturnType<typeof prepareIterate>
  try {
    args = prepareIterate(sql, options, () => encodeParams(params))
  } catch (error) {
    return new RowIterator<T>(() => failedSource(error), undefined, String(sql), record, inTransaction)
  }
  const { packed, signal, pageRows, arrays } = args
  const start = (): PageSource<T> => {
    const why = blocked()
    if (why) return failedSource(why)
    const pages = open(packed, pageRows, arrays)
    return {
      next: () => {
        const why = blocked()
        return why ? Promise.reject(why) : pages.next()
      },
      end: () => blocked() || pages.end(),
    }
  }
  return new RowIterator<T>(start, signal, sql, record, inTransaction)
}

/** The rows of one query, read a page at a time (`db.iterate`, `tx.iterate`): iterate it with
 * `for await`, or take whole pages with {@link RowIterator.pages}. Read it once: the query
 * starts when the iteration does, and a `break`, a `return`, a throw out of the loop or the
 * `signal` ends it and frees its statement. */
export class RowIterator<T> implements AsyncIterable<T> {
  #open: (() => PageSource<T>) | undefined
  readonly #signal: AbortSignal | undefined
  readonly #sql: string
  #columns: string[] | undefined
  /** Tracing (tracing.ts): where the database records placements, and the iteration's context
   * once it started traced. */
  readonly #record: PlacementRecord | undefined
  readonly #inTransaction: boolean
  #trace: QueryContext | undefined

  /** @internal Made by `Database.iterate` and `Transaction.iterate`. */
  constructor(
    open: () => PageSource<T>,
    signal: AbortSignal | undefined,
    sql: string,
    record: PlacementRecord | undefined,
    inTransaction: boolean,
  ) {
    this.#open = open
    this.#signal = signal
    this.#sql = sql
    this.#record = record
    this.#inTransaction = inTransaction
  }

  /** The result's column names, in order (duplicates included): known once the first page has
   * arrived, `undefined` before. With `rowMode: 'array'` they name the rows' elements. */
  get columns(): string[] | undefined {
    return this.#columns
  }

  /** The rows a page at a time (each page an array of up to `pageRows` rows; none is empty). */
  pages(): AsyncIterableIterator<T[]> {
    return this.#pages(this.#start())
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return new Rows(this.#pages(this.#start()))
  }

  #start(): PageSource<T> {
    const open = this.#open
    if (open === undefined) {
      throw new ResqliteError(
        'ERR_ITERATION_STARTED',
        'this iteration is already being read (or was read); call iterate() again to read the rows again',
        this.#sql,
      )
    }
    this.#open = undefined
    if (this.#record === undefined || !traced(queryChannel)) return open()
    const { source, context } = startIteration(this.#record, this.#sql, this.#inTransaction, open)
    this.#trace = context
    return source
  }

  async *#pages(source: PageSource<T>): AsyncGenerator<T[], void, undefined> {
    const signal = this.#signal
    const trace = this.#trace
    let failure: unknown
    let pending: Promise<Page<T>> | undefined = source.next()
    try {
      while (pending !== undefined) {
        const page: Page<T> = await (signal ? abortable(pending, signal, this.#sql) : pending)
        this.#columns ??= page.columns
        if (trace !== undefined) trace.rows! += page.rows.length
        // The next page is stepped while the caller works through this one.
        pending = page.last ? undefined : source.next()
        pending?.catch(() => {}) // its failure is seen when it is awaited, below or in finally
        // A page is worked through in a turn of the event loop of its own: the next page's
        // completion may be handed over in the same libuv callback as this one (Node runs a
        // thread-safe function's queued calls in a loop), and without this the whole iteration
        // could run there, holding the loop (experiments/033).
        await nextTurn()
        if (page.rows.length > 0) yield page.rows
      }
    } catch (error) {
      // A page that failed ended its statement; an abort leaves one page in flight.
      if (!(error instanceof ResqliteError && error.code === 'ABORT_ERR')) pending = undefined
      failure = error
      throw error
    } finally {
      if (trace !== undefined) endIteration(trace, failure)
      // Ended early (break, return, a throw, an abort): once the page in flight is back, the
      // statement is freed — unless that page was the last, which freed it already.
      pending?.then(
        (page) => page.last || source.end(),
        () => {},
      )
    }
  }
}

/** The rows of an iteration's pages, one by one. */
class Rows<T> implements AsyncIterator<T> {
  #page: T[] = []
  #at = 0
  readonly #pages: AsyncIterator<T[], void>

  constructor(pages: AsyncIterator<T[], void>) {
    this.#pages = pages
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#at < this.#page.length) return Promise.resolve({ value: this.#page[this.#at++]!, done: false })
    return this.#pages.next().then((result) => {
      if (result.done) return DONE
      this.#page = result.value
      this.#at = 1
      return { value: result.value[0]!, done: false }
    })
  }

  return(): Promise<IteratorResult<T>> {
    this.#page = []
    return this.#pages.return!(undefined).then(() => DONE)
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
