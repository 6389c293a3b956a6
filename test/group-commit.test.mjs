// Writes queued together may commit together (experiments/015); each must still behave as if
// it ran alone: its own result, its own error, in call order, nothing lost or doubled.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { openDb } from './helpers.mjs'

test('concurrent writes keep their own results and errors; a failing one takes nothing else with it', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)')
  const calls = []
  for (let i = 0; i < 200; i++) {
    // Every 10th repeats an earlier value: a UNIQUE violation in the middle of the queue.
    const v = i % 10 === 9 ? `v${i - 1}` : `v${i}`
    calls.push(db.execute('INSERT INTO t (v) VALUES (?)', [v]))
  }
  const results = await Promise.allSettled(calls)
  let expectedRowid = 0
  results.forEach((r, i) => {
    if (i % 10 === 9) {
      assert.equal(r.status, 'rejected', `call ${i} should have failed`)
      assert.ok(r.reason instanceof ResqliteError)
      assert.equal(r.reason.code, 'SQLITE_CONSTRAINT_UNIQUE')
    } else {
      assert.equal(r.status, 'fulfilled', `call ${i} failed: ${r.reason?.message}`)
      expectedRowid++
      assert.deepEqual(r.value, { changes: 1, lastInsertRowid: expectedRowid }, `call ${i}`)
    }
  })
  const rows = await db.select('SELECT id, v FROM t ORDER BY id')
  assert.equal(rows.length, 180)
  assert.deepEqual(rows.slice(0, 3), [
    { id: 1, v: 'v0' },
    { id: 2, v: 'v1' },
    { id: 3, v: 'v2' },
  ])
})

test("SQLite's own rollback in the middle of queued writes fails that write only", async (t) => {
  const db = await openDb(t)
  await db.execute(`CREATE TABLE t (v INTEGER);
    CREATE TRIGGER no_13 BEFORE INSERT ON t WHEN NEW.v = 13 BEGIN SELECT RAISE(ROLLBACK, 'thirteen'); END`)
  const results = await Promise.allSettled(
    Array.from({ length: 30 }, (_, i) => db.execute('INSERT INTO t VALUES (?)', [i])),
  )
  results.forEach((r, i) => {
    if (i === 13) {
      assert.equal(r.status, 'rejected')
      assert.equal(r.reason.code, 'SQLITE_CONSTRAINT_TRIGGER')
      assert.match(r.reason.message, /thirteen/)
    } else {
      assert.equal(r.status, 'fulfilled', `write ${i} failed: ${r.reason?.message}`)
    }
  })
  const values = (await db.select('SELECT v FROM t ORDER BY rowid')).map((r) => r.v)
  assert.deepEqual(
    values,
    Array.from({ length: 30 }, (_, i) => i).filter((i) => i !== 13),
  )
})

test('statements that cannot share a transaction run in their place in the queue', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (v INTEGER)')
  const calls = [
    db.execute('INSERT INTO t VALUES (1)'),
    db.execute('INSERT INTO t VALUES (2)'),
    db.execute('CREATE TABLE u (w INTEGER)'),
    db.execute('INSERT INTO u SELECT count(*) FROM t'),
    db.execute('INSERT INTO t VALUES (3)'),
    db.execute('PRAGMA user_version = 7'),
    db.execute('INSERT INTO t VALUES (4)'),
    db.execute('VACUUM'),
    db.execute('INSERT INTO t VALUES (5)'),
  ]
  await Promise.all(calls)
  assert.deepEqual(
    (await db.select('SELECT v FROM t ORDER BY rowid')).map((r) => r.v),
    [1, 2, 3, 4, 5],
  )
  assert.deepEqual(await db.select('SELECT w FROM u'), [{ w: 2 }])
  assert.deepEqual(await db.select('PRAGMA user_version'), [{ user_version: 7 }])
})

// The oracle: the same seeded mix of writes, issued all at once on one database and awaited one
// by one on another, must give every call the same result and leave the same rows — whatever
// groups formed, whatever SQLite rolled back on its own.
function seededWrites(seed, count) {
  let s = seed >>> 0
  const next = (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s % n
  }
  const calls = []
  for (let i = 0; i < count; i++) {
    const k = `k${next(40)}`
    switch (next(10)) {
      case 0:
      case 1:
      case 2:
        calls.push(['INSERT INTO t (k, n) VALUES (?, ?)', [k, next(20)]]) // UNIQUE and n = 13 (RAISE(ROLLBACK)) fail
        break
      case 3:
        calls.push(['UPDATE t SET n = n - ? WHERE k = ?', [next(8), k]]) // CHECK (n >= 0) fails
        break
      case 4:
        calls.push(['DELETE FROM t WHERE k = ?', [k]])
        break
      case 5:
        calls.push(['INSERT OR REPLACE INTO t (k, n) VALUES (?, ?)', [k, next(12)]])
        break
      case 6:
        calls.push(['INSERT OR ROLLBACK INTO t (k, n) VALUES (?, ?)', [k, 1]]) // a duplicate rolls back everything open
        break
      case 7:
        calls.push(['INSERT OR FAIL INTO t (k, n) VALUES (?, 1), (?, 2)', [`k${next(40)}`, k]]) // may keep its first row
        break
      case 8:
        calls.push(['UPDATE t SET n = n + 1', []])
        break
      default:
        calls.push(next(2) === 0 ? [`PRAGMA user_version = ${i}`, []] : ['INSERT INTO log (at) VALUES (?)', [i]])
    }
  }
  return calls
}

const SCHEMA = `CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT UNIQUE, n INTEGER CHECK (n >= 0));
  CREATE TABLE log (at INTEGER);
  CREATE TRIGGER no_13 BEFORE INSERT ON t WHEN NEW.n = 13 BEGIN SELECT RAISE(ROLLBACK, 'thirteen'); END`

const settle = (r) => (r.status === 'fulfilled' ? { ok: r.value } : { error: r.reason.code, message: r.reason.message })

test('queued writes give every call the result it gets when the calls are awaited one by one (seeded oracle)', async (t) => {
  for (const seed of [1, 2, 3, 4]) {
    const grouped = await openDb(t)
    const alone = await openDb(t)
    await grouped.execute(SCHEMA)
    await alone.execute(SCHEMA)
    const calls = seededWrites(seed, 400)
    const before = (await grouped.diagnostics()).groupCommit
    const queued = (await Promise.allSettled(calls.map(([sql, params]) => grouped.execute(sql, params)))).map(settle)
    const after = (await grouped.diagnostics()).groupCommit
    const oneByOne = []
    for (const [sql, params] of calls)
      oneByOne.push(settle((await Promise.allSettled([alone.execute(sql, params)]))[0]))
    for (let i = 0; i < calls.length; i++)
      assert.deepEqual(queued[i], oneByOne[i], `seed ${seed}, call ${i}: ${calls[i][0]}`)
    for (const sql of ['SELECT * FROM t ORDER BY id', 'SELECT * FROM log ORDER BY rowid', 'PRAGMA user_version']) {
      assert.deepEqual(await grouped.select(sql), await alone.select(sql), `seed ${seed}: ${sql}`)
    }
    // The oracle means something only if writes did commit in groups.
    assert.ok(
      after.groups > before.groups && after.writes - before.writes >= 2 * (after.groups - before.groups),
      `seed ${seed}: ${JSON.stringify({ before, after })}`,
    )
    assert.ok(
      queued.some((r) => r.error === 'SQLITE_CONSTRAINT_TRIGGER') &&
        queued.some((r) => r.error === 'SQLITE_CONSTRAINT_UNIQUE'),
      `seed ${seed}: the mix should include failures`,
    )
  }
})

test('a full database in the middle of queued writes fails the writes it would fail one by one', async (t) => {
  const grouped = await openDb(t)
  const alone = await openDb(t)
  for (const db of [grouped, alone]) {
    await db.execute('CREATE TABLE b (v BLOB)')
    const pages = (await db.selectOne('PRAGMA page_count')).page_count
    await db.execute(`PRAGMA max_page_count = ${pages + 12}`)
  }
  const blob = Buffer.alloc(3000, 7)
  const calls = Array.from({ length: 40 }, (_, i) =>
    i % 5 === 4 ? ['DELETE FROM b WHERE rowid % 3 = 0', []] : ['INSERT INTO b VALUES (?)', [blob]],
  )
  const queued = (await Promise.allSettled(calls.map(([sql, params]) => grouped.execute(sql, params)))).map(settle)
  const oneByOne = []
  for (const [sql, params] of calls) oneByOne.push(settle((await Promise.allSettled([alone.execute(sql, params)]))[0]))
  assert.deepEqual(queued, oneByOne)
  assert.ok(
    queued.some((r) => r.error === 'SQLITE_FULL'),
    'the database should have filled up',
  )
  assert.deepEqual(
    await grouped.select('SELECT rowid FROM b ORDER BY rowid'),
    await alone.select('SELECT rowid FROM b ORDER BY rowid'),
  )
  assert.equal((await grouped.selectOne('PRAGMA integrity_check')).integrity_check, 'ok')
})
