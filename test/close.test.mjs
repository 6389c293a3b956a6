// close(): idempotent, waits for in-flight work, every later call is ERR_DATABASE_CLOSED, and
// it leaves the database in its file alone (the WAL checkpointed and deleted).

import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, tempDir } from './helpers.mjs'

const everyMethod = (db) => ({
  select: () => db.select('SELECT 1 AS x'),
  selectOne: () => db.selectOne('SELECT 1 AS x'),
  selectBytes: () => db.selectBytes('SELECT 1 AS x'),
  execute: () => db.execute('CREATE TABLE IF NOT EXISTS t (v)'),
  executeWithParams: () => db.execute('SELECT ?', [1]),
  executeBatch: () => db.executeBatch('SELECT ?', [[1], [2]]),
})

test('every method after close() rejects with ERR_DATABASE_CLOSED', async (t) => {
  const dir = tempDir(t)
  const db = await Database.open(path.join(dir, 'c.db'))
  await db.execute('CREATE TABLE t (v)')
  assert.equal(await db.close(), undefined)
  for (const [name, call] of Object.entries(everyMethod(db))) {
    const err = await expectReject(call, ResqliteError, 'ERR_DATABASE_CLOSED', /closed/i)
    assert.ok(err instanceof Error, name)
  }
})

test('calls made after close() was called, before it resolved, are rejected too', async (t) => {
  const dir = tempDir(t)
  const db = await Database.open(path.join(dir, 'c.db'))
  const closing = db.close()
  for (const call of Object.values(everyMethod(db))) {
    await expectReject(call, ResqliteError, 'ERR_DATABASE_CLOSED', /closed/i)
  }
  assert.equal(await closing, undefined)
})

test('close() twice (sequentially and concurrently) is fine', async (t) => {
  const dir = tempDir(t)
  const db = await Database.open(path.join(dir, 'c.db'))
  await db.execute('CREATE TABLE t (v); INSERT INTO t VALUES (1)')
  assert.equal(await db.close(), undefined)
  assert.equal(await db.close(), undefined)

  const db2 = await Database.open(path.join(dir, 'c.db'))
  assert.deepStrictEqual(await db2.select('SELECT v FROM t'), [{ v: 1 }])
  const results = await Promise.all([db2.close(), db2.close(), db2.close()])
  assert.deepStrictEqual(results, [undefined, undefined, undefined])
  await expectReject(() => db2.select('SELECT 1'), ResqliteError, 'ERR_DATABASE_CLOSED', /closed/i)
})

test('close() while many queries are in flight: they all resolve, then close resolves', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'c.db')
  const db = await Database.open(file, { readers: 2 })
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)')
  await db.execute('INSERT INTO t (v) SELECT value FROM json_each(?)', [
    JSON.stringify(Array.from({ length: 1000 }, (_, i) => i)),
  ])

  const settledBeforeClose = []
  const pending = []
  const track = (p, label) => {
    const tracked = p.then(
      (value) => {
        settledBeforeClose.push(label)
        return value
      },
      (err) => {
        settledBeforeClose.push(label)
        throw err
      },
    )
    pending.push(tracked)
  }
  for (let i = 0; i < 60; i++) {
    track(db.select('SELECT count(*) AS n, sum(v) AS s FROM t WHERE v >= ?', [i]), `select${i}`)
    if (i % 3 === 0) track(db.selectBytes('SELECT v FROM t WHERE id <= 50'), `bytes${i}`)
    if (i % 2 === 0) track(db.execute('INSERT INTO t (v) VALUES (?)', [10000 + i]), `execute${i}`)
  }
  track(db.executeBatch('INSERT INTO t (v) VALUES (?)', [[1], [2], [3]]), 'batch')
  track(
    db.selectOne(
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT count(*) AS n FROM c',
    ),
    'slow',
  )

  const closing = db.close().then(() => settledBeforeClose.length)
  const outcomes = await Promise.allSettled(pending)
  const rejected = outcomes.filter((o) => o.status === 'rejected')
  assert.deepStrictEqual(
    rejected.map((o) => `${o.reason?.code}: ${o.reason?.message}`),
    [],
    'every in-flight call must resolve',
  )
  const countWhenClosed = await closing
  assert.equal(countWhenClosed, pending.length, 'close() resolved before every in-flight call had settled')

  // the in-flight calls resolved with real results
  assert.deepStrictEqual(await pending.at(-1), { n: 300000 })
  const [first] = await pending[0]
  assert.ok(first.n >= 1000 && first.n <= 1033, `unexpected count ${first.n}`)
  assert.ok(Buffer.isBuffer(await pending[1]))
  assert.equal(JSON.parse((await pending[1]).toString()).length, 50)
  assert.equal((await pending[2]).changes, 1)

  // the writes were committed
  const again = await Database.open(file)
  try {
    assert.deepStrictEqual(await again.select('SELECT count(*) AS n FROM t'), [{ n: 1000 + 30 + 3 }])
  } finally {
    await again.close()
  }
})

test('the file can be reopened, written and read after close', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'c.db')
  for (let round = 0; round < 3; round++) {
    const db = await Database.open(file)
    await db.execute('CREATE TABLE IF NOT EXISTS t (v INTEGER)')
    await db.execute('INSERT INTO t VALUES (?)', [round])
    assert.deepStrictEqual(
      await db.select('SELECT v FROM t ORDER BY v'),
      Array.from({ length: round + 1 }, (_, v) => ({ v })),
    )
    await db.close()
  }
})

// The writer's connection closes last, so its close checkpoints the WAL and deletes it: the
// database file alone holds every commit, whichever thread finished first. (It used to close
// beside the readers; when one outlived it, the WAL stayed, and a file copied over this one,
// its stale WAL left beside it, opened with that WAL's pages mixed into it: the index missing
// base rows that bench/experiments/chat-corruption.sh reproduced.)
test('close() leaves no WAL: the database file alone holds every commit', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'c.db')
  const copy = path.join(dir, 'copy.db')
  for (let round = 1; round <= 12; round++) {
    const db = await Database.open(file, { readers: 3 })
    await db.execute('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)')
    // Every connection in use: writes, and reads on the readers and the JS thread.
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2
          ? db.execute('INSERT INTO t (v) VALUES (?)', [`${round}-${i}`])
          : db.select('SELECT count(*) AS n, max(id) AS m FROM t, (SELECT 1 UNION ALL SELECT 2)'),
      ),
    )
    await db.close()
    assert.equal(fs.existsSync(`${file}-wal`), false, `round ${round}: the WAL is still there after close()`)
    for (const s of ['', '-wal', '-shm']) fs.rmSync(copy + s, { force: true })
    fs.copyFileSync(file, copy)
    const check = await Database.open(copy, { readonly: true })
    try {
      assert.deepStrictEqual(await check.select('SELECT count(*) AS n FROM t'), [{ n: 20 * round }])
    } finally {
      await check.close()
    }
  }
})

test("close() with checkpoints: 'external' leaves the WAL to the other process", async (t) => {
  const file = path.join(tempDir(t), 'c.db')
  const db = await Database.open(file, { checkpoints: 'external' })
  await db.execute('CREATE TABLE t (v); INSERT INTO t VALUES (1)')
  await db.close()
  assert.ok(fs.statSync(`${file}-wal`).size > 0, 'the WAL was checkpointed on close')
})
