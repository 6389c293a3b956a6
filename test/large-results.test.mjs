// Large results cross to JS in parts (experiments/009): rows arrive in order and complete, and
// an error found after some parts were delivered still rejects the whole call.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb } from './helpers.mjs'

const ROWS = 60_000 // × 3 columns: many parts

async function fill(db) {
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, v)')
  await db.execute(
    `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS})
     INSERT INTO t SELECT x, 'name-' || x, x * 0.5 FROM c`,
  )
}

test('a result of many parts arrives complete and in order, also several at once', async (t) => {
  const db = await openDb(t)
  await fill(db)
  const [a, b, c] = await Promise.all([
    db.select('SELECT * FROM t ORDER BY id'),
    db.select('SELECT * FROM t ORDER BY id DESC'),
    db.select('SELECT id FROM t WHERE id % 2 = 0 ORDER BY id'),
  ])
  assert.equal(a.length, ROWS)
  assert.equal(b.length, ROWS)
  assert.equal(c.length, ROWS / 2)
  a.forEach((row, i) => {
    if (row.id !== i + 1 || row.name !== `name-${i + 1}` || row.v !== (i + 1) * 0.5) {
      assert.fail(`row ${i} is ${JSON.stringify(row)}`)
    }
  })
  assert.deepEqual(b[0], { id: ROWS, name: `name-${ROWS}`, v: ROWS / 2 })
  // Rows gather in arrays of 8,192 and are joined at the end: at once up to 32,768 rows (c),
  // a few arrays a turn beyond (a, b) (experiments/069). Every row is in its place.
  b.forEach((row, i) => {
    if (row.id !== ROWS - i) assert.fail(`row ${i} of the descending result is ${JSON.stringify(row)}`)
  })
  c.forEach((row, i) => {
    if (row.id !== 2 * (i + 1)) assert.fail(`row ${i} of the even ids is ${JSON.stringify(row)}`)
  })
})

test('an unsafe integer in a late part rejects the call with a RangeError', async (t) => {
  const db = await openDb(t)
  await fill(db)
  await db.execute('UPDATE t SET v = 9007199254740993 WHERE id = ?', [ROWS - 10])
  await expectReject(() => db.select('SELECT * FROM t ORDER BY id'), RangeError, 'ERR_OUT_OF_RANGE', /column 'v'/)
  // The same rows without that column still read.
  assert.equal((await db.select('SELECT id FROM t ORDER BY id')).length, ROWS)
})

test('invalid UTF-8 in a late part rejects the call after earlier parts were delivered', async (t) => {
  const db = await openDb(t)
  await fill(db)
  await db.execute(`UPDATE t SET name = CAST(x'ff41' AS TEXT) WHERE id = ?`, [ROWS - 10])
  await expectReject(() => db.select('SELECT * FROM t ORDER BY id'), ResqliteError, 'ERR_INVALID_UTF8', /column 'name'/)
  // The database and the reader are fine: the rows before it read normally.
  assert.equal((await db.select('SELECT * FROM t WHERE id < ?', [ROWS - 10])).length, ROWS - 11)
})

test('aborting a large result while its parts arrive rejects with ABORT_ERR; later reads work', async (t) => {
  const db = await openDb(t, { readers: 1 })
  await fill(db)
  const ac = new AbortController()
  const pending = db.select('SELECT a.id, b.name FROM t a, t b WHERE b.id < 4', [], { signal: ac.signal })
  setTimeout(() => ac.abort(), 5)
  await expectReject(() => pending, ResqliteError, 'ABORT_ERR', /abort/)
  assert.deepEqual(await db.selectOne('SELECT count(*) AS n FROM t'), { n: ROWS })
})
