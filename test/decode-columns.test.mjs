// The row decoder's variants (src/decode.ts, experiments/041): a result (part) of 8 rows or more
// is made by a row maker for its columns' kinds — a column of numbers only read straight from
// the slots, of NULLs only as null, of texts only without the number check — and every other
// column through the general cell reader. Each column kind, a column whose kind changes in a
// later row or a later part, and both row modes must give exactly the rows inserted. The reads
// run with inlineBudget: 0, so every result crosses from a reader through decode.ts.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { openDb } from './helpers.mjs'

const LONG = 'a text longer than twelve characters'
const BIG = 2n ** 60n + 3n

/** Row i's values: n numbers, z NULLs, t texts (short, long, not ASCII), m numbers but a text
 * in the last row only, b blobs and NULLs, k integers with one beyond 2^53 in row 5. */
function rowOf(i, rows) {
  return {
    n: i % 3 === 0 ? i : i + 0.25,
    z: null,
    t: i % 3 === 0 ? `s${i}` : i % 3 === 1 ? `${LONG} ${i}` : `é ${i}`,
    m: i === rows - 1 ? `late ${i}` : -i - 1,
    b: i % 2 === 0 ? Buffer.from([i & 255, 7]) : null,
    k: i === 5 ? BIG : BigInt(i),
  }
}

async function filled(t, rows) {
  const db = await openDb(t, { inlineBudget: 0, safeIntegers: true })
  await db.execute('CREATE TABLE c (id INTEGER PRIMARY KEY, n, z, t, m, b, k)')
  const sets = Array.from({ length: rows }, (_, i) => Object.values(rowOf(i, rows)))
  await db.executeBatch('INSERT INTO c (n, z, t, m, b, k) VALUES (?, ?, ?, ?, ?, ?)', sets)
  return db
}

const SELECT = 'SELECT n, z, t, m, b, k FROM c ORDER BY id'

/** The rows as inserted; with safeIntegers every integer reads as a bigint. */
function expected(rows) {
  return Array.from({ length: rows }, (_, i) => {
    const row = rowOf(i, rows)
    const int = (v) => (typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v)
    return { ...row, n: int(row.n), m: int(row.m) }
  })
}

for (const rows of [3, 8, 100, 30_000]) {
  test(`${rows} rows: every column kind decodes to the inserted values, as objects and as arrays`, async (t) => {
    const db = await filled(t, rows)
    const want = expected(rows)
    const got = await db.select(SELECT)
    assert.equal(got.length, rows)
    for (let i = 0; i < rows; i++) assert.deepStrictEqual(got[i], want[i], `row ${i}`)
    const arrays = await db.select(SELECT, [], { rowMode: 'array' })
    assert.deepStrictEqual(arrays.columns, ['n', 'z', 't', 'm', 'b', 'k'])
    for (let i = 0; i < rows; i++) assert.deepStrictEqual(arrays.rows[i], Object.values(want[i]), `array row ${i}`)
  })
}

test('a column of numbers in early parts and texts in a later one: each part decodes its own kinds', async (t) => {
  const db = await openDb(t, { inlineBudget: 0 })
  const rows = 40_000 // 80,000 cells: several parts
  await db.execute('CREATE TABLE p (id INTEGER PRIMARY KEY, v)')
  await db.execute(
    `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${rows})
     INSERT INTO p SELECT i, CASE WHEN i > ${rows - 100} THEN 'text ' || i ELSE i * 1.5 END FROM s`,
  )
  const got = await db.select('SELECT id, v FROM p ORDER BY id')
  assert.equal(got.length, rows)
  for (let i = 0; i < rows; i++) {
    const id = i + 1
    const v = id > rows - 100 ? `text ${id}` : id * 1.5
    if (got[i].id !== id || got[i].v !== v) assert.fail(`row ${i} is ${JSON.stringify(got[i])}`)
  }
})

test('without safeIntegers a column of numbers stays numbers, and an integer beyond 2^53 in it is a RangeError', async (t) => {
  const db = await openDb(t, { inlineBudget: 0 })
  await db.execute('CREATE TABLE q (id INTEGER PRIMARY KEY, v INTEGER)')
  await db.executeBatch(
    'INSERT INTO q (v) VALUES (?)',
    Array.from({ length: 20 }, (_, i) => [i * 1000]),
  )
  assert.deepStrictEqual(
    (await db.select('SELECT v FROM q ORDER BY id')).map((r) => r.v),
    Array.from({ length: 20 }, (_, i) => i * 1000),
  )
  await db.execute('UPDATE q SET v = ? WHERE id = 12', [2n ** 60n])
  await assert.rejects(
    db.select('SELECT v FROM q ORDER BY id'),
    (e) => e instanceof RangeError && /'v'/.test(e.message),
  )
})
