// Tracing (docs/tracing.md): `diagnostics_channel` TracingChannels, the convention of Node's
// database clients (mysql2's `mysql2:query`, ioredis's `ioredis:command`) that OpenTelemetry,
// Sentry and Datadog subscribe to. `resqlite:query` for every public call that runs SQL,
// `resqlite:transaction`, `resqlite:open`, `resqlite:close`; each publishes `start` and `end`
// around the call in the caller's async context, then `asyncStart` and `asyncEnd` (where a span
// ends) once its promise settles, after `error` if it rejected.
//
// Nothing is published, allocated or timed while no one listens: a call site asks `traced(…)`
// (five `hasSubscribers` getters: within noise of no check at all, experiments/075) and takes
// its usual path when it says no. The contexts carry no bound value and no result (Node's `tracePromise` would put the rows in `context.result`,
// and rows echo parameters): only counts.
import * as dc from 'node:diagnostics_channel'
import { JobKind } from './native'

/** Where a query ran (placement.ts decides; the engine records it in `Engine.placed`). */
export const enum Where {
  /** Not decided yet when the call returned (it waits behind the writes of its own flow). */
  None,
  /** On the JS thread, within the inline budget (a read, a bounded write, a transaction's). */
  JsThread,
  /** In a write group, committed with others on the JS thread. */
  WriteGroup,
  /** On the JS thread a slice at a time (a select calling a JavaScript function). */
  Sliced,
  /** On a reader thread. */
  Reader,
  /** On the writer thread. */
  Writer,
}

/** The `operation` of each job kind a query call runs (native.ts `JobKind`). */
export function operationOf(kind: JobKind): string {
  switch (kind) {
    case JobKind.Select:
      return 'select'
    case JobKind.SelectOne:
      return 'selectOne'
    case JobKind.SelectBytes:
      return 'selectBytes'
    case JobKind.Execute:
      return 'execute'
    case JobKind.Batch:
      return 'executeBatch'
    default:
      return ''
  }
}

/** `Where` as the context's `placement` says it. */
export type Placement = 'js-thread' | 'write-group' | 'sliced' | 'reader' | 'writer'

const PLACEMENTS: (Placement | undefined)[] = [undefined, 'js-thread', 'write-group', 'sliced', 'reader', 'writer']

/** The context of a `resqlite:query` event (docs/tracing.md "Context"). */
export interface QueryContext {
  /** The method: select, selectOne, selectBytes, execute, executeBatch, iterate. */
  operation: string
  /** The SQL text as the caller gave it (parameters stay out of it: they are bound). */
  sql: string | undefined
  /** The path the database was opened with. */
  database: string
  /** Where it ran; undefined when it never reached the engine (bad arguments, a closed
   * database, a finished transaction). */
  placement?: Placement
  /** Called through a `Statement` (`db.prepare`). */
  prepared?: true
  /** Inside a transaction body. */
  transaction?: true
  /** A live query's run (`db.stream`). */
  live?: true
  /** Milliseconds it waited on the JS side before it was sent: behind a transaction holding
   * the writer, or behind its own flow's write. */
  queuedMs?: number
  /** Milliseconds it waited in the readers' or the writer's queue inside the engine before a
   * thread began running it (placement `reader` or `writer`). */
  threadQueuedMs?: number
  /** Rows returned (selects, an iteration, `RETURNING`). */
  rows?: number
  /** Rows changed (execute, executeBatch). */
  changes?: number
  /** JSON bytes returned (selectBytes). */
  bytes?: number
  /** Set on `error`: what the call rejected with, and its code. */
  error?: unknown
  errorCode?: string
  /** `performance.now()` at the call: for `queuedMs`. */
  startedAt: number
}

/** The context of `resqlite:transaction`, `resqlite:open` and `resqlite:close`. */
export interface OperationContext {
  operation: 'transaction' | 'savepoint' | 'open' | 'close'
  database: string
  /** A transaction's mode (deferred, immediate, exclusive); none for a savepoint. */
  mode?: string
  error?: unknown
  errorCode?: string
}

interface Channels {
  start: dc.Channel
  end: dc.Channel
  asyncStart: dc.Channel
  asyncEnd: dc.Channel
  error: dc.Channel
}

type RunStores = <T>(context: object, fn: () => T) => T

/** A TracingChannel, or undefined where the runtime has none (older Deno, Bun): then nothing is
 * traced. */
function tracingChannel(name: string): Channels | undefined {
  const make = (dc as { tracingChannel?: (name: string) => Channels }).tracingChannel
  return typeof make === 'function' ? make(name) : undefined
}

export const queryChannel = tracingChannel('resqlite:query')
export const transactionChannel = tracingChannel('resqlite:transaction')
export const openChannel = tracingChannel('resqlite:open')
export const closeChannel = tracingChannel('resqlite:close')

/** Whether any of the channel's events has a subscriber. `TracingChannel.hasSubscribers` exists
 * only from Node 20.13 and 22, so each event's channel is asked. */
export function traced(channels: Channels | undefined): channels is Channels {
  return (
    channels !== undefined &&
    (channels.start.hasSubscribers ||
      channels.end.hasSubscribers ||
      channels.asyncStart.hasSubscribers ||
      channels.asyncEnd.hasSubscribers ||
      channels.error.hasSubscribers)
  )
}

/** The operation a query call of `kind` is traced as, or undefined when nobody listens to
 * `resqlite:query` (or `kind` is no query call): then the call takes its untraced path. */
export function tracedQuery(kind: JobKind): string | undefined {
  if (!traced(queryChannel)) return undefined
  const operation = operationOf(kind)
  return operation === '' ? undefined : operation
}

/** What records where the call it runs was placed: the engine. `trace` is the traced call
 * running now (set only while it runs its synchronous part), `placed` where the engine put the
 * last call it placed, `database` the path the database was opened with. */
export interface PlacementRecord {
  trace: QueryContext | undefined
  placed: Where
  readonly database: string
  /** A traced call's outcome was published (`settle`): its caller resumes a microtask turn
   * later than untraced. */
  tracedSettled(): void
}

/** A new query context; `traceQuery` and the call sites fill in the rest. */
export function queryContext(operation: string, sql: unknown, database: string): QueryContext {
  return { operation, sql: typeof sql === 'string' ? sql : undefined, database, startedAt: performance.now() }
}

/** Runs a query call traced: `start` and `end` around `run` (in the caller's async context, with
 * the stores subscribers bound to `start`), `asyncStart` and `asyncEnd` once its promise
 * settles. `record` is the engine: where it placed the call ends up in the context. */
export function traceQuery<T>(
  record: PlacementRecord,
  operation: string,
  sql: unknown,
  inTransaction: boolean,
  prepared: boolean,
  run: () => Promise<T>,
): Promise<T> {
  const channels = queryChannel! // its caller asked tracedQuery, which found it
  const context = queryContext(operation, sql, record.database)
  if (inTransaction) context.transaction = true
  if (prepared) context.prepared = true
  return runStores(channels.start, context, () => {
    let promise: Promise<T>
    const outer = record.trace
    record.trace = context
    record.placed = Where.None
    try {
      promise = run()
    } finally {
      record.trace = outer
      context.placement ??= PLACEMENTS[record.placed]
      channels.end.publish(context)
    }
    return settle(channels, context, promise, counted, record)
  })
}

/** Runs a transaction, an open or a close traced, as `traceQuery` does. */
export function traceOperation<T>(channels: Channels, context: OperationContext, run: () => Promise<T>): Promise<T> {
  return runStores(channels.start, context, () => {
    let promise: Promise<T>
    try {
      promise = run()
    } finally {
      channels.end.publish(context)
    }
    return settle(channels, context, promise, undefined, undefined)
  })
}

/** The start of a traced iteration (`iterate`: the span covers the whole iteration, from its
 * first page asked for to its end): `start` and `end` around `open`, which places its first
 * page. `endIteration` publishes the rest. */
export function startIteration<S>(
  record: PlacementRecord,
  sql: string,
  inTransaction: boolean,
  open: () => S,
): { source: S; context: QueryContext } {
  const channels = queryChannel as Channels
  const context = queryContext('iterate', sql, record.database)
  if (inTransaction) context.transaction = true
  context.rows = 0
  const source = runStores(channels.start, context, () => {
    record.placed = Where.None
    try {
      return open()
    } finally {
      context.placement = PLACEMENTS[record.placed]
      channels.end.publish(context)
    }
  })
  return { source, context }
}

/** The end of a traced iteration: its last page, a break, or `error`. */
export function endIteration(context: QueryContext, error: unknown): void {
  const channels = queryChannel as Channels
  if (error !== undefined) failed(channels, context, error)
  channels.asyncStart.publish(context)
  channels.asyncEnd.publish(context)
}

/** Records a placement decided after the call returned (a read that waited for its flow's
 * write): for the context `record.trace` held when the call was made. */
export function placedLater(context: QueryContext | undefined, record: PlacementRecord): void {
  if (context !== undefined) context.placement = PLACEMENTS[record.placed]
}

/** Sends a call that waited on the JS side (`send`), for `context`, the traced call it belongs
 * to (undefined untraced): records how long it waited, and makes it the call the engine is
 * placing while it is sent, so that its job reports its wait in the engine's queue too. */
export function sendAfterWaiting<T>(record: PlacementRecord, context: QueryContext | undefined, send: () => T): T {
  if (context === undefined) return send()
  context.queuedMs = performance.now() - context.startedAt
  const outer = record.trace
  record.trace = context
  try {
    return send()
  } finally {
    record.trace = outer
  }
}

/** A live query's run as the JS thread sees it: its result arrived (the engine runs it on its
 * own, after a write; runs whose result did not change never reach this thread). One
 * start/end pair, then asyncStart/asyncEnd, at once. */
export function traceLiveRun(
  record: PlacementRecord,
  sql: string,
  where: Where,
  rows: number | undefined,
  error: unknown,
): void {
  const channels = queryChannel as Channels
  const context = queryContext('stream', sql, record.database)
  context.live = true
  context.placement = PLACEMENTS[where]
  runStores(channels.start, context, () => channels.end.publish(context))
  if (error !== undefined) failed(channels, context, error)
  else context.rows = rows
  channels.asyncStart.publish(context)
  channels.asyncEnd.publish(context)
}

/** Publishes `error` for `context`. */
function failed(channels: Channels, context: QueryContext | OperationContext, error: unknown): void {
  context.error = error
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string') context.errorCode = code
  channels.error.publish(context)
}

/** Settles as `promise` does, once its outcome is published (before the caller resumes). A
 * promise derived with `then`, not reactions beside the caller's await on `promise` itself: V8's
 * async stack trace follows a promise's first reaction, so a rejection would lose the caller's
 * frames (caller-stack.ts; test/tracing.test.mjs). It costs the caller one more turn of the
 * microtask queue, only while someone listens; the engine counts that turn as one that issued a
 * call (`record.tracedSettled`), else a write group or a run of reads in a row would end in it,
 * before the caller's next call, and each read would begin and commit a group of its own
 * (experiments/071). */
function settle<T, C extends QueryContext | OperationContext>(
  channels: Channels,
  context: C,
  promise: Promise<T>,
  count: ((context: C, result: unknown) => void) | undefined,
  record: PlacementRecord | undefined,
): Promise<T> {
  return promise.then(
    (result) => {
      record?.tracedSettled()
      count?.(context, result)
      channels.asyncStart.publish(context)
      channels.asyncEnd.publish(context)
      return result
    },
    (error: unknown) => {
      record?.tracedSettled()
      failed(channels, context, error)
      channels.asyncStart.publish(context)
      channels.asyncEnd.publish(context)
      throw error
    },
  )
}

/** The counts of a query's result: rows, changes or bytes (never the values). */
function counted(context: QueryContext, result: unknown): void {
  switch (context.operation) {
    case 'select': // rows, or with rowMode 'array' { columns, rows }
      context.rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows).length
      return
    case 'selectOne':
      // a row or undefined, or with rowMode 'array' { columns, row }, whose `row` is undefined
      // when there is none: a row's values never are (NULL is null), so its own `row` column
      // cannot pass for it. No `Object.keys` a call (experiments/075).
      context.rows = result === undefined || noArrayRow(result as object) ? 0 : 1
      return
    case 'selectBytes':
      context.bytes = (result as Buffer).length
      return
    default: {
      // execute ({ changes, lastInsertRowid, rows? }), executeBatch ({ changes })
      const r = result as { changes: number | bigint; rows?: unknown[] }
      context.changes = Number(r.changes)
      if (r.rows !== undefined) context.rows = r.rows.length
    }
  }
}

function noArrayRow(result: object): boolean {
  return (result as { row?: unknown }).row === undefined && Object.hasOwn(result, 'row')
}

/** `channel.runStores`, or a plain publish where the runtime lacks it. */
function runStores<T>(channel: dc.Channel, context: object, fn: () => T): T {
  const run = (channel as unknown as { runStores?: RunStores }).runStores
  if (typeof run === 'function') return run.call(channel, context, fn) as T
  channel.publish(context)
  return fn()
}
