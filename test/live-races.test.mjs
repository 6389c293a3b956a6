// Live queries under races and misuse: writes racing the first run and re-runs, unsubscribe
// during a re-run, close() with live streams, bad input (delivered to the error callback, never
// thrown), async iteration, and the Observable interop shape.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { calibrate, openDb, SLOW_SQL } from './helpers.mjs'
import { assertQuiet, collect, counters, settle, sleep, TIMEOUT, waitCounters, waitUntil } from './live-helpers.mjs'

async function tdb(t) {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)')
  return db
}

/** A stream SQL over t that takes about `ms` to run (a counting CTE beside the real read). */
async function slowStreamSql(db, ms) {
  const n = await calibrate(db, ms)
  const slow = SLOW_SQL.replace('?', String(n))
  return `SELECT (SELECT count(*) FROM t) AS n, (SELECT group_concat(v) FROM (SELECT v FROM t ORDER BY id)) AS vs, (${slow}) AS slow`
}

test('a write racing the very first run is never lost', async (t) => {
  const db = await tdb(t)
  for (let i = 0; i < 60; i++) {
    const SQL = `SELECT count(*) AS n, sum(v) AS s, ${i} AS iteration FROM t`
    const baseline = await counters(db)
    const c = collect(db.stream(SQL))
    // sent in the same tick as the subscription, and (odd iterations) after a short delay that
    // lands somewhere in the first run
    if (i % 2 === 1) await new Promise((r) => setImmediate(r))
    const write = db.execute('INSERT INTO t (v) VALUES (?)', [i])
    if (i % 3 === 0) await db.execute('UPDATE t SET v = v + 1 WHERE id = 1')
    await write
    await settle(db, [c], baseline)
    assert.deepStrictEqual(c.last, await db.select(SQL), `iteration ${i}: the last delivery is the committed state`)
    assert.deepStrictEqual(c.errors, [])
    c.stop()
  }
  assert.equal((await counters(db)).active, 0)
})

for (const writeAfter of [false, true]) {
  test(`a live query subscribed while a transaction is open sees its commit (${writeAfter ? 'with' : 'no'} write after subscribing)`, async (t) => {
    const db = await tdb(t)
    const SQL = 'SELECT count(*) AS n, sum(v) AS s FROM t'
    let c
    let baseline
    await db.transaction(async (tx) => {
      await tx.execute('INSERT INTO t (v) VALUES (1)')
      baseline = await counters(db)
      c = collect(db.stream(SQL))
      // the readers do not see the open transaction
      assert.deepStrictEqual(await c.next(), [{ n: 0, s: null }])
      if (writeAfter) await tx.execute('UPDATE t SET v = 5')
    })
    await settle(db, [c], baseline)
    assert.deepStrictEqual(c.last, await db.select(SQL))
    assert.equal(c.last[0].n, 1)
  })
}

test('a write during a slow first run is delivered after it', async (t) => {
  const db = await tdb(t)
  const SQL = await slowStreamSql(db, 80)
  const baseline = await counters(db)
  const c = collect(db.stream(SQL))
  await sleep(20) // the first run is (very likely) in flight
  await db.execute('INSERT INTO t (v) VALUES (1)')
  await settle(db, [c], baseline)
  assert.deepStrictEqual(c.last, await db.select(SQL))
  assert.equal(c.last[0].n, 1)
})

test('a burst of 200 writes during re-runs: the last committed state is delivered, with far fewer re-runs', async (t) => {
  const db = await tdb(t)
  const SQL = await slowStreamSql(db, 20)
  const baseline = await counters(db)
  const c = collect(db.stream(SQL))
  const fast = collect(db.stream('SELECT id, v FROM t ORDER BY id'))
  await settle(db, [c, fast], baseline)
  const before = await counters(db)
  const writes = []
  for (let i = 0; i < 200; i++) {
    writes.push(
      i % 4 === 3
        ? db.execute('UPDATE t SET v = v * 2 WHERE id = ?', [i - 1])
        : db.execute('INSERT INTO t (v) VALUES (?)', [i]),
    )
    if (i % 20 === 0) await writes.at(-1) // let some re-runs start in the middle of the burst
  }
  await Promise.all(writes)
  const after = await settle(db, [c, fast], baseline)
  assert.deepStrictEqual(c.last, await db.select(SQL))
  assert.deepStrictEqual(fast.last, await db.select('SELECT id, v FROM t ORDER BY id'))
  const slowRuns = c.deliveries.length - 1
  assert.ok(slowRuns >= 1, 'the slow stream re-ran at least once')
  assert.ok(
    after.requeries - before.requeries < 2 * 200,
    `re-runs (${after.requeries - before.requeries}) must be fewer than writes × streams`,
  )
  assert.ok(slowRuns < 200, `the slow stream delivered ${slowRuns} times for 200 writes`)
  // deliveries are in commit order: the count never goes down (only inserts and updates)
  for (let i = 1; i < c.deliveries.length; i++)
    assert.ok(c.deliveries[i][0].n >= c.deliveries[i - 1][0].n, 'deliveries arrive in order')
})

test('unsubscribing during a re-run: no callback afterwards, and the query is dropped', async (t) => {
  const db = await tdb(t)
  const SQL = await slowStreamSql(db, 150)
  const c = collect(db.stream(SQL))
  const stays = collect(db.stream(SQL)) // shares the query; unsubscribes later
  await c.next()
  await stays.next()
  const before = await counters(db)
  await db.execute('INSERT INTO t (v) VALUES (1)')
  assert.equal(
    (await counters(db)).requeries,
    before.requeries + 1,
    'the re-run is queued (and, ~150 ms long, in flight)',
  )
  const cAtStop = c.deliveries.length
  c.stop()
  assert.equal(c.stop.closed, true)
  // the other subscriber still gets the re-run
  assert.equal((await stays.next())[0].n, 1)
  await db.execute('INSERT INTO t (v) VALUES (2)')
  const staysAtStop = stays.deliveries.length
  stays.stop()
  assert.deepStrictEqual(await counters(db).then((s) => [s.active, s.queries]), [0, 0])
  await sleep(600) // well past the end of the re-run
  assert.equal(c.deliveries.length, cAtStop, 'nothing after unsubscribe')
  assert.equal(stays.deliveries.length, staysAtStop, 'nothing after unsubscribe')
  assert.deepStrictEqual(
    [c.errors, c.completed, stays.errors, stays.completed],
    [[], 0, [], 0],
    'unsubscribing does not complete',
  )
  // subscribing again starts a fresh query with the current rows
  const again = collect(db.stream(SQL))
  assert.equal((await again.next())[0].n, 2)
})

test('unsubscribing from inside the next callback stops further deliveries', async (t) => {
  const db = await tdb(t)
  const got = []
  const other = collect(db.stream('SELECT count(*) AS n FROM t'))
  const stop = db.stream('SELECT count(*) AS n FROM t').subscribe((rows) => {
    got.push(rows)
    stop()
  })
  await other.next()
  await waitUntil(() => got.length === 1, 'the first delivery')
  await db.execute('INSERT INTO t (v) VALUES (1)')
  await other.next()
  await assertQuiet(other, 100)
  assert.equal(got.length, 1)
  assert.equal((await counters(db)).active, 1)
})

test('close() with live streams: every subscriber completes, nothing is delivered after, nothing leaks', async (t) => {
  const db = await tdb(t)
  const SQL = await slowStreamSql(db, 60)
  const cs = [
    collect(db.stream('SELECT id FROM t')),
    collect(db.stream('SELECT id FROM t')), // shared
    collect(db.stream('SELECT count(*) AS n FROM t')),
    collect(db.stream(SQL)),
  ]
  await Promise.all(cs.map((c) => c.next()))
  const pending = collect(db.stream(SQL.replace('AS slow', 'AS slow2'))) // first run in flight
  await db.execute('INSERT INTO t (v) VALUES (1)') // re-runs in flight
  await sleep(5)
  const closing = db.close()
  for (const c of [...cs, pending]) {
    assert.equal(c.completed, 1, 'complete is called synchronously by close()')
  }
  await closing
  // The engine is closed and its threads joined; its counters are gone with it: diagnostics()
  // rejects like every call after close (docs/api.md "diagnostics").
  await assert.rejects(db.diagnostics(), { code: 'ERR_DATABASE_CLOSED' })
  await sleep(200)
  for (const c of [...cs, pending]) {
    assert.equal(c.completed, 1, 'complete is called once')
    assert.equal(c.events.at(-1), 'complete', 'nothing after complete')
    assert.deepStrictEqual(c.errors, [])
  }
  // subscribing after close: an error and complete, never a throw
  let threw = false
  let late
  try {
    late = collect(db.stream('SELECT 1'))
  } catch {
    threw = true
  }
  assert.equal(threw, false)
  const err = await late.nextError()
  assert.equal(err.code, 'ERR_DATABASE_CLOSED')
  await late.waitFor((x) => x.completed === 1, 'complete')
  // unsubscribing after close is harmless
  for (const c of cs) c.stop()
})

/** Subscribes to a stream that must fail; asserts nothing is thrown or delivered synchronously. */
function subscribeFailing(db, sql, params) {
  let c
  assert.doesNotThrow(() => {
    c = collect(db.stream(sql, params))
  })
  assert.deepStrictEqual(c.events, [], 'nothing is delivered during subscribe()')
  return c
}

async function expectStreamError(c, code, pattern) {
  const err = await c.nextError()
  if (code) assert.equal(err.code, code, `unexpected code; message: ${err.message}`)
  if (pattern) assert.match(String(err.message), pattern)
  await c.waitFor((x) => x.completed === 1, 'complete after the failed first run')
  assert.deepStrictEqual(c.events, ['error', 'complete'])
  return err
}

test('bad input: invalid SQL errors to the subscriber and completes, nothing thrown', async (t) => {
  const db = await tdb(t)
  const c1 = subscribeFailing(db, 'SELEC nonsense')
  const c2 = subscribeFailing(db, 'SELECT * FROM no_such_table')
  const c3 = subscribeFailing(db, 'SELECT 1; SELECT 2')
  const c4 = subscribeFailing(db, '')
  await expectStreamError(c1, undefined, /syntax error/)
  await expectStreamError(c2, undefined, /no such table/)
  await expectStreamError(c3)
  await expectStreamError(c4)
  await settle(db, [], await counters(db)) // nothing left running
  const s = await counters(db)
  assert.equal(s.active, 0)
  assert.equal(s.queries, 0)
})

test('bad input: a write statement passed to stream() errors with ERR_NOT_READ_ONLY and writes nothing', async (t) => {
  const db = await tdb(t)
  const c1 = subscribeFailing(db, 'INSERT INTO t (v) VALUES (1)')
  const c2 = subscribeFailing(db, 'DELETE FROM t')
  const c3 = subscribeFailing(db, 'BEGIN')
  const c4 = subscribeFailing(db, 'CREATE TABLE x (y)')
  await expectStreamError(c1, 'ERR_NOT_READ_ONLY')
  await expectStreamError(c2, 'ERR_NOT_READ_ONLY')
  await expectStreamError(c3, 'ERR_NOT_READ_ONLY')
  await expectStreamError(c4, 'ERR_NOT_READ_ONLY')
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM t'), [{ n: 0 }])
  // the readers still work after a BEGIN was refused
  const ok = collect(db.stream('SELECT count(*) AS n FROM t'))
  assert.deepStrictEqual(await ok.next(), [{ n: 0 }])
  await db.execute('INSERT INTO t (v) VALUES (1)')
  assert.deepStrictEqual(await ok.next(), [{ n: 1 }])
})

test('bad input: parameters of unsupported types and non-string SQL error to the subscriber', async (t) => {
  const db = await tdb(t)
  const SQL = 'SELECT ? AS x'
  const cases = [
    [SQL, [Symbol('s')], 'ERR_INVALID_ARG_TYPE'],
    [SQL, [{ a: 1 }], 'ERR_INVALID_ARG_TYPE'],
    [SQL, [undefined], 'ERR_INVALID_ARG_TYPE'],
    [SQL, [() => 1], 'ERR_INVALID_ARG_TYPE'],
    [SQL, [true], 'ERR_INVALID_ARG_TYPE'],
    [SQL, [NaN], 'ERR_INVALID_ARG_VALUE'],
    [SQL, [2n ** 64n], 'ERR_OUT_OF_RANGE'],
    [SQL, 'not params', 'ERR_INVALID_ARG_TYPE'],
    [SQL, new Map(), 'ERR_INVALID_ARG_TYPE'],
    [42, undefined, 'ERR_INVALID_ARG_TYPE'],
    [null, undefined, 'ERR_INVALID_ARG_TYPE'],
    [undefined, undefined, 'ERR_INVALID_ARG_TYPE'],
    [{ sql: 'SELECT 1' }, undefined, 'ERR_INVALID_ARG_TYPE'],
  ]
  const cs = cases.map(([sql, params]) => subscribeFailing(db, sql, params))
  for (let i = 0; i < cases.length; i++) await expectStreamError(cs[i], cases[i][2])
  // a parameter the SQL does not have (a run-time bind error), also to the subscriber
  const extra = subscribeFailing(db, 'SELECT 1 AS one', [1, 2])
  await expectStreamError(extra)
  const s = await counters(db)
  assert.equal(s.active, 0)
  assert.equal(s.queries, 0)
})

test('a failure with no error callback becomes a process warning, never an uncaught exception', async (t) => {
  const db = await tdb(t)
  const warnings = []
  const onWarning = (w) => warnings.push(w)
  process.on('warning', onWarning)
  t.after(() => process.off('warning', onWarning))
  let completed = false
  db.stream('SELECT * FROM missing').subscribe({ complete: () => (completed = true) })
  db.stream('SELECT ?', [Symbol('x')]).subscribe(() => assert.fail('no rows expected'))
  await waitUntil(() => warnings.length >= 2, 'two warnings')
  assert.ok(completed)
  assert.ok(warnings.some((w) => /no such table/.test(w.message)))
  assert.ok(warnings.some((w) => w.code === 'ERR_INVALID_ARG_TYPE'))
})

test('for await: yields the current rows then changes; break unsubscribes', async (t) => {
  const db = await tdb(t)
  const SQL = 'SELECT count(*) AS n FROM t'
  const watcher = collect(db.stream(SQL)) // shares the query: tells when a result has arrived
  await watcher.next()
  const seen = []
  for await (const rows of db.stream(SQL)) {
    seen.push(rows[0].n)
    assert.equal((await counters(db)).active, 2)
    if (seen.length === 1) {
      // five results arrive while the loop body is busy: only the latest is kept
      for (let i = 1; i <= 5; i++) {
        await db.execute('INSERT INTO t (v) VALUES (?)', [i])
        await watcher.until([{ n: i }])
      }
    }
    if (seen.length === 2) break
  }
  assert.deepStrictEqual(seen, [0, 5])
  const s = await counters(db)
  assert.equal(s.active, 1, 'break unsubscribed the loop; the watcher remains')
  watcher.stop()
  assert.equal((await counters(db)).active, 0)
  assert.equal((await counters(db)).queries, 0)
})

test('an error callback that unsubscribes after a failed first run leaves the counters consistent', async (t) => {
  const db = await tdb(t)
  let completes = 0
  const stop = db.stream('SELECT * FROM missing').subscribe({
    error: () => stop(), // what for-await does on a failure
    complete: () => completes++,
  })
  await waitUntil(() => completes === 1, 'complete')
  const s = await counters(db)
  assert.equal(s.queries, 0)
  assert.equal(s.active, 0, 'active must not go below 0')
  // and a healthy subscription afterwards counts 1
  const c = collect(db.stream('SELECT 1 AS one'))
  await c.next()
  assert.equal((await counters(db)).active, 1)
})

test('for await: a failed first run throws from the loop; a later failure throws too', async (t) => {
  const db = await tdb(t)
  await assert.rejects(
    (async () => {
      for await (const rows of db.stream('SELECT * FROM nope')) assert.fail(`no rows expected: ${rows}`)
    })(),
    /no such table/,
  )
  await db.execute('CREATE TABLE gone (x)')
  const iterations = []
  await assert.rejects(
    (async () => {
      for await (const rows of db.stream('SELECT count(*) AS n FROM gone')) {
        iterations.push(rows)
        if (iterations.length === 1) await db.execute('DROP TABLE gone')
      }
    })(),
    /no such table/,
  )
  assert.deepStrictEqual(iterations, [[{ n: 0 }]])
  await waitCounters(db, (s) => s.active === 0, 'the failed loop to unsubscribe')
})

test('for await ends when the database closes', async (t) => {
  const db = await tdb(t)
  const seen = []
  const loop = (async () => {
    for await (const rows of db.stream('SELECT count(*) AS n FROM t')) {
      seen.push(rows)
      if (seen.length === 1) setTimeout(() => db.close(), 10)
    }
    return 'ended'
  })()
  assert.equal(await Promise.race([loop, sleep(TIMEOUT).then(() => 'hung')]), 'ended')
  assert.equal(seen.length, 1)
})

test('Observable interop: @@observable returns the live query; an observer subscription unsubscribes', async (t) => {
  const db = await tdb(t)
  const live = db.stream('SELECT count(*) AS n FROM t')
  const observable = live['@@observable']()
  assert.equal(observable, live)
  assert.equal(typeof observable.subscribe, 'function')
  const sym = Symbol.observable
  if (typeof sym === 'symbol') assert.equal(live[sym](), live)

  const got = []
  let completes = 0
  const subscription = observable.subscribe({
    next: (rows) => got.push(rows),
    error: (e) => assert.fail(`unexpected error ${e}`),
    complete: () => completes++,
  })
  assert.equal(typeof subscription.unsubscribe, 'function')
  assert.equal(subscription.closed, false)
  await waitUntil(() => got.length === 1, 'the first rows')
  assert.deepStrictEqual(got, [[{ n: 0 }]])
  await db.execute('INSERT INTO t (v) VALUES (1)')
  await waitUntil(() => got.length === 2, 'the second rows')
  assert.deepStrictEqual(got[1], [{ n: 1 }])
  subscription.unsubscribe()
  assert.equal(subscription.closed, true)
  assert.equal((await counters(db)).active, 0)
  await db.execute('INSERT INTO t (v) VALUES (2)')
  await sleep(200)
  assert.equal(got.length, 2, 'nothing after unsubscribe')
  assert.equal(completes, 0, 'unsubscribe does not call complete (as in RxJS)')
})

test('an observer that is a class instance (as RxJS passes its Subscriber) receives rows, with `this` bound', async (t) => {
  const db = await tdb(t)
  class Sink {
    rows = []
    errors = []
    completes = 0
    next(rows) {
      this.rows.push(rows)
    }
    error(e) {
      this.errors.push(e)
    }
    complete() {
      this.completes++
    }
  }
  const ok = new Sink()
  const sub = db.stream('SELECT count(*) AS n FROM t')['@@observable']().subscribe(ok)
  const failing = new Sink()
  db.stream('SELECT * FROM missing').subscribe(failing)
  await waitUntil(() => ok.rows.length === 1, 'a delivery to a class-instance observer (its next is on the prototype)')
  assert.deepStrictEqual(ok.rows, [[{ n: 0 }]])
  await waitUntil(() => failing.completes === 1, 'error and complete on a class-instance observer')
  assert.match(failing.errors[0].message, /no such table/)
  sub.unsubscribe()
})
