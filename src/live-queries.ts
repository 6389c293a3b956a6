// Live queries (docs/live-queries.md): `db.stream(sql, params)` is a LiveQuery; subscribing
// starts one native query per distinct (sql, parameters), shared by every subscriber. The
// engine re-runs it when a committed write touched what it reads and sends rows only when they
// differ from the last ones sent; this side fans them out to the subscribers.
// Naming: the concept is a "live query" everywhere, the engine included (`liveStart`,
// `liveStop`, `LiveSink`); only the public `db.stream()` and its type aliases keep the older name.

import { checkSql } from './arguments'
import type { Engine } from './engine'
import { closedError, describe, type ResqliteError, typeError } from './errors'
import { callInFunctionError, inFunction } from './functions'
import type { NativeDiagnostics } from './native'
import { encodeParams, type Packed, type Params } from './params'
import type { Row } from './types'

/** Receives a live query's results (the shape of an RxJS observer). Methods are called on the
 * object, so a class instance works. */
export interface LiveQueryObserver<T> {
  /** The current rows, then the new rows after each committed write that changed them. The
   * same array goes to every subscriber: treat it as read-only. */
  next?(rows: T[]): void
  /** A run failed (a `ResqliteError`, or a `TypeError` for bad input). After a failed first
   * run the live query ends (`complete` follows); a later failure (say, its table was dropped)
   * keeps it, and the next successful run delivers rows again. Without this method, the error
   * becomes a process warning. */
  error?(error: unknown): void
  /** The subscription ended: its first run failed (bad SQL or parameters included), or the
   * database closed. Not called on unsubscribe. */
  complete?(): void
}

/** Stops a subscription when called; idempotent. Also an RxJS-style subscription object. */
export interface Unsubscribe {
  /** Stops the subscription: no more calls to its observer. */
  (): void
  /** The same as calling it (the shape RxJS expects). */
  unsubscribe(): void
  /** True once it has been called (it stays false when the subscription ends on its own). */
  readonly closed: boolean
}

/** Live queries' counters: `(await db.diagnostics()).streams`. */
export interface LiveQueryCounters {
  /** Subscriptions now. */
  active: number
  /** Distinct native queries now (identical sql and parameters share one). */
  queries: number
  /** Runs after an invalidation (first runs not counted). */
  requeries: number
  /** Changes to a table a query reads that touched none of the columns it reads. */
  skippedByColumns: number
  /** Results delivered to subscribers (one per subscriber per result). */
  emissions: number
  /** Runs whose result equalled the last one delivered: nothing crossed to JS. */
  unchangedSuppressed: number
  /** Queries whose reads could not all be recorded: they re-run on every change. */
  fallbackAll: number
}

/** The former name of {@link LiveQueryObserver}.
 * @deprecated Use `LiveQueryObserver`; this alias remains so existing code compiles. */
export type StreamObserver<T> = LiveQueryObserver<T>

/** The former name of {@link LiveQueryCounters}.
 * @deprecated Use `LiveQueryCounters`; this alias remains so existing code compiles. */
export type StreamCounters = LiveQueryCounters

interface Subscriber {
  observer: LiveQueryObserver<unknown>
  /** Has received a result (the current rows, or a newer one). */
  seen: boolean
  closed: boolean
}

/** One native query and its subscribers. */
class SharedQuery {
  readonly subscribers = new Set<Subscriber>()
  /** The last rows delivered, for subscribers who join later. */
  rows: Row[] | undefined
  id = 0

  constructor(
    readonly key: string,
    readonly live: LiveQueries,
  ) {}

  receive(rows: Row[] | undefined, error: ResqliteError | undefined): void {
    if (error !== undefined) {
      if (this.rows === undefined) this.live.end(this, error)
      else for (const s of [...this.subscribers]) fail(s, error)
      return
    }
    this.rows = rows
    for (const s of [...this.subscribers]) this.send(s)
  }

  send(s: Subscriber): void {
    if (s.closed || this.rows === undefined) return
    s.seen = true
    this.live.emissions++
    call(s.observer, 'next', this.rows)
  }
}

/** Calls one of an observer's methods, if it has it. A method that throws does not stop the
 * others, nor the subscribers after it: its error is rethrown on its own, as an uncaught
 * exception (process 'uncaughtException', the original error and its stack), which is what
 * RxJS and the Observable proposal do with an observer's error. */
function call(observer: LiveQueryObserver<unknown>, method: 'next' | 'error' | 'complete', value?: unknown): void {
  try {
    if (method === 'complete') observer.complete?.()
    else observer[method]?.(value as never)
  } catch (error) {
    queueMicrotask(() => {
      throw error
    })
  }
}

/** Reports a run's failure to a subscriber; one without an error handler gets a process
 * warning, so no failure is silent. */
function fail(s: Subscriber, error: unknown): void {
  if (!s.closed) report(s.observer, error)
}

function report(observer: LiveQueryObserver<unknown>, error: unknown): void {
  if (observer.error) call(observer, 'error', error)
  else process.emitWarning(error as Error)
}

/** `subscribe`'s arguments: a `next` function (and an optional `error` function), or an
 * observer object whose `next`, `error` and `complete` are functions where given. Checked when
 * subscribing: a wrong one would otherwise fail later, as an uncaught exception. */
function checkObserver(next: unknown, error: unknown): void {
  if (typeof next === 'function') {
    if (error !== undefined && typeof error !== 'function')
      throw typeError(`subscribe: error must be a function, got ${describe(error)}`)
    return
  }
  if (typeof next !== 'object' || next === null) {
    throw typeError(`subscribe takes a next function or an observer { next, error, complete }, got ${describe(next)}`)
  }
  if (error !== undefined)
    throw typeError('subscribe: with an observer object, give error as its method', 'ERR_INVALID_ARG_VALUE')
  for (const method of ['next', 'error', 'complete'] as const) {
    const f = (next as Record<string, unknown>)[method]
    if (f !== undefined && typeof f !== 'function')
      throw typeError(`subscribe: observer.${method} must be a function, got ${describe(f)}`)
  }
}

/** The live queries of one database. */
export class LiveQueries {
  readonly #engine: Engine
  readonly #queries = new Map<string, SharedQuery>()
  #active = 0
  #closed = false
  emissions = 0

  constructor(engine: Engine) {
    this.#engine = engine
  }

  get size(): number {
    return this.#queries.size
  }

  subscribe(sql: unknown, params: unknown, observer: LiveQueryObserver<unknown>, options?: unknown): Unsubscribe {
    const s: Subscriber = { observer, seen: false, closed: false }
    const stop = unsubscriber(() => this.#unsubscribe(query, s))
    let query: SharedQuery | undefined
    let packed: Packed
    try {
      // A subscription started inside a SQL function would run a query while that function's
      // statement waits for it (a rekey then waits for both: issue 43's freeze).
      if (inFunction()) throw callInFunctionError()
      if (this.#closed) throw closedError()
      checkSql(sql)
      if (options !== undefined) {
        // A live query runs until unsubscribed: a signal (or any option) would be ignored.
        throw typeError('stream takes no options: a live query runs until you unsubscribe', 'ERR_INVALID_ARG_VALUE')
      }
      // `[]` and `{}` mean no parameters, as `undefined` does: one key for all three.
      const none = (Array.isArray(params) || isPlainEmpty(params)) && Object.keys(params as object).length === 0
      packed = encodeParams(none ? undefined : params)
    } catch (error) {
      // Never thrown at the caller: bad input reaches the subscriber like any failure.
      queueMicrotask(() => {
        if (s.closed) return
        s.closed = true
        report(observer, error)
        call(observer, 'complete')
      })
      return stop
    }
    // The key compares SQL and each parameter's type and value (their packed bytes).
    const key = `${packed.bytes.toString('latin1', 0, packed.length)}\u0000${sql}`
    query = this.#queries.get(key)
    if (query === undefined) {
      const created = new SharedQuery(key, this)
      query = created
      this.#queries.set(key, created)
      created.id = this.#engine.liveStart(sql, packed, (rows, error) => created.receive(rows, error))
    } else if (query.rows !== undefined) {
      const joined = query
      queueMicrotask(() => {
        if (!s.seen) joined.send(s)
      })
    }
    query.subscribers.add(s)
    this.#active++
    return stop
  }

  #unsubscribe(query: SharedQuery | undefined, s: Subscriber): void {
    if (s.closed) return
    s.closed = true
    if (query === undefined || !query.subscribers.delete(s)) return
    this.#active--
    if (query.subscribers.size === 0) this.#drop(query)
  }

  #drop(query: SharedQuery): void {
    this.#queries.delete(query.key)
    this.#engine.liveStop(query.id)
  }

  /** Ends a query for all its subscribers: after `error`, if given, each completes. Each is
   * closed first, so an unsubscribe from inside its callbacks finds nothing left to do. */
  end(query: SharedQuery, error?: unknown): void {
    this.#drop(query)
    const subscribers = [...query.subscribers]
    query.subscribers.clear()
    for (const s of subscribers) {
      s.closed = true
      this.#active--
    }
    for (const s of subscribers) {
      if (error !== undefined) report(s.observer, error)
      call(s.observer, 'complete')
    }
  }

  /** The database is closing: every subscription completes. */
  closeAll(): void {
    this.#closed = true
    for (const query of [...this.#queries.values()]) this.end(query)
  }

  counters(native: NativeDiagnostics): LiveQueryCounters {
    return {
      active: this.#active,
      queries: native.queries,
      requeries: native.requeries,
      skippedByColumns: native.skippedByColumns,
      emissions: this.emissions,
      unchangedSuppressed: native.unchangedSuppressed,
      fallbackAll: native.fallbackAll,
    }
  }
}

function isPlainEmpty(v: unknown): boolean {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype
}

function unsubscriber(stop: () => void): Unsubscribe {
  let closed = false
  const fn = (() => {
    closed = true
    stop()
  }) as Unsubscribe
  Object.defineProperty(fn, 'closed', { get: () => closed })
  fn.unsubscribe = fn
  return fn
}

/** A query whose rows update themselves: `subscribe`, `for await`, or RxJS `from(live)`. Lazy:
 * nothing runs until the first subscription. */
export class LiveQuery<T = Row> implements AsyncIterable<T[]> {
  readonly #sql: string
  readonly #live: LiveQueries
  readonly #params: Params | undefined
  readonly #options: unknown

  /** @internal Made by `db.stream()`. */
  constructor(live: LiveQueries, sql: string, params: Params | undefined, options?: unknown) {
    this.#live = live
    this.#sql = sql
    this.#params = params
    this.#options = options
  }

  /** The query's SQL, as given to `db.stream()` (read-only: assigning it throws in strict mode). */
  get sql(): string {
    return this.#sql
  }

  /** Calls `next` with the current rows, then with the new rows after every committed write
   * that changed them (results equal to the last one delivered are skipped). Errors of the
   * query go to `error` (see {@link LiveQueryObserver.error}); it throws only a `TypeError`
   * (`ERR_INVALID_ARG_TYPE`) when `next` or `error` is not a function. A callback that throws
   * does not end the subscription: its error is rethrown as an uncaught exception. Subscribers
   * of the same (sql, params) share one native query.
   *
   * @returns The function that stops the subscription. */
  subscribe(next: (rows: T[]) => void, error?: (error: unknown) => void): Unsubscribe
  /** Subscribes an observer: `next` with the current rows, then with the new rows after every
   * committed write that changed them; `error` and `complete` as {@link LiveQueryObserver}
   * describes. Throws only a `TypeError` (`ERR_INVALID_ARG_TYPE`) for something that is not an
   * observer (a method given that is not a function).
   *
   * @returns The function that stops the subscription. */
  subscribe(observer: LiveQueryObserver<T>): Unsubscribe
  subscribe(next: ((rows: T[]) => void) | LiveQueryObserver<T>, error?: (error: unknown) => void): Unsubscribe {
    checkObserver(next, error)
    // An observer object is kept as it is (RxJS passes a class instance): its methods are
    // called on it.
    const observer: LiveQueryObserver<T> = typeof next === 'function' ? { next, error } : next
    return this.#live.subscribe(this.#sql, this.#params, observer, this.#options)
  }

  /** Yields the current rows, then each change; when results arrive faster than the loop
   * takes them, only the latest is kept. `break` unsubscribes. A failed run throws. */
  [Symbol.asyncIterator](): AsyncIterator<T[]> {
    let latest: { rows: T[] } | undefined
    let failure: { error: unknown } | undefined
    let done = false
    let waiting: { resolve: (r: IteratorResult<T[]>) => void; reject: (e: unknown) => void } | undefined
    const stop = this.subscribe({
      next(rows) {
        if (waiting) waiting.resolve({ value: rows, done: false })
        else latest = { rows }
        waiting = undefined
      },
      error(error) {
        stop()
        done = true
        if (waiting) waiting.reject(error)
        else failure = { error }
        waiting = undefined
      },
      complete() {
        done = true
        waiting?.resolve({ value: undefined, done: true })
        waiting = undefined
      },
    })
    return {
      next(): Promise<IteratorResult<T[]>> {
        if (latest) {
          const { rows } = latest
          latest = undefined
          return Promise.resolve({ value: rows, done: false })
        }
        if (failure) {
          const { error } = failure
          failure = undefined
          return Promise.reject(error)
        }
        if (done) return Promise.resolve({ value: undefined, done: true })
        return new Promise((resolve, reject) => (waiting = { resolve, reject }))
      },
      return(): Promise<IteratorResult<T[]>> {
        stop()
        done = true
        waiting?.resolve({ value: undefined, done: true })
        waiting = undefined
        return Promise.resolve({ value: undefined, done: true })
      },
    }
  }

  /** Interop with RxJS and other Observable libraries (`from(live)`). */
  '@@observable'(): this {
    return this
  }
}

// Where the runtime defines Symbol.observable, answer to it too.
const observableSymbol = (Symbol as { observable?: symbol }).observable
if (typeof observableSymbol === 'symbol') {
  Object.defineProperty(LiveQuery.prototype, observableSymbol, {
    value(this: LiveQuery) {
      return this
    },
  })
}
