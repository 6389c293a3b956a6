// An HTTP server whose requests are OpenTelemetry spans, and resqlite's queries their children
// (otel.mjs): what an HTTP instrumentation and this subscriber show a tracing backend. Here the
// request span is made by hand (@opentelemetry/instrumentation-http would make it); spans go to
// the console. Run from a clone after `npm install`: `node examples/tracing/server.mjs`, then
// `curl 'localhost:PORT/notes?author=ada'` and `curl -X POST 'localhost:PORT/notes?author=ada&text=hi'`.
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions'
import { Database } from '../../dist/esm/index.mjs'
import { traceResqlite } from './otel.mjs'

/** Starts the server on a free loopback port with its database at `file`, its spans sent to
 * `exporter`. Resolves with its `url` and `close()`. */
export async function startServer({ file, exporter = new ConsoleSpanExporter() }) {
  const manager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(manager)
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const tracer = provider.getTracer('resqlite-tracing-example')
  // The manager's AsyncLocalStorage, so a transaction's span is its statements' parent.
  const untrace = traceResqlite(tracer, { storage: manager._asyncLocalStorage })

  const db = await Database.open(file)
  await db.execute(
    'CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, author TEXT NOT NULL, text TEXT NOT NULL)',
  )

  const handle = async (req, url) => {
    const author = url.searchParams.get('author') ?? ''
    if (req.method === 'POST') {
      // A transaction: its statements are its span's children.
      const id = await db.transaction(async (tx) => {
        const { lastInsertRowid } = await tx.execute('INSERT INTO notes (author, text) VALUES (?, ?)', [
          author,
          url.searchParams.get('text') ?? '',
        ])
        await tx.execute('DELETE FROM notes WHERE author = ? AND id <= ? - 100', [author, lastInsertRowid])
        return lastInsertRowid
      })
      return { status: 201, body: { id: Number(id) } }
    }
    const count = await db.selectOne('SELECT count(*) AS n FROM notes WHERE author = ?', [author])
    const notes = await db.select('SELECT id, text FROM notes WHERE author = ? ORDER BY id', [author])
    return { status: 200, body: { count: count.n, notes } }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost')
    const span = tracer.startSpan(`${req.method} ${url.pathname}`, {
      kind: SpanKind.SERVER,
      attributes: { [ATTR_HTTP_REQUEST_METHOD]: req.method, [ATTR_URL_PATH]: url.pathname },
    })
    // The request's span is the active one while it is handled: every query's parent.
    context.with(trace.setSpan(context.active(), span), async () => {
      let status = 500
      let body
      try {
        ;({ status, body } = await handle(req, url))
      } catch (error) {
        span.recordException(error)
        span.setStatus({ code: SpanStatusCode.ERROR })
        body = { error: error.message }
      }
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status)
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
      span.end()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  return {
    url: `http://127.0.0.1:${port}/`,
    close: async () => {
      await new Promise((resolve) => server.close(resolve))
      await db.close()
      untrace()
      await provider.shutdown()
      context.disable()
    },
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { url } = await startServer({ file: process.argv[2] ?? 'notes.db' })
  console.log(`listening on ${url}`)
}
