// Tracing (src/tracing.ts, docs/tracing.md): the diagnostics_channel TracingChannels
// resqlite:query, :transaction, :open and :close. Covered: one start/end/asyncStart/asyncEnd
// per call of each kind (select, selectOne, selectBytes, execute, executeBatch, iterate, a
// Statement's, a transaction's, a live query's runs) on each placement (JS thread, write group,
// reader, writer), with the context's fields; failures, bad arguments and aborted calls on
// `error` with their code; the caller's async context seen in start and asyncEnd, for a call
// on a reader too, and a transaction's statements inside its start's bound store; no bound value
// in any event's data; rejections still name the caller's frames; nothing published after
// unsubscribing. docs/tracing.md's promises are tested here (its sections are named).
import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import dc from 'node:diagnostics_channel'
import path from 'node:path'
import { test } from 'node:test'
import { Database } from '../dist/esm/index.mjs'
import { tempDir } from './helpers.mjs'
import { inlineCounts, openOwnConnection, PLACEMENT } from './inline-helpers.mjs'
import { deferred, outsideContext, sleep } from './tx-helpers.mjs'

const EVENTS = ['start', 'end', 'asyncStart', 'asyncEnd', 'error']
const NAMES = ['query', 'transaction', 'open', 'close']

/** The context as an event sees it, serialized whole: an error with its message, code, stack and
 * cause (what a subscriber could read). */
function snapshot(context) {
  const seen = new WeakSet()
  return JSON.stringify(context, (_key, value) => {
    if (typeof value === 'bigint') return `${value}n`
    if (value instanceof Error) {
      return { name: value.name, message: value.message, code: value.code, stack: value.stack, cause: value.cause }
    }
    if (typeof value === 'object' && value !== null) {
      if (seen.has(value)) return '[seen]'
      seen.add(value)
    }
    return value
  })
}

/** Subscribes to every event of every channel until the test ends: `calls(name, database)`
 * groups the events of one database by context object (one call), in order. */
function listen(t) {
  const events = []
  for (const name of NAMES) {
    const channel = dc.tracingChannel(`resqlite:${name}`)
    const handlers = Object.fromEntries(
      EVENTS.map((event) => [event, (context) => events.push({ name, event, context, data: snapshot(context) })]),
    )
    channel.subscribe(handlers)
    t.after(() => channel.unsubscribe(handlers))
  }
  return {
    events,
    calls(name, database) {
      const calls = new Map()
      for (const e of events) {
        if (e.name !== name || (database !== undefined && e.context.database !== database)) continue
        if (!calls.has(e.context)) calls.set(e.context, [])
        calls.get(e.context).push(e)
      }
      return [...calls.entries()].map(([context, list]) => ({ context, list, events: list.map((e) => e.event) }))
    },
  }
}

const OK = ['start', 'end', 'asyncStart', 'asyncEnd']
const FAILED = ['start', 'end', 'error', 'asyncStart', 'asyncEnd']

async function open(t, options = {}) {
  const file = path.join(tempDir(t), 'trace.db')
  const db = await Database.open(file, options)
  t.after(() => db.close())
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v UNIQUE)')
  await db.execute('INSERT INTO t (v) VALUES (1), (2), (3)')
  return { db, file }
}

/** The single call `fn` made on `file`: its context and its events. */
async function oneCall(rec, file, fn) {
  const before = rec.calls('query', file).length
  await fn()
  const calls = rec.calls('query', file).slice(before)
  assert.equal(calls.length, 1, `one traced call, got ${calls.map((c) => c.context.operation)}`)
  return calls[0]
}

let inserted = 0
const CALLS = {
  select: (db) => db.select('SELECT v FROM t WHERE v > ?', [1]),
  selectOne: (db) => db.selectOne('SELECT v FROM t WHERE v = ?', [2]),
  selectBytes: (db) => db.selectBytes('SELECT v FROM t WHERE v > ?', [1]),
  execute: (db) => db.execute('INSERT INTO t (v) VALUES (?)', [`row-${++inserted}`]),
}
const EXPECTED = {
  select: (c) => assert.equal(c.rows, 2),
  selectOne: (c) => assert.equal(c.rows, 1),
  selectBytes: (c) => assert.equal(c.bytes, Buffer.byteLength('[{"v":2},{"v":3}]')),
  execute: (c) => assert.equal(c.changes, 1),
}

test('each call kind on the JS thread and on the threads: one start/end/asyncStart/asyncEnd, its placement and counts', async (t) => {
  const rec = listen(t)
  const inline = await open(t, PLACEMENT)
  const threads = await open(t, { inlineBudget: 0 })
  for (const [operation, call] of Object.entries(CALLS)) {
    const write = operation === 'execute'
    for (const [{ db, file }, where] of [
      [inline, 'js-thread'],
      [threads, write ? 'writer' : 'reader'],
    ]) {
      const runs = (await inlineCounts(db)).runs + (await inlineCounts(db)).writes
      const { context, events } = await oneCall(rec, file, () => call(db))
      const ranInline = (await inlineCounts(db)).runs + (await inlineCounts(db)).writes > runs
      assert.deepEqual(events, OK, `${operation} on ${where}`)
      assert.equal(context.operation, operation)
      assert.equal(context.database, file)
      assert.equal(context.sql, call.toString().match(/'([^']+)'/)[1])
      assert.equal(context.placement, where, `${operation}: placement`)
      assert.equal(ranInline, where === 'js-thread', `${operation}: the inline counters agree with ${where}`)
      EXPECTED[operation](context)
      assert.equal(context.error, undefined)
      assert.equal(context.queuedMs, undefined)
      // A job sent to a thread reports its wait in that thread's queue; the JS thread has none.
      const threadQueued = context.threadQueuedMs
      if (where === 'js-thread') assert.equal(threadQueued, undefined, `${operation}: threadQueuedMs`)
      else assert.ok(threadQueued >= 0, `${operation} on ${where}: threadQueuedMs ${threadQueued}`)
      assert.equal(context.prepared, undefined)
      assert.equal(context.transaction, undefined)
    }
  }
  // executeBatch always goes to the writer thread.
  const { context, events } = await oneCall(rec, inline.file, () =>
    inline.db.executeBatch('INSERT INTO t (v) VALUES (?)', [[10], [11], [12]]),
  )
  assert.deepEqual(events, OK)
  assert.equal(context.operation, 'executeBatch')
  assert.equal(context.placement, 'writer')
  assert.equal(context.changes, 3)
})

test('writes issued together: each its own call, placed in the write group', async (t) => {
  const rec = listen(t)
  const { db, file } = await open(t, PLACEMENT)
  // Writes issued together after writes issued together group from the first (write-groups.test.mjs).
  await Promise.all([db.execute('INSERT INTO t (v) VALUES (20)'), db.execute('INSERT INTO t (v) VALUES (21)')])
  const before = rec.calls('query', file).length
  const groups = (await inlineCounts(db)).groups
  await Promise.all([0, 1, 2].map((i) => db.execute('INSERT INTO t (v) VALUES (?)', [30 + i])))
  assert.equal((await inlineCounts(db)).groups, groups + 1, 'they ran as one group')
  const calls = rec.calls('query', file).slice(before)
  assert.equal(calls.length, 3)
  for (const { context, events } of calls) {
    assert.deepEqual(events, OK)
    assert.equal(context.placement, 'write-group')
    assert.equal(context.changes, 1)
  }
})

test("a transaction's calls and a Statement's calls: marked, placed, one pair each; the transaction's own channel", async (t) => {
  const rec = listen(t)
  for (const [options, where] of [
    [PLACEMENT, 'js-thread'],
    [{ inlineBudget: 0 }, 'writer'],
  ]) {
    const { db, file } = await open(t, options)
    const stmt = await db.prepare('SELECT v FROM t WHERE v >= ?')
    const before = rec.calls('query', file).length
    await db.transaction(async (tx) => {
      await tx.select('SELECT v FROM t WHERE v > ?', [2])
      await tx.execute('INSERT INTO t (v) VALUES (?)', [40])
      await stmt.select([3])
      await tx.transaction(async (sp) => {
        await sp.selectOne('SELECT v FROM t WHERE v = ?', [40])
      })
    })
    await stmt.selectOne([2])
    const calls = rec.calls('query', file).slice(before)
    assert.deepEqual(
      calls.map((c) => [c.context.operation, c.context.transaction, c.context.prepared]),
      [
        ['select', true, undefined],
        ['execute', true, undefined],
        ['select', true, true],
        ['selectOne', true, undefined],
        ['selectOne', undefined, true],
      ],
    )
    for (const { context, events } of calls.slice(0, 4)) {
      assert.deepEqual(events, OK)
      assert.equal(context.placement, where, `${context.operation} in the transaction`)
    }
    assert.equal(calls[2].context.rows, 2)
    const txs = rec.calls('transaction', file)
    assert.deepEqual(
      txs.map((c) => [c.context.operation, c.context.mode, c.events]),
      [
        ['transaction', 'deferred', OK],
        ['savepoint', undefined, OK],
      ],
    )
  }
})

test('iterate: one call for the whole iteration, with its rows; on the readers, or the writer in a transaction', async (t) => {
  const rec = listen(t)
  const { db, file } = await open(t, PLACEMENT)
  await db.executeBatch(
    'INSERT INTO t (v) VALUES (?)',
    Array.from({ length: 50 }, (_, i) => [100 + i]),
  )
  const before = rec.calls('query', file).length
  let seen = 0
  for await (const _row of db.iterate('SELECT v FROM t WHERE v >= ?', [100], { pageRows: 8 })) seen++
  assert.equal(seen, 50)
  // Ended by a break: the call ends too, with the rows read so far.
  for await (const page of db.iterate('SELECT v FROM t', [], { pageRows: 4 }).pages()) {
    assert.ok(page.length > 0)
    break
  }
  await db.transaction(async (tx) => {
    for await (const _row of tx.iterate('SELECT v FROM t WHERE v < ?', [3])) {
    }
  })
  const calls = rec.calls('query', file).slice(before)
  assert.deepEqual(
    calls.map((c) => [c.context.operation, c.context.placement, c.context.rows, c.context.transaction, c.events]),
    [
      ['iterate', 'reader', 50, undefined, OK],
      ['iterate', 'reader', 4, undefined, OK],
      ['iterate', 'writer', 2, true, OK],
    ],
  )
})

test('failures, bad arguments and aborted calls: error carries the typed error and its code', async (t) => {
  const rec = listen(t)
  const { db, file } = await open(t, { inlineBudget: 0 })
  const cases = [
    ['select', () => db.select('SELECT nope FROM t'), 'SQLITE_ERROR'],
    ['execute', () => db.execute('INSERT INTO t (v) VALUES (?)', [1]), 'SQLITE_CONSTRAINT_UNIQUE'],
    ['selectOne', () => db.selectOne('SELECT ?', [Symbol('x')]), 'ERR_INVALID_ARG_TYPE'],
    ['select', () => db.select('SELECT 1', [], { signal: AbortSignal.abort() }), 'ABORT_ERR'],
    [
      'select',
      () => {
        // Runs for ever on a reader unless interrupted.
        const ac = new AbortController()
        setTimeout(() => ac.abort(), 50)
        return db.select('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c', [], {
          signal: ac.signal,
        })
      },
      'ABORT_ERR',
    ],
    [
      'iterate',
      async () => {
        const ac = new AbortController()
        for await (const _row of db.iterate('SELECT v FROM t', [], { signal: ac.signal, pageRows: 1 })) ac.abort()
      },
      'ABORT_ERR',
    ],
    ['executeBatch', () => db.executeBatch('INSERT INTO t (v) VALUES (?)', [[50], [50]]), 'SQLITE_CONSTRAINT_UNIQUE'],
  ]
  for (const [operation, call, code] of cases) {
    const { context, events, list } = await oneCall(rec, file, () =>
      call().then(
        () => assert.fail(`${operation} should reject with ${code}`),
        (error) => assert.equal(error.code, code),
      ),
    )
    assert.equal(context.operation, operation)
    assert.deepEqual(events, FAILED, `${operation} ${code}`)
    assert.equal(context.errorCode, code)
    assert.equal(context.error.code, code)
    assert.ok(context.error instanceof Error)
    assert.ok(list[2].data.includes(code), 'the error event carries it')
  }
  // A closed database.
  await db.close()
  const { context, events } = await oneCall(rec, file, () => db.select('SELECT 1').catch(() => {}))
  assert.deepEqual(events, FAILED)
  assert.equal(context.errorCode, 'ERR_DATABASE_CLOSED')
  assert.equal(context.placement, undefined)
  // An aborted transaction.
  const other = await open(t)
  const ac = new AbortController()
  await other.db
    .transaction(
      async (tx) => {
        await tx.select('SELECT 1')
        ac.abort()
        await new Promise(() => {})
      },
      { signal: ac.signal },
    )
    .catch(() => {})
  const [tx] = rec.calls('transaction', other.file)
  assert.deepEqual(tx.events, FAILED)
  assert.equal(tx.context.errorCode, 'ABORT_ERR')
})

test("the caller's async context is seen in start and asyncEnd, for a call on a reader too", async (t) => {
  const als = new AsyncLocalStorage()
  const seen = []
  const channel = dc.tracingChannel('resqlite:query')
  const handlers = {
    start: (c) => seen.push(['start', c.sql, als.getStore()]),
    asyncEnd: (c) => seen.push(['asyncEnd', c.sql, als.getStore()]),
  }
  channel.subscribe(handlers)
  t.after(() => channel.unsubscribe(handlers))
  for (const [options, where] of [
    [{ inlineBudget: 0 }, 'reader'],
    [PLACEMENT, 'js-thread'],
  ]) {
    const { db } = await open(t, options)
    seen.length = 0
    const placements = []
    const rec = dc.tracingChannel('resqlite:query')
    const end = (c) => placements.push(c.placement)
    rec.end.subscribe(end)
    // Two calls under two parents at once: each sees its own.
    await Promise.all([
      als.run('parent-a', () => db.select('SELECT 1 AS a')),
      als.run('parent-b', async () => {
        await db.selectOne('SELECT 2 AS b')
        await db.execute('UPDATE t SET v = v')
      }),
    ])
    rec.end.unsubscribe(end)
    assert.equal(placements[0], where)
    const byCall = (sql) => seen.filter((s) => s[1] === sql).map((s) => [s[0], s[2]])
    assert.deepEqual(byCall('SELECT 1 AS a'), [
      ['start', 'parent-a'],
      ['asyncEnd', 'parent-a'],
    ])
    assert.deepEqual(byCall('SELECT 2 AS b'), [
      ['start', 'parent-b'],
      ['asyncEnd', 'parent-b'],
    ])
    assert.deepEqual(byCall('UPDATE t SET v = v'), [
      ['start', 'parent-b'],
      ['asyncEnd', 'parent-b'],
    ])
  }
})

test("a store bound to a channel's start is the context of what runs inside: a transaction's statements are its children", async (t) => {
  const span = new AsyncLocalStorage()
  const transaction = dc.tracingChannel('resqlite:transaction')
  const query = dc.tracingChannel('resqlite:query')
  const bind = (c) => c
  transaction.start.bindStore(span, bind)
  t.after(() => transaction.start.unbindStore(span))
  const parents = []
  const onStart = (c) => parents.push([c.sql, span.getStore()?.operation])
  query.start.subscribe(onStart)
  t.after(() => query.start.unsubscribe(onStart))
  const { db } = await open(t, { inlineBudget: 0 })
  parents.length = 0
  await db.transaction(async (tx) => {
    await tx.select('SELECT 1 AS inside')
    await tx.execute('UPDATE t SET v = v WHERE v = 1')
  })
  await db.select('SELECT 1 AS outside')
  assert.deepEqual(parents, [
    ['SELECT 1 AS inside', 'transaction'],
    ['UPDATE t SET v = v WHERE v = 1', 'transaction'],
    ['SELECT 1 AS outside', undefined],
  ])
})

test('a live query: one call per run delivered, marked live', async (t) => {
  const rec = listen(t)
  const { db, file } = await open(t, PLACEMENT)
  const results = []
  const unsubscribe = db.stream('SELECT count(*) AS n FROM t WHERE v > ?', [0]).subscribe((rows) => results.push(rows))
  const until = async (n) => {
    for (let i = 0; i < 500 && results.length < n; i++) await new Promise((r) => setTimeout(r, 10))
    assert.equal(results.length, n)
  }
  await until(1)
  await db.execute('INSERT INTO t (v) VALUES (7)')
  await until(2)
  await db.execute('INSERT INTO t (v) VALUES (8)')
  await until(3)
  unsubscribe()
  const live = rec.calls('query', file).filter((c) => c.context.live)
  assert.equal(live.length, 3, 'one per result delivered')
  for (const [i, { context, events }] of live.entries()) {
    assert.deepEqual(events, OK)
    assert.equal(context.operation, 'stream')
    assert.equal(context.sql, 'SELECT count(*) AS n FROM t WHERE v > ?')
    assert.equal(context.rows, 1)
    assert.ok(['js-thread', 'reader'].includes(context.placement), context.placement)
    if (i > 0) assert.equal(context.placement, 'reader', 're-runs run on the readers')
  }
})

test('open and close: one call each, with the path', async (t) => {
  const rec = listen(t)
  const file = path.join(tempDir(t), 'oc.db')
  const db = await Database.open(file)
  await db.close()
  await Database.open(path.join(tempDir(t), 'missing', 'x.db')).catch(() => {})
  assert.deepEqual(
    rec.calls('open', file).map((c) => c.events),
    [OK],
  )
  assert.deepEqual(
    rec.calls('close', file).map((c) => c.events),
    [OK],
  )
  const failed = rec.calls('open').find((c) => c.context.database.endsWith(path.join('missing', 'x.db')))
  assert.deepEqual(failed.events, FAILED)
  assert.equal(failed.context.errorCode, 'SQLITE_CANTOPEN')
})

test('no bound value appears in any event, whatever the call, its placement or its failure', async (t) => {
  const rec = listen(t)
  const STR = 'sentinel-string-5e1f0c'
  const NUM = 73519.640625
  const INT = 8675309123
  const BLOB = Buffer.from('sentinel-blob-a77b3d')
  const forbidden = [
    STR,
    String(NUM),
    String(INT),
    'sentinel-blob-a77b3d',
    BLOB.toString('hex'),
    BLOB.toString('base64'),
  ]
  const files = []
  for (const options of [PLACEMENT, { inlineBudget: 0 }]) {
    const { db, file } = await open(t, options)
    files.push(file)
    await db.execute('CREATE TABLE s (a TEXT, b REAL, c INTEGER, d BLOB)')
    const P = [STR, NUM, INT, BLOB]
    const named = { a: STR, b: NUM, c: INT, d: BLOB }
    // Every one echoes its parameters in its result.
    await db.execute('INSERT INTO s VALUES (?, ?, ?, ?) RETURNING *', P)
    await db.execute('INSERT INTO s VALUES (:a, :b, :c, :d)', named)
    await Promise.all([
      db.execute('INSERT INTO s VALUES (?, ?, ?, ?)', P),
      db.execute('INSERT INTO s VALUES (?, ?, ?, ?)', P),
    ])
    await db.executeBatch('INSERT INTO s VALUES (?, ?, ?, ?)', [P, P])
    await db.select('SELECT ? AS a, ? AS b, ? AS c, ? AS d', P)
    await db.select('SELECT * FROM s WHERE a = ?', [STR], { rowMode: 'array' })
    await db.selectOne('SELECT * FROM s WHERE a = :a AND c = :c', { a: STR, c: INT })
    await db.selectBytes('SELECT * FROM s WHERE b = ?', [NUM])
    for await (const _row of db.iterate('SELECT * FROM s WHERE d = ?', [BLOB])) {
    }
    const stmt = await db.prepare('SELECT ? AS a, ? AS b, ? AS c, ? AS d')
    await stmt.select(P)
    await stmt.selectOne(P)
    await db.transaction(async (tx) => {
      await tx.select('SELECT * FROM s WHERE a = ?', [STR])
      await tx.execute('UPDATE s SET b = ? WHERE a = ?', [NUM, STR])
      await stmt.selectBytes(P)
    })
    // Failures with the values bound.
    await db.execute('INSERT INTO t (v) VALUES (?)', [STR])
    await db.execute('INSERT INTO t (v) VALUES (?)', [STR]).catch(() => {})
    await db.select('SELECT nope WHERE ? = ?', [STR, INT]).catch(() => {})
    await db.execute('INSERT INTO s VALUES (?, ?, ?, ?)', [STR, NUM, INT, BLOB, STR]).catch(() => {})
    await db.select('SELECT ?', [{ [STR]: NUM }]).catch(() => {})
    await db.select('SELECT :a', { b: STR }).catch(() => {})
    // A live query's runs.
    const results = []
    const stop = db.stream('SELECT count(*) AS n, ? AS a FROM s', [STR]).subscribe((rows) => results.push(rows))
    for (let i = 0; i < 500 && results.length < 1; i++) await new Promise((r) => setTimeout(r, 10))
    await db.execute('INSERT INTO s VALUES (?, ?, ?, ?)', P)
    for (let i = 0; i < 500 && results.length < 2; i++) await new Promise((r) => setTimeout(r, 10))
    stop()
    assert.equal(results.length, 2)
    assert.ok(JSON.stringify(results).includes(STR), 'the results hold the values (the scan could find them)')
  }
  const events = rec.events.filter((e) => files.includes(e.context.database))
  assert.ok(events.length > 100, `${events.length} events`)
  for (const e of events) for (const value of forbidden) assert.ok(!e.data.includes(value), `${value} in ${e.data}`)
  for (const operation of ['select', 'selectOne', 'selectBytes', 'execute', 'executeBatch', 'iterate', 'stream'])
    assert.ok(
      events.some((e) => e.context.operation === operation),
      `${operation} was traced`,
    )
})

test("a traced call's rejection still names the caller's frames", async (t) => {
  const rec = listen(t)
  const { db, file } = await open(t, { inlineBudget: 0 })
  async function theCallerOfTheFailingRead() {
    return await db.select('SELECT nope FROM t')
  }
  const error = await theCallerOfTheFailingRead().catch((e) => e)
  assert.equal(error.code, 'SQLITE_ERROR')
  assert.match(error.stack, /theCallerOfTheFailingRead/)
  assert.equal(rec.calls('query', file).at(-1).context.errorCode, 'SQLITE_ERROR')
})

test('nothing is published once every subscriber left', async (t) => {
  const { db, file } = await open(t)
  const seen = []
  const channel = dc.tracingChannel('resqlite:query')
  const handlers = Object.fromEntries(EVENTS.map((e) => [e, (c) => seen.push(c)]))
  channel.subscribe(handlers)
  await db.select('SELECT 1')
  assert.equal(seen.length, 4)
  channel.unsubscribe(handlers)
  await db.select('SELECT 1')
  await db.execute('UPDATE t SET v = v')
  assert.equal(seen.length, 4)
  assert.equal(seen[0].database, file)
})

test('one event subscribed alone by name, before the library loaded or after: published; not once it left', async (t) => {
  // resqlite keeps whether anyone listens in a flag (tracing.ts `watch`): these are the ways a
  // subscriber arrives that the flag must see.
  const { db } = await open(t)
  const seen = []
  const onAsyncEnd = (c) => seen.push(c.sql)
  dc.subscribe('tracing:resqlite:query:asyncEnd', onAsyncEnd)
  await db.select('SELECT 1 AS subscribed')
  assert.equal(dc.unsubscribe('tracing:resqlite:query:asyncEnd', onAsyncEnd), true)
  await db.select('SELECT 1 AS left')
  assert.deepEqual(seen, ['SELECT 1 AS subscribed'])
  // Two subscribers, one leaves: still published.
  const other = (c) => seen.push(`other ${c.sql}`)
  dc.subscribe('tracing:resqlite:query:error', other)
  dc.subscribe('tracing:resqlite:query:asyncEnd', onAsyncEnd)
  dc.unsubscribe('tracing:resqlite:query:asyncEnd', onAsyncEnd)
  await db.select('SELECT nope').catch(() => {})
  dc.unsubscribe('tracing:resqlite:query:error', other)
  assert.deepEqual(seen, ['SELECT 1 AS subscribed', 'other SELECT nope'])

  const { execFileSync } = await import('node:child_process')
  const lib = new URL('../dist/esm/index.mjs', import.meta.url).href
  const script = `
    import dc from 'node:diagnostics_channel'
    const seen = []
    dc.subscribe('tracing:resqlite:query:start', (c) => seen.push(c.sql))
    const { Database } = await import(${JSON.stringify(lib)})
    const db = await Database.open(':memory:')
    await db.select('SELECT 1 AS early')
    await db.close()
    console.log(JSON.stringify(seen))
  `
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 15_000,
  })
  assert.deepEqual(JSON.parse(out.trim().split('\n').pop()), ['SELECT 1 AS early'])
})

test('a select calling a JavaScript function that runs a slice at a time: placement sliced', async (t) => {
  const rec = listen(t)
  const { db, file } = await open(t, PLACEMENT)
  db.function('f', (x) => x + 1)
  await openOwnConnection(db)
  const before = (await inlineCounts(db)).sliced
  const { context, events } = await oneCall(rec, file, () =>
    db.select(
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT f(x) AS v FROM c',
    ),
  )
  assert.equal((await inlineCounts(db)).sliced, before + 1, 'it ran sliced')
  assert.deepEqual(events, OK)
  assert.equal(context.placement, 'sliced')
  assert.equal(context.rows, 100_000)
})

test('queuedMs: a write that waited behind a transaction holding the writer; none for one that did not wait', async (t) => {
  const rec = listen(t)
  const { db, file } = await open(t, PLACEMENT)
  const runOutside = outsideContext()
  const begun = deferred()
  const release = deferred()
  const tx = db.transaction(async (tx) => {
    await tx.execute('INSERT INTO t (v) VALUES (60)')
    begun.resolve()
    await release.promise
  })
  await begun.promise
  const before = rec.calls('query', file).length
  const waiting = runOutside(() => db.execute('INSERT INTO t (v) VALUES (61)'))
  await sleep(30)
  release.resolve()
  await Promise.all([tx, waiting])
  const [queued] = rec.calls('query', file).slice(before)
  assert.equal(queued.context.sql, 'INSERT INTO t (v) VALUES (61)')
  assert.equal(queued.context.placement, 'writer')
  assert.ok(queued.context.queuedMs >= 25, `waited ${queued.context.queuedMs} ms`)
  const alone = await oneCall(rec, file, () => db.execute('INSERT INTO t (v) VALUES (62)'))
  assert.equal(alone.context.queuedMs, undefined)
})

test("threadQueuedMs: a read queued behind a long read on a one-reader pool waited in the engine's queue until that read ended", async (t) => {
  const rec = listen(t)
  const { db, file } = await open(t, { inlineBudget: 0, readers: 1 })
  const before = rec.calls('query', file).length
  const ac = new AbortController()
  // It never ends on its own: it runs on the one reader until the abort interrupts it.
  const long = db.selectOne(
    'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) AS m FROM c',
    [],
    {
      signal: ac.signal,
    },
  )
  const queued = db.selectOne('SELECT v FROM t WHERE v = ?', [2])
  const sent = performance.now() // its job was queued before this
  await sleep(50)
  const aborting = performance.now() // the long read's run cannot end before this
  ac.abort()
  await assert.rejects(long, { code: 'ABORT_ERR' })
  assert.deepEqual(await queued, { v: 2 })
  const calls = rec.calls('query', file).slice(before)
  assert.deepEqual(
    calls.map((c) => [c.context.operation, c.context.placement, c.events]),
    [
      ['selectOne', 'reader', FAILED],
      ['selectOne', 'reader', OK],
    ],
  )
  const { context } = calls[1]
  // Microseconds from the engine: 0.001 ms for their rounding.
  assert.ok(
    context.threadQueuedMs >= aborting - sent - 0.001,
    `waited ${context.threadQueuedMs} ms, ≥ ${aborting - sent}`,
  )
  assert.equal(context.queuedMs, undefined, 'it did not wait on the JS side')
})

test('the context: SQL that is no string, an in-memory path, startedAt, selectOne with no row (also with rowMode array), RETURNING rows', async (t) => {
  const rec = listen(t)
  const db = await Database.open(':memory:', PLACEMENT)
  t.after(() => db.close())
  await db.execute('CREATE TABLE m (v)')
  const t0 = performance.now()
  await db.select(42).catch(() => {})
  const [bad] = rec.calls('query', ':memory:').slice(-1)
  assert.equal(bad.context.sql, undefined)
  assert.equal(bad.context.errorCode, 'ERR_INVALID_ARG_TYPE')
  assert.ok(bad.context.startedAt >= t0 && bad.context.startedAt <= performance.now())
  await db.selectOne('SELECT v FROM m')
  assert.equal(rec.calls('query', ':memory:').at(-1).context.rows, 0)
  await db.execute('INSERT INTO m VALUES (1), (2) RETURNING v')
  const returning = rec.calls('query', ':memory:').at(-1).context
  assert.deepEqual([returning.rows, returning.changes], [2, 2])
  // selectOne's rows: with rowMode 'array' ({ columns, row }), and a row whose columns are named
  // `columns` and `row`, its `row` NULL.
  const rowsOf = async (sql, options) => {
    await db.selectOne(sql, [], options)
    return rec.calls('query', ':memory:').at(-1).context.rows
  }
  assert.equal(await rowsOf('SELECT v FROM m WHERE v = 9', { rowMode: 'array' }), 0)
  assert.equal(await rowsOf('SELECT v FROM m WHERE v = 1', { rowMode: 'array' }), 1)
  assert.equal(await rowsOf('SELECT 1 AS columns, NULL AS row'), 1)
})

test('columns, prepare, serialize, backup and rekey are not published', async (t) => {
  const rec = listen(t)
  const { db, file } = await open(t)
  const before = rec.events.length
  await db.columns('SELECT v FROM t')
  await db.prepare('SELECT v FROM t')
  await db.serialize()
  await db.backup(path.join(tempDir(t), 'copy.db'))
  await db.rekey('a key')
  assert.deepEqual(
    rec.events.slice(before).filter((e) => e.context.database === file),
    [],
  )
})
