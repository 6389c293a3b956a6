// AbortSignal support on select / selectOne / selectBytes (docs/api.md "Cancelling a read").

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { ResqliteError } from '../dist/esm/index.mjs'
import { calibrate, ENDLESS_SQL, expectReject, openDb, SLOW_SQL } from './helpers.mjs'

const METHODS = ['select', 'selectOne', 'selectBytes']

// The tests below abort ENDLESS_SQL (helpers.mjs): they check that it ends, not how fast.
const ENDS = { timeout: 60_000 }

/** What `promise` settled with if it settled before the event loop's next turn (a setImmediate),
 * else 'not yet': a call that went to an engine thread cannot answer that soon. */
function settledAtOnce(promise) {
  const turn = new Promise((resolve) => setImmediate(() => resolve('not yet')))
  return Promise.race([
    promise.then(
      (v) => ({ resolved: v }),
      (e) => ({ rejected: e }),
    ),
    turn,
  ])
}

test('an already-aborted signal rejects with ABORT_ERR without running the query', ENDS, async (t) => {
  const db = await openDb(t, { readers: 2 })
  for (const method of METHODS) {
    const ac = new AbortController()
    ac.abort()
    const settled = await settledAtOnce(db[method](ENDLESS_SQL, [], { signal: ac.signal }))
    assert.notEqual(settled, 'not yet', `${method}: a pre-aborted call must reject at once, not run the query`)
    const err = settled.rejected
    assert.ok(
      err instanceof ResqliteError && err.code === 'ABORT_ERR' && /abort/i.test(err.message),
      `${method}: ${err}`,
    )
    assert.equal(err.cause, ac.signal.reason, `${method}: cause must hold the signal's reason`)
    // even a trivial query does not run (it would have resolved)
    await expectReject(
      () => db[method]('SELECT 1 AS x', [], { signal: ac.signal }),
      ResqliteError,
      'ABORT_ERR',
      /abort/i,
    )
  }
  // with a custom reason
  const ac = new AbortController()
  const reason = new Error('not needed any more')
  ac.abort(reason)
  const err = await expectReject(
    () => db.select('SELECT 1', [], { signal: ac.signal }),
    ResqliteError,
    'ABORT_ERR',
    /abort/i,
  )
  assert.equal(err.cause, reason)
  assert.deepStrictEqual(await db.select('SELECT 2 AS x'), [{ x: 2 }])
})

test('aborting a long-running read rejects it and the database still answers', ENDS, async (t) => {
  const db = await openDb(t, { readers: 2 })
  for (const method of METHODS) {
    const ac = new AbortController()
    const pending = db[method](ENDLESS_SQL, [], { signal: ac.signal })
    await sleep(50) // running now, on a reader (it overran the JS thread's budget)
    const reason = new Error(`stop ${method}`)
    ac.abort(reason)
    const err = await expectReject(() => pending, ResqliteError, 'ABORT_ERR', /abort/i)
    assert.equal(err.cause, reason)
    assert.ok(err instanceof Error)
  }
  // every reader still works, including a query of moderate length
  const rows = await Promise.all([
    db.select('SELECT 1 AS x'),
    db.selectOne('SELECT 2 AS x'),
    db.select('SELECT 3 AS x'),
    db.select(SLOW_SQL, [1000]),
  ])
  assert.deepStrictEqual(rows, [[{ x: 1 }], { x: 2 }, [{ x: 3 }], [{ n: 1000 }]])
  await db.execute('CREATE TABLE t (v); INSERT INTO t VALUES (1)')
  assert.deepStrictEqual(await db.select('SELECT v FROM t'), [{ v: 1 }])
})

test('an aborted read stops running: its reader is free again', ENDS, async (t) => {
  const db = await openDb(t, { readers: 1 })
  for (let i = 0; i < 2; i++) {
    const ac = new AbortController()
    const pending = db.select(ENDLESS_SQL, [], { signal: ac.signal })
    await sleep(100)
    ac.abort()
    await expectReject(() => pending, ResqliteError, 'ABORT_ERR', /abort/i)
    // the only reader must not still be counting (it never would stop): a new read is answered
    assert.deepStrictEqual(await db.select('SELECT 1 AS x'), [{ x: 1 }])
  }
  // close() does not wait for the aborted work either (it would wait forever)
  await db.close()
})

test('aborting one read does not affect a concurrent one', async (t) => {
  const db = await openDb(t, { readers: 2 })
  const n = await calibrate(db, 400)
  const ac = new AbortController()
  const doomed = db.select(SLOW_SQL, [n * 10], { signal: ac.signal })
  const survivor = db.select(SLOW_SQL, [n])
  const other = new AbortController() // a signal that is never aborted
  const survivor2 = db.selectOne(SLOW_SQL, [n], { signal: other.signal })
  await sleep(50)
  ac.abort()
  await expectReject(() => doomed, ResqliteError, 'ABORT_ERR', /abort/i)
  assert.deepStrictEqual(await survivor, [{ n }])
  assert.deepStrictEqual(await survivor2, { n })
})

test('aborts racing query completion never break later queries', async (t) => {
  const db = await openDb(t, { readers: 2 })
  const n = await calibrate(db, 4) // a few milliseconds
  let aborted = 0
  let completed = 0
  for (let i = 0; i < 60; i++) {
    const ac = new AbortController()
    const p = db.select(SLOW_SQL, [n], { signal: ac.signal })
    setTimeout(() => ac.abort(), i % 8)
    try {
      assert.deepStrictEqual(await p, [{ n }])
      completed++
    } catch (err) {
      assert.ok(err instanceof ResqliteError, `unexpected error ${err}`)
      assert.equal(err.code, 'ABORT_ERR')
      aborted++
    }
  }
  assert.equal(aborted + completed, 60)
  // no stale interrupt leaks into later queries on any reader
  for (let i = 0; i < 20; i++) {
    assert.deepStrictEqual(await Promise.all([db.select(SLOW_SQL, [n]), db.select(SLOW_SQL, [n])]), [[{ n }], [{ n }]])
  }
})

test('aborting after a query completed changes nothing', async (t) => {
  const db = await openDb(t)
  const ac = new AbortController()
  const rows = await db.select('SELECT 1 AS x', [], { signal: ac.signal })
  ac.abort()
  assert.deepStrictEqual(rows, [{ x: 1 }])
  assert.deepStrictEqual(await db.select('SELECT 2 AS x'), [{ x: 2 }])
})
