// resqlite's tracing channels (docs/tracing.md) as OpenTelemetry spans, with the database
// semantic conventions: one CLIENT span per query, transaction, open and close, named after the
// operation, child of whatever span is active where the call was made (an HTTP request's), and
// ended on asyncEnd. The SQL text is the one the caller wrote, with `?` placeholders: bound
// values never reach resqlite's events, so they never reach a span.
import { tracingChannel } from 'node:diagnostics_channel'
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import {
  ATTR_DB_NAMESPACE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_QUERY_TEXT,
  ATTR_DB_RESPONSE_STATUS_CODE,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
} from '@opentelemetry/semantic-conventions'

// Not in the stable conventions yet (semantic-conventions' incubating entry point has them).
const DB_SYSTEM_SQLITE = 'sqlite'
const ATTR_DB_RESPONSE_RETURNED_ROWS = 'db.response.returned_rows'

/** Subscribes spans made with `tracer` to resqlite's channels; returns the function that
 * unsubscribes them. `storage`: the AsyncLocalStorage the context manager keeps the active
 * context in (context-async-hooks' AsyncLocalStorageContextManager: `_asyncLocalStorage`); with
 * it, a transaction's span is the active one inside its body, so its statements are its
 * children (diagnostics_channel's bindStore). Without it they are its siblings. */
export function traceResqlite(tracer, { storage } = {}) {
  const spans = new WeakMap()
  const startSpan = (ctx) => {
    const span = tracer.startSpan(
      ctx.operation,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_SQLITE,
          [ATTR_DB_NAMESPACE]: ctx.database,
          [ATTR_DB_OPERATION_NAME]: ctx.operation,
          ...(ctx.sql !== undefined && { [ATTR_DB_QUERY_TEXT]: ctx.sql }),
        },
      },
      context.active(),
    )
    spans.set(ctx, span)
    return span
  }
  const handlers = {
    start: (ctx) => {
      if (!spans.has(ctx)) startSpan(ctx)
    },
    error: (ctx) => {
      const span = spans.get(ctx)
      span?.setStatus({ code: SpanStatusCode.ERROR, message: ctx.error?.message })
      span?.setAttributes({
        [ATTR_ERROR_TYPE]: ctx.errorCode ?? ctx.error?.name ?? 'Error',
        ...(ctx.errorCode !== undefined && { [ATTR_DB_RESPONSE_STATUS_CODE]: ctx.errorCode }),
      })
    },
    asyncEnd: (ctx) => {
      const span = spans.get(ctx)
      if (span === undefined) return
      spans.delete(ctx)
      // resqlite's own: where the call ran, what it waited, what it returned.
      if (ctx.placement !== undefined) span.setAttribute('resqlite.placement', ctx.placement)
      if (ctx.queuedMs !== undefined) span.setAttribute('resqlite.queued_ms', ctx.queuedMs)
      if (ctx.threadQueuedMs !== undefined) span.setAttribute('resqlite.thread_queued_ms', ctx.threadQueuedMs)
      if (ctx.rows !== undefined) span.setAttribute(ATTR_DB_RESPONSE_RETURNED_ROWS, ctx.rows)
      if (ctx.changes !== undefined) span.setAttribute('resqlite.changes', ctx.changes)
      if (ctx.live) span.setAttribute('resqlite.live', true)
      span.end()
    },
  }
  const channels = ['query', 'transaction', 'open', 'close'].map((name) => tracingChannel(`resqlite:${name}`))
  for (const channel of channels) channel.subscribe(handlers)
  const transaction = channels[1]
  // A transaction's span made active around its body: the store's value while it runs.
  if (storage !== undefined) {
    transaction.start.bindStore(storage, (ctx) =>
      trace.setSpan(storage.getStore() ?? ROOT_CONTEXT, spans.get(ctx) ?? startSpan(ctx)),
    )
  }
  return () => {
    if (storage !== undefined) transaction.start.unbindStore(storage)
    for (const channel of channels) channel.unsubscribe(handlers)
  }
}
