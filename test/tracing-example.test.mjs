// examples/tracing: resqlite's tracing channels as OpenTelemetry spans under an HTTP server's
// request spans, exported to the SDK's in-memory exporter. Every query of a request is a child of
// that request's span (a transaction's statements of the transaction's span, itself the
// request's child), with the database semantic conventions' attributes, and no bound value in
// any span, though requests run concurrently and every query binds the request's own values.
import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { SpanKind } from '@opentelemetry/api'
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base'
import { startServer } from '../examples/tracing/server.mjs'
import { tempDir } from './helpers.mjs'

test('tracing example: every query of a request is a child span of that request, with the attributes and no bound value', async (t) => {
  const exporter = new InMemorySpanExporter()
  const file = path.join(tempDir(t), 'notes.db')
  const app = await startServer({ file, exporter })
  t.after(() => app.close())
  const authors = Array.from({ length: 6 }, (_, i) => `author-sentinel-${i}-4d9e`)
  const texts = authors.map((a) => `text-sentinel-of-${a}`)
  // Writes and reads of several requests at once.
  await Promise.all(
    authors.map(async (author, i) => {
      const post = await fetch(`${app.url}notes?author=${author}&text=${texts[i]}`, { method: 'POST' })
      assert.equal(post.status, 201)
      const get = await fetch(`${app.url}notes?author=${author}`)
      assert.equal(get.status, 200)
      const body = await get.json()
      assert.equal(body.count, 1)
      assert.equal(body.notes[0].text, texts[i])
    }),
  )
  const spans = exporter.getFinishedSpans()
  const requests = spans.filter((s) => s.kind === SpanKind.SERVER)
  assert.equal(requests.length, 12)
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]))
  const parent = (s) => byId.get(s.parentSpanContext?.spanId)
  const db = spans.filter((s) => s.attributes['db.system.name'] === 'sqlite')
  for (const request of requests) {
    const children = db.filter((s) => parent(s) === request)
    const queries = children.filter((s) => s.attributes['db.query.text'] !== undefined)
    if (request.name === 'POST /notes') {
      assert.deepEqual(
        children.map((s) => s.name),
        ['transaction'],
      )
      const statements = db.filter((s) => parent(s) === children[0])
      assert.deepEqual(
        statements.map((s) => [s.name, s.attributes['db.query.text']]),
        [
          ['execute', 'INSERT INTO notes (author, text) VALUES (?, ?)'],
          ['execute', 'DELETE FROM notes WHERE author = ? AND id <= ? - 100'],
        ],
      )
      assert.equal(children[0].spanContext().traceId, request.spanContext().traceId)
    } else {
      assert.deepEqual(
        queries.map((s) => [s.name, s.attributes['db.query.text'], s.attributes['db.response.returned_rows']]),
        [
          ['selectOne', 'SELECT count(*) AS n FROM notes WHERE author = ?', 1],
          ['select', 'SELECT id, text FROM notes WHERE author = ? ORDER BY id', 1],
        ],
      )
    }
    for (const s of children) {
      assert.equal(s.kind, SpanKind.CLIENT)
      assert.equal(s.attributes['db.namespace'], file)
      assert.equal(s.attributes['db.operation.name'], s.name)
      // Ended (exported, by the SimpleSpanProcessor) before its request: on asyncEnd, before the
      // handler resumes. (Not compared by time: the SDK anchors spans' clocks to the millisecond.)
      assert.ok(spans.indexOf(s) < spans.indexOf(request), `${s.name} ends before its request`)
    }
  }
  // Every query span belongs to a request: the CREATE TABLE at start-up is the only one outside.
  const orphans = db.filter((s) => s.attributes['db.query.text'] !== undefined && !requests.includes(root(s, parent)))
  assert.deepEqual(
    orphans.map((s) => s.attributes['db.query.text']),
    ['CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, author TEXT NOT NULL, text TEXT NOT NULL)'],
  )
  const serialized = JSON.stringify(
    db.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })),
  )
  for (const value of [...authors, ...texts]) assert.ok(!serialized.includes(value), `${value} in a span`)
})

function root(span, parent) {
  let s = span
  while (parent(s) !== undefined) s = parent(s)
  return s
}
