// Parameter binding (docs/api.md "Parameters"), selectOne, and execute's
// { changes, lastInsertRowid }.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb } from './helpers.mjs'

test('positional parameters bind in order', async (t) => {
  const db = await openDb(t)
  assert.deepStrictEqual(await db.select('SELECT ? AS a, ? AS b, ? AS c', [1, 'two', null]), [
    { a: 1, b: 'two', c: null },
  ])
  await db.execute('CREATE TABLE t (a INTEGER, b TEXT)')
  await db.execute('INSERT INTO t (a, b) VALUES (?, ?)', [10, 'ten'])
  await db.execute('INSERT INTO t (b, a) VALUES (?, ?)', ['twenty', 20])
  assert.deepStrictEqual(await db.select('SELECT a, b FROM t WHERE a >= ? ORDER BY a', [10]), [
    { a: 10, b: 'ten' },
    { a: 20, b: 'twenty' },
  ])
  assert.deepStrictEqual(await db.select('SELECT a FROM t WHERE b = ?', ['twenty']), [{ a: 20 }])
})

test('TEXT values and names round-trip byte for byte, short or long, ASCII or not at any place', async (t) => {
  // Short texts are copied by a loop while ASCII (src/params.ts writeShort, experiments/077).
  const db = await openDb(t)
  const texts = ['', 'a', 'name-42-abcdef', 'é', 'aé', 'abcé', 'é😀z', 'x'.repeat(63) + 'é', '\u007f\u0080']
  for (const n of [63, 64, 65, 200]) texts.push('q'.repeat(n), 'q'.repeat(n - 1) + '😀')
  for (const s of texts) {
    const expected = Buffer.from(s, 'utf8').toString('hex')
    assert.deepStrictEqual(await db.selectOne('SELECT hex(?) AS h, ? AS s', [s, s]), { h: expected.toUpperCase(), s })
    assert.deepStrictEqual(await db.selectOne('SELECT hex(:v) AS h', { v: s }), { h: expected.toUpperCase() })
  }
  assert.deepStrictEqual(await db.selectOne('SELECT :é1 AS a, :ab AS b', { é1: 'x', ab: 'y' }), { a: 'x', b: 'y' })
})

test('no parameters: omitted or []', async (t) => {
  const db = await openDb(t)
  assert.deepStrictEqual(await db.select('SELECT 1 AS x'), [{ x: 1 }])
  assert.deepStrictEqual(await db.select('SELECT 1 AS x', []), [{ x: 1 }])
  assert.deepStrictEqual(await db.selectOne('SELECT 1 AS x', []), { x: 1 })
  assert.equal((await db.selectBytes('SELECT 1 AS x', [])).toString(), '[{"x":1}]')
  const r = await db.execute('CREATE TABLE t (a)', [])
  assert.equal(r.changes, 0)
  await db.execute('INSERT INTO t VALUES (1)')
  assert.deepStrictEqual(await db.select('SELECT a FROM t'), [{ a: 1 }])
})

test('?NNN parameters bind by their number', async (t) => {
  const db = await openDb(t)
  assert.deepStrictEqual(await db.select('SELECT ?2 AS a, ?1 AS b, ?2 AS c', [10, 20]), [{ a: 20, b: 10, c: 20 }])
  assert.deepStrictEqual(await db.select('SELECT ?1 + ?1 AS d', [21]), [{ d: 42 }])
  await db.execute('CREATE TABLE t (a, b)')
  await db.execute('INSERT INTO t (a, b) VALUES (?2, ?1)', ['first', 'second'])
  assert.deepStrictEqual(await db.select('SELECT a, b FROM t'), [{ a: 'second', b: 'first' }])
})

test('named parameters :a, @a and $a bind from an object by bare name', async (t) => {
  const db = await openDb(t)
  assert.deepStrictEqual(await db.select('SELECT :a AS x, @b AS y, $c AS z', { a: 1, b: 'bee', c: 3.5 }), [
    { x: 1, y: 'bee', z: 3.5 },
  ])
  // the same name used twice is one parameter
  assert.deepStrictEqual(await db.select('SELECT :n * :n AS sq, :n AS n', { n: 7 }), [{ sq: 49, n: 7 }])
  // key order in the object does not matter
  assert.deepStrictEqual(await db.select('SELECT $first AS f, $second AS s', { second: 2, first: 1 }), [{ f: 1, s: 2 }])
  await db.execute('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, score REAL)')
  await db.execute('INSERT INTO users (name, score) VALUES (@name, @score)', { name: 'ada', score: 9.5 })
  await db.execute('INSERT INTO users (name, score) VALUES ($name, $score)', { score: 1, name: 'bob' })
  assert.deepStrictEqual(await db.selectOne('SELECT * FROM users WHERE id = $id', { id: 1 }), {
    id: 1,
    name: 'ada',
    score: 9.5,
  })
  assert.deepStrictEqual(await db.select('SELECT name FROM users WHERE score > :min ORDER BY id', { min: 0.5 }), [
    { name: 'ada' },
    { name: 'bob' },
  ])
  // every value type through a named parameter
  const blob = Buffer.from([1, 2, 3])
  assert.deepStrictEqual(
    await db.selectOne('SELECT :n AS n, :i AS i, :r AS r, :s AS s, :b AS b, :big AS big', {
      n: null,
      i: 5,
      r: 0.25,
      s: 'x',
      b: blob,
      big: 12n,
    }),
    { n: null, i: 5, r: 0.25, s: 'x', b: blob, big: 12 },
  )
})

test('an array binds named parameters by their index', async (t) => {
  const db = await openDb(t)
  assert.deepStrictEqual(await db.select('SELECT :a AS x, @b AS y, $c AS z', [1, 2, 3]), [{ x: 1, y: 2, z: 3 }])
  // a repeated name has one index: :a=1, :b=2
  assert.deepStrictEqual(await db.select('SELECT :a AS x, :b AS y, :a AS z', ['A', 'B']), [{ x: 'A', y: 'B', z: 'A' }])
  await expectReject(
    () => db.select('SELECT :a AS x, :b AS y, :a AS z', ['A', 'B', 'C']),
    ResqliteError,
    'ERR_PARAMETER_COUNT',
    /2/,
  )
  assert.deepStrictEqual(await db.select('SELECT :a AS x', [5]), [{ x: 5 }])
})

test('selectOne returns the first row or undefined', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (v INTEGER)')
  assert.equal(await db.selectOne('SELECT v FROM t'), undefined)
  await db.execute('INSERT INTO t VALUES (3), (1), (2)')
  assert.deepStrictEqual(await db.selectOne('SELECT v FROM t ORDER BY v'), { v: 1 })
  assert.deepStrictEqual(await db.selectOne('SELECT v FROM t ORDER BY v DESC'), { v: 3 })
  assert.deepStrictEqual(await db.selectOne('SELECT v FROM t WHERE v = ?', [2]), { v: 2 })
  assert.equal(await db.selectOne('SELECT v FROM t WHERE v > ?', [100]), undefined)
  assert.deepStrictEqual(await db.select('SELECT v FROM t WHERE v > ?', [100]), [])
})

test('execute returns { changes, lastInsertRowid }', async (t) => {
  const db = await openDb(t)
  const created = await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  assert.equal(created.changes, 0)

  const first = await db.execute('INSERT INTO t (v) VALUES (?)', ['a'])
  assert.equal(first.changes, 1)
  assert.equal(first.lastInsertRowid, 1)
  assert.equal(typeof first.lastInsertRowid, 'number')

  const multi = await db.execute('INSERT INTO t (v) VALUES (?), (?), (?)', ['b', 'c', 'd'])
  assert.equal(multi.changes, 3)
  assert.equal(multi.lastInsertRowid, 4)

  const explicit = await db.execute('INSERT INTO t (id, v) VALUES (?, ?)', [1000, 'e'])
  assert.equal(explicit.changes, 1)
  assert.equal(explicit.lastInsertRowid, 1000)

  const updated = await db.execute('UPDATE t SET v = upper(v) WHERE id <= ?', [4])
  assert.equal(updated.changes, 4)
  const noop = await db.execute('UPDATE t SET v = ? WHERE id < 0', ['x'])
  assert.equal(noop.changes, 0)
  const deleted = await db.execute('DELETE FROM t WHERE id > ?', [2])
  assert.equal(deleted.changes, 3)
  assert.deepStrictEqual(await db.select('SELECT id, v FROM t ORDER BY id'), [
    { id: 1, v: 'A' },
    { id: 2, v: 'B' },
  ])
})

test('lastInsertRowid is a bigint outside the safe range', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  const r = await db.execute('INSERT INTO t (id, v) VALUES (?, ?)', [9007199254740993n, 'far'])
  assert.equal(r.changes, 1)
  assert.equal(r.lastInsertRowid, 9007199254740993n)
  const next = await db.execute("INSERT INTO t (v) VALUES ('next')")
  assert.equal(next.lastInsertRowid, 9007199254740994n)
  // the writes happened
  assert.deepStrictEqual(await db.select('SELECT v FROM t ORDER BY id'), [{ v: 'far' }, { v: 'next' }])
})

test('lastInsertRowid is a bigint with safeIntegers', async (t) => {
  const db = await openDb(t, { safeIntegers: true })
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  const r = await db.execute('INSERT INTO t (v) VALUES (?)', ['a'])
  assert.equal(r.lastInsertRowid, 1n)
  assert.equal(Number(r.changes), 1)
  const r2 = await db.execute('INSERT INTO t (v) VALUES (?)', ['b'])
  assert.equal(r2.lastInsertRowid, 2n)
  assert.deepStrictEqual(await db.select('SELECT id FROM t ORDER BY id'), [{ id: 1n }, { id: 2n }])
})

test('statements with a trailing semicolon, whitespace or comment are one statement', async (t) => {
  const db = await openDb(t)
  assert.deepStrictEqual(await db.select('SELECT ? AS x;', [1]), [{ x: 1 }])
  assert.deepStrictEqual(await db.select('  SELECT ? AS x ;  \n -- trailing comment\n', [2]), [{ x: 2 }])
  await db.execute('CREATE TABLE t (v);')
  const r = await db.execute('INSERT INTO t VALUES (?);  ', [3])
  assert.equal(r.changes, 1)
  assert.deepStrictEqual(await db.select('SELECT v FROM t'), [{ v: 3 }])
})

test('execute with several statements and no parameters runs them all', async (t) => {
  const db = await openDb(t)
  await db.execute(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);
                    CREATE INDEX t_v ON t(v);
                    INSERT INTO t (v) VALUES ('a');
                    INSERT INTO t (v) VALUES ('b'), ('c');`)
  assert.deepStrictEqual(await db.select('SELECT v FROM t ORDER BY id'), [{ v: 'a' }, { v: 'b' }, { v: 'c' }])
  assert.deepStrictEqual(await db.select("SELECT name FROM sqlite_schema WHERE type = 'index' AND name = 't_v'"), [
    { name: 't_v' },
  ])
  // also with an empty params array
  await db.execute("INSERT INTO t (v) VALUES ('d'); INSERT INTO t (v) VALUES ('e')", [])
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM t'), [{ n: 5 }])
})
