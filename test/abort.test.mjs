// AbortSignal support on select / selectOne / selectBytes (docs/api.md "Cancelling a read").

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { ResqliteError } from '../dist/esm/index.mjs'
import { calibrate, expectReject, openDb, SLOW_SQL } from './helpers.mjs'

const METHODS = ['select', 'selectOne', 'selectBytes']

test('an already-aborted signal rejects with ABORT_ERR without running the query', async (t) => {
  const db = await openDb(t, { readers: 2 })
  const n = await calibrate(db, 3000) // the query would take ~3 s
  for (const method of METHODS) {
    const ac = new AbortController()
    ac.abort()
    const t0 = performance.now()
    const err = await expectReject(
      () => db[method](SLOW_SQL, [n], { signal: ac.signal }),
      ResqliteError,
      'ABORT_ERR',
      /abort/i,
    )
    const ms = performance.now() - t0
    assert.ok(ms < 300, `${method}: pre-aborted call took ${ms.toFixed(0)} ms; it must not run the query`)
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

test('aborting a long-running read rejects quickly and the database still answers', async (t) => {
  const db = await openDb(t, { readers: 2 })
  const n = await calibrate(db, 4000) // would take ~4 s if not aborted
  for (const method of METHODS) {
    const ac = new AbortController()
    let settled = false
    const pending = db[method](SLOW_SQL, [n], { signal: ac.signal })
    pending.then(
      () => (settled = true),
      () => (settled = true),
    )
    await sleep(150)
    assert.equal(settled, false, `${method}: the query settled within 150 ms; it is not slow enough to test abort`)
    const reason = new Error(`stop ${method}`)
    const t0 = performance.now()
    ac.abort(reason)
    const err = await expectReject(() => pending, ResqliteError, 'ABORT_ERR', /abort/i)
    const latency = performance.now() - t0
    assert.ok(latency < 500, `${method}: abort took ${latency.toFixed(0)} ms to reject`)
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

test('an aborted read stops running: its reader is free again right away', async (t) => {
  const db = await openDb(t, { readers: 1 })
  const n = await calibrate(db, 4000)
  for (let i = 0; i < 2; i++) {
    const ac = new AbortController()
    const pending = db.select(SLOW_SQL, [n], { signal: ac.signal })
    await sleep(100)
    ac.abort()
    await expectReject(() => pending, ResqliteError, 'ABORT_ERR', /abort/i)
    // the only reader must not still be counting: a new read is answered promptly
    const t0 = performance.now()
    assert.deepStrictEqual(await db.select('SELECT 1 AS x'), [{ x: 1 }])
    const ms = performance.now() - t0
    assert.ok(ms < 500, `a read after the abort waited ${ms.toFixed(0)} ms: the aborted query kept running`)
  }
  // close() does not wait for the aborted work either
  const t0 = performance.now()
  await db.close()
  assert.ok(performance.now() - t0 < 1000, 'close() waited for an aborted query')
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
