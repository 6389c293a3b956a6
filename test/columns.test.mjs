// Row shape (docs/api.md "Reads": "Object keys follow JavaScript's rules"): keys in column order,
// duplicate names, "__proto__", array-index-like names; selectBytes mirrors select exactly.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { openDb } from './helpers.mjs'

/** select + selectBytes of the same query; asserts selectBytes == JSON.stringify(select). */
async function both(db, sql, params) {
  const rows = await db.select(sql, params)
  const bytes = await db.selectBytes(sql, params)
  assert.ok(Buffer.isBuffer(bytes))
  assert.equal(bytes.toString('utf8'), JSON.stringify(rows), `selectBytes differs from select for ${sql}`)
  return rows
}

test('rows are plain objects with keys in column order', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (zeta TEXT, alpha INTEGER, mid REAL)')
  await db.execute("INSERT INTO t VALUES ('z', 1, 2.5)")
  const rows = await both(db, 'SELECT * FROM t')
  assert.equal(rows.length, 1)
  assert.deepStrictEqual(Object.keys(rows[0]), ['zeta', 'alpha', 'mid'])
  assert.equal(Object.getPrototypeOf(rows[0]), Object.prototype, 'rows must be plain objects')
  assert.deepStrictEqual(rows, [{ zeta: 'z', alpha: 1, mid: 2.5 }])

  const reordered = await both(db, 'SELECT mid, zeta, alpha FROM t')
  assert.deepStrictEqual(Object.keys(reordered[0]), ['mid', 'zeta', 'alpha'])
})

test('aliases keep select-list order, not alphabetical order', async (t) => {
  const db = await openDb(t)
  const rows = await both(db, 'SELECT 1 AS b, 2 AS a')
  assert.deepStrictEqual(Object.keys(rows[0]), ['b', 'a'])
  assert.deepStrictEqual(rows, [{ b: 1, a: 2 }])
  assert.equal((await db.selectBytes('SELECT 1 AS b, 2 AS a')).toString(), '[{"b":1,"a":2}]')
  // expression without alias: SQLite's column name is the expression text
  const [expr] = await both(db, 'SELECT 1+1')
  assert.deepStrictEqual(Object.keys(expr), ['1+1'])
  assert.equal(expr['1+1'], 2)
})

test('a duplicated column name keeps its first position with the last value', async (t) => {
  const db = await openDb(t)
  const rows = await both(db, "SELECT 1 AS x, 'mid' AS y, 3 AS x")
  assert.deepStrictEqual(Object.keys(rows[0]), ['x', 'y'])
  assert.deepStrictEqual(rows, [{ x: 3, y: 'mid' }])
  assert.equal((await db.selectBytes("SELECT 1 AS x, 'mid' AS y, 3 AS x")).toString(), '[{"x":3,"y":"mid"}]')

  // a join with two "id" columns
  await db.execute(
    'CREATE TABLE a (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER)',
  )
  await db.execute("INSERT INTO a VALUES (1, 'one'); INSERT INTO b VALUES (20, 1)")
  const joined = await both(db, 'SELECT * FROM a JOIN b ON b.a_id = a.id')
  assert.deepStrictEqual(Object.keys(joined[0]), ['id', 'name', 'a_id'])
  assert.deepStrictEqual(joined, [{ id: 20, name: 'one', a_id: 1 }])

  // the first occurrence is NULL, the last is not (and vice versa)
  assert.deepStrictEqual(await both(db, 'SELECT NULL AS k, 5 AS k'), [{ k: 5 }])
  assert.deepStrictEqual(await both(db, 'SELECT 5 AS k, NULL AS k'), [{ k: null }])
})

test('a column named "__proto__" becomes an own property, not the prototype', async (t) => {
  const db = await openDb(t)
  const [row] = await both(db, 'SELECT 1 AS "__proto__", 2 AS other')
  assert.ok(Object.hasOwn(row, '__proto__'), '__proto__ must be an own property')
  assert.equal(Object.getOwnPropertyDescriptor(row, '__proto__').value, 1)
  assert.equal(Object.getPrototypeOf(row), Object.prototype)
  assert.deepStrictEqual(Object.keys(row), ['__proto__', 'other'])
  assert.equal(JSON.stringify(row), '{"__proto__":1,"other":2}')

  // an object value (a BLOB Buffer) must not become the prototype either
  const [blobRow] = await db.select('SELECT x\'0102\' AS "__proto__"')
  assert.ok(Object.hasOwn(blobRow, '__proto__'))
  assert.equal(Object.getPrototypeOf(blobRow), Object.prototype)
  assert.deepStrictEqual(Object.getOwnPropertyDescriptor(blobRow, '__proto__').value, Buffer.from([1, 2]))

  // selectBytes emits it like any other key
  assert.equal((await db.selectBytes('SELECT 1 AS "__proto__"')).toString(), '[{"__proto__":1}]')
})

test('array-index-like names come first, in ascending numeric order, as in JS objects', async (t) => {
  const db = await openDb(t)
  const sql = 'SELECT 1 AS b, 2 AS "12", 3 AS a, 4 AS "0", 5 AS "01", 6 AS "4294967295", 7 AS "4294967294"'
  const rows = await both(db, sql)
  const expected = { b: 1, 12: 2, a: 3, 0: 4, '01': 5, 4294967295: 6, 4294967294: 7 }
  assert.deepStrictEqual(Object.keys(rows[0]), Object.keys(expected))
  assert.deepStrictEqual(Object.keys(rows[0]), ['0', '12', '4294967294', 'b', 'a', '01', '4294967295'])
  assert.deepStrictEqual(rows, [expected])
  assert.equal((await db.selectBytes(sql)).toString(), JSON.stringify([expected]))
  assert.equal(
    (await db.selectBytes(sql)).toString(),
    '[{"0":4,"12":2,"4294967294":7,"b":1,"a":3,"01":5,"4294967295":6}]',
  )

  // duplicate index-like names: first position (numeric order), last value
  assert.deepStrictEqual(await both(db, 'SELECT 1 AS "7", 2 AS z, 3 AS "7"'), [{ 7: 3, z: 2 }])
})

test('unusual column names: empty, spaces, quotes, unicode', async (t) => {
  const db = await openDb(t)
  const rows = await both(db, 'SELECT 1 AS "", 2 AS "a b", 3 AS "q""uote", 4 AS "é😀", 5 AS "back\\slash"')
  assert.deepStrictEqual(Object.keys(rows[0]), ['', 'a b', 'q"uote', 'é😀', 'back\\slash'])
  assert.deepStrictEqual(Object.values(rows[0]), [1, 2, 3, 4, 5])
})

test('every row of a multi-row result has the same key order', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (c TEXT, b INTEGER, a BLOB)')
  await db.execute("INSERT INTO t VALUES ('x', 1, NULL), (NULL, NULL, x'00'), ('y', 2, x'')")
  const rows = await db.select('SELECT * FROM t ORDER BY rowid')
  assert.equal(rows.length, 3)
  for (const r of rows) assert.deepStrictEqual(Object.keys(r), ['c', 'b', 'a'])
  assert.deepStrictEqual(rows, [
    { c: 'x', b: 1, a: null },
    { c: null, b: null, a: Buffer.from([0]) },
    { c: 'y', b: 2, a: Buffer.alloc(0) },
  ])
  assert.equal(
    (await db.selectBytes('SELECT * FROM t ORDER BY rowid')).toString(),
    '[{"c":"x","b":1,"a":null},{"c":null,"b":null,"a":"AA=="},{"c":"y","b":2,"a":""}]',
  )
})

test('column names are never mixed up between queries of different shapes', async (t) => {
  const db = await openDb(t)
  // name lists whose concatenations collide, or that differ only in order or count
  const shapes = [
    ['ab', 'c'],
    ['a', 'bc'],
    ['abc'],
    ['a', 'b', 'c'],
    ['c', 'b', 'a'],
    ['', 'abc'],
    ['abc', ''],
    ['x', 'x'],
    ['x'],
    ['x', 'x', 'x'],
  ]
  const sqlFor = (names) => `SELECT ${names.map((n, i) => `${i + 1} AS "${n}"`).join(', ')}`
  const expectedFor = (names) => {
    const row = {}
    names.forEach((n, i) => {
      row[n] = i + 1
    })
    return row
  }
  for (let round = 0; round < 2; round++) {
    for (const names of shapes) {
      const sql = sqlFor(names)
      const expected = expectedFor(names)
      assert.deepStrictEqual(await db.select(sql), [expected], `select ${sql}`)
      assert.deepStrictEqual(await db.selectOne(sql), expected, `selectOne ${sql}`)
      assert.equal((await db.selectBytes(sql)).toString(), JSON.stringify([expected]), `selectBytes ${sql}`)
    }
  }
  // the same through tables
  await db.execute(
    'CREATE TABLE t1 (ab, c); CREATE TABLE t2 (a, bc); INSERT INTO t1 VALUES (1, 2); INSERT INTO t2 VALUES (3, 4)',
  )
  assert.deepStrictEqual(await db.select('SELECT * FROM t1'), [{ ab: 1, c: 2 }])
  assert.deepStrictEqual(await db.select('SELECT * FROM t2'), [{ a: 3, bc: 4 }])
})

test('a schema change is seen by statements run before it (statement cache)', async (t) => {
  const db = await openDb(t, { readers: 2 })
  await db.execute('CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1)')
  for (let i = 0; i < 4; i++) {
    assert.deepStrictEqual(await db.select('SELECT * FROM t'), [{ a: 1 }])
    assert.equal((await db.selectBytes('SELECT * FROM t')).toString(), '[{"a":1}]')
  }
  await db.execute("ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'bee'")
  for (let i = 0; i < 4; i++) {
    assert.deepStrictEqual(await db.select('SELECT * FROM t'), [{ a: 1, b: 'bee' }])
    assert.equal((await db.selectBytes('SELECT * FROM t')).toString(), '[{"a":1,"b":"bee"}]')
  }
  await db.execute('ALTER TABLE t RENAME COLUMN a TO z')
  for (let i = 0; i < 4; i++) {
    assert.deepStrictEqual(await db.selectOne('SELECT * FROM t'), { z: 1, b: 'bee' })
  }
  await db.execute('DROP TABLE t; CREATE TABLE t (q REAL); INSERT INTO t VALUES (2.5)')
  for (let i = 0; i < 4; i++) {
    assert.deepStrictEqual(await db.select('SELECT * FROM t'), [{ q: 2.5 }])
  }
})

test('read-only PRAGMAs and non-ASCII SQL work through select', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE "tâble" ("ключ" TEXT, n INTEGER)')
  await db.execute('INSERT INTO "tâble" VALUES (\'значение 😀\', 1)')
  assert.deepStrictEqual(await db.select('SELECT * FROM "tâble" WHERE "ключ" = \'значение 😀\''), [
    { ключ: 'значение 😀', n: 1 },
  ])
  const info = await db.select('PRAGMA table_info("tâble")')
  assert.deepStrictEqual(
    info.map((c) => [c.name, c.type]),
    [
      ['ключ', 'TEXT'],
      ['n', 'INTEGER'],
    ],
  )
})

test('columns() after a schema change shows the new columns, on whichever connection it runs', async (t) => {
  for (const options of [undefined, { inlineBudget: 0, readers: 1 }]) {
    const db = await openDb(t, options)
    await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY)')
    const names = async () => (await db.columns('SELECT * FROM t')).map((c) => c.name)
    assert.deepStrictEqual(await names(), ['id'])
    await db.execute('ALTER TABLE t ADD COLUMN extra TEXT') // on the writer's connection
    assert.deepStrictEqual(await names(), ['id', 'extra'], `options ${JSON.stringify(options)}`)
  }
})
