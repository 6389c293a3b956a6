// resqlite/sqlite3's Statement: sqlite3's prepared statement, its calls run in order through
// the Database's scheduler (src/sqlite3.ts).
import { EventEmitter } from 'node:events'
import type { Params } from './params'
import type { Database } from './sqlite3'
import { type Callback, call, ignore, inTick, parseArgs, site } from './sqlite3-args'
import { parse } from './sqlite3-connection'
import { refusal, type Sqlite3Error, toSqlite3Error } from './sqlite3-errors'
import type { Row } from './types'

/** Marks a Statement made by the Database's own one-shot calls: it prepares nothing. */
export const ONE_SHOT = Symbol('one-shot')

/** What a call does once it has its result: calls its callbacks. */
type Delivery = () => void
/** A call that has nothing more to report. */
const NO_DELIVERY: Delivery = () => {}
/** A call's work: its delivery, once its result is in. Never throws or rejects (its delivery
 * then passes the error on). */
type Step = () => Delivery | Promise<Delivery>

export class Statement extends EventEmitter {
  readonly #db: Database
  readonly sql: string
  lastID: number | bigint | undefined
  changes: number | undefined
  /** The parameters bound last (`bind`, or given to a call). */
  #params: Params | undefined
  /** sqlite3's `get` steps on from the row it returned last until the statement is reset. */
  #cursor: { at: number; rows: Row[] | undefined } | undefined
  #finalized = false
  /** Each call is handed to the Database's scheduler when it is made (so calls keep their order
   * among the Database's), and runs once the one before it (the prepare first) has called back.
   * `#busy`: a call runs; calls whose turn came meanwhile wait in `#waiting`, in call order. */
  #busy = false
  readonly #waiting: (() => void)[] = []
  /** Set from `finalize()` until its callback: the failures of the calls made meanwhile, which
   * sqlite3 delivers as the finalize runs, before its callback. */
  #finalizing: Delivery[] | undefined
  #prepareError: Sqlite3Error | undefined

  constructor(db: Database, sql: string, callback?: Callback | typeof ONE_SHOT) {
    super()
    this.#db = db
    this.sql = sql
    if (callback === ONE_SHOT) return
    db.prepared.add(this)
    // Compiled once (on a reader, or in the open transaction, to see its schema): its errors go
    // to the callback; the statement's later calls get them too.
    const where = site(Statement)
    const prepared = (error?: unknown): Delivery => {
      if (error === undefined) return () => call(callback, this, null)
      db.prepared.delete(this)
      this.#prepareError = toSqlite3Error(error, where)
      const failure = this.#prepareError
      return () => this.#errorTo(failure, typeof callback === 'function' ? callback : undefined)
    }
    this.#push(() => {
      try {
        const connection = db.connection()
        const parsed = parse(sql)
        if (parsed.pieces.length > 1) {
          throw refusal('ERR_MULTIPLE_STATEMENTS', 'several statements in one prepare: use exec', 'ERROR')
        }
        connection.check(parsed, sql)
        if (parsed.control !== undefined) return prepared()
        return connection.target.columns(sql).then(() => prepared(), prepared)
      } catch (error) {
        return prepared(error)
      }
    })
  }

  /** Queues `work` after the statement's earlier calls, in the Database's scheduler. */
  #queue(
    fn: (...args: never[]) => unknown,
    args: unknown[],
    callbacks: number,
    work: (params: Params | undefined, fns: Callback[]) => Promise<Delivery>,
  ): this {
    const where = site(fn)
    let parsed: ReturnType<typeof parseArgs>
    try {
      parsed = parseArgs(args, callbacks)
    } catch (error) {
      const last = args.at(-1)
      this.#errorTo(toSqlite3Error(error, where), typeof last === 'function' ? (last as Callback) : undefined)
      return this
    }
    const { params, fns } = parsed
    const finalized = this.#finalized
    const failed =
      (error: unknown): Delivery =>
      () =>
        this.#errorTo(toSqlite3Error(error, where), fns.at(-1))
    if (this.#finalizing !== undefined) {
      this.#finalizing.push(failed(refusal('SQLITE_MISUSE', 'Statement is already finalized', 'MISUSE')))
      return this
    }
    // Not an async function: each promise costs a small read's worth under async hooks.
    this.#push(() => {
      try {
        if (finalized) throw refusal('SQLITE_MISUSE', 'Statement is already finalized', 'MISUSE')
        if (this.#prepareError !== undefined) {
          // Reported once already, to the prepare's callback or as 'error': only a callback
          // hears it again (sqlite3 calls none back).
          return fns.at(-1) === undefined ? NO_DELIVERY : failed(this.#prepareError)
        }
        return work(params, fns).then(undefined, failed)
      } catch (error) {
        return failed(error)
      }
    })
    return this
  }

  /** Hands `step` to the Database's scheduler; in its turn it runs once the statement's calls
   * before it have called back. */
  #push(step: Step): void {
    this.#db.enqueue(
      () =>
        new Promise<void>((done) => {
          if (this.#busy || this.#waiting.length > 0) this.#waiting.push(() => this.#start(step, done, true))
          else this.#start(step, done, false)
        }),
      this.#db.exclusive(this.sql),
    )
  }

  /** Runs `step` and calls back. A step that has its result at once (`finalize`, a call that
   * fails before it runs) and whose turn came in `#next` calls back right away, in the tick of
   * the call before it; any other in a tick of its own (`inTick`, as sqlite3's thread-pool work
   * calls back), and the calls waiting then start in that tick. So, as sqlite3's
   * Statement::Process runs the queue right after a callback, a `finalize` queued behind a
   * `run` calls back right after that run's callback, even when writes that completed together
   * (a write group) call back in a row. */
  #start(step: Step, done: () => void, now: boolean): void {
    this.#busy = true
    const deliver = (delivery: Delivery): void => {
      delivery()
      this.#busy = false
      done()
    }
    const delivery = step()
    if (now && typeof delivery === 'function') deliver(delivery)
    else
      void Promise.resolve(delivery).then((later) =>
        inTick(() => {
          deliver(later)
          this.#next()
        }),
      )
  }

  /** Starts the calls waiting, one after another while each calls back at once: a loop, not a
   * recursion, so many calls failing in a row do not deepen the stack. */
  #next(): void {
    while (!this.#busy && this.#waiting.length > 0) this.#waiting.shift()!()
  }

  #errorTo(error: Sqlite3Error, callback: Callback | undefined): void {
    if (callback !== undefined) call(callback, this, error)
    else this.#db.unhandled(error, this)
  }

  /** Parameters given to a call replace those bound before, and start the statement over. */
  #bound(params: Params | undefined): Params | undefined {
    if (params !== undefined) {
      this.#params = params
      this.#cursor = undefined
    }
    return this.#params
  }

  /** Runs the statement; its `lastID` and `changes` are set once the rows are in. */
  #rows(params: Params | undefined, one: boolean): Promise<Row[]> {
    return this.#db.statement(this.sql, params, one)
  }

  bind(...args: unknown[]): this {
    return this.#queue(this.bind, args, 1, async (params, [callback]) => {
      this.#params = params
      this.#cursor = undefined
      return () => call(callback, this, null)
    })
  }

  reset(callback?: Callback): this {
    return this.#queue(this.reset, callback === undefined ? [] : [callback], 1, async (_params, [done]) => {
      this.#cursor = undefined
      return () => call(done, this, null)
    })
  }

  run(...args: unknown[]): this {
    return this.#queue(this.run, args, 1, (params, [callback]) =>
      this.#rows(this.#bound(params), true).then((rows) => () => {
        this.#db.changes(this, rows)
        // A read stepped once: a `get` after it goes on from its first row.
        this.#cursor = rows.length > 0 ? { at: 1, rows: undefined } : { at: Infinity, rows: undefined }
        call(callback, this, null)
      }),
    )
  }

  get(...args: unknown[]): this {
    return this.#queue(this.get, args, 1, async (params, [callback]) => {
      const bound = this.#bound(params)
      const cursor = this.#cursor
      let row: Row | undefined
      if (cursor === undefined) {
        row = (await this.#rows(bound, true))[0]
        this.#cursor = { at: row === undefined ? Infinity : 1, rows: undefined }
      } else if (cursor.at !== Infinity) {
        cursor.rows ??= await this.#rows(bound, false)
        row = cursor.rows[cursor.at]
        cursor.at = row === undefined ? Infinity : cursor.at + 1
      }
      return () => call(callback, this, null, row)
    })
  }

  all(...args: unknown[]): this {
    return this.#queue(this.all, args, 1, (params, [callback]) =>
      this.#rows(this.#bound(params), false).then((rows) => () => {
        this.#db.changes(this, rows)
        this.#cursor = { at: Infinity, rows: undefined }
        call(callback, this, null, rows)
      }),
    )
  }

  each(...args: unknown[]): this {
    return this.#queue(this.each, args, 2, async (params, fns) => {
      const [row, complete] = fns.length === 2 ? fns : [fns[0], undefined]
      const count = await this.#db.eachRow(this.sql, this.#bound(params), (each) => call(row, this, null, each))
      this.#cursor = { at: Infinity, rows: undefined }
      return () => call(complete, this, null, count)
    })
  }

  map(...args: unknown[]): this {
    return this.#queue(this.map, args, 1, async (params, [callback]) => {
      const rows = await this.#rows(this.#bound(params), false)
      this.#cursor = { at: Infinity, rows: undefined }
      const result: Record<string, unknown> = {}
      if (rows.length > 0) {
        const keys = Object.keys(rows[0]!)
        const [key, value] = keys as [string, string]
        for (const row of rows) result[String(row[key])] = keys.length > 2 ? row : row[value]
      }
      return () => call(callback, this, null, result)
    })
  }

  /** Finalizes after the calls queued before; later calls fail. Returns the Database. */
  finalize(callback?: Callback): Database {
    const done = typeof callback === 'function' ? callback : undefined
    if (this.#finalized) {
      // A second finalize fails as any call made after the first.
      this.#queue(this.finalize, done === undefined ? [] : [done], 1, async () => ignore)
      return this.#db
    }
    const failing: Delivery[] = []
    // Not through #queue: a statement whose prepare failed finalizes too (its error went to the
    // prepare's callback).
    this.#push(() => () => {
      this.#finalizing = undefined
      for (const fail of failing) fail()
      call(done, this, null)
    })
    this.#finalizing = failing
    this.#finalized = true
    this.#db.prepared.delete(this)
    return this.#db
  }
}
