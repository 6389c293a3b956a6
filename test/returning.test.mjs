// Rows from writes (RETURNING), array rows (rowMode: 'array') and column metadata (columns):
// docs/api.md "RETURNING", "Array rows", "columns".

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb } from './helpers.mjs'
import { collect } from './live-helpers.mjs'

async function table(t, options) {
  const db = await openDb(t, options)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL, n REAL)')
  return db
}

test('execute with RETURNING resolves its rows beside changes and lastInsertRowid', async (t) => {
  const db = await table(t)
  const inserted = await db.execute('INSERT INTO t (v, n) VALUES (?, ?), (?, ?) RETURNING id, v, n', [
    'a',
    1.5,
    'é',
    null,
  ])
  assert.deepStrictEqual(inserted, {
    changes: 2,
    lastInsertRowid: 2,
    rows: [
      { id: 1, v: 'a', n: 1.5 },
      { id: 2, v: 'é', n: null },
    ],
  })
  const updated = await db.execute("UPDATE t SET v = v || '!' WHERE id = 2 RETURNING v AS after")
  assert.deepStrictEqual(updated.rows, [{ after: 'é!' }])
  assert.equal(updated.changes, 1)
  const none = await db.execute('DELETE FROM t WHERE id > 99 RETURNING id')
  assert.deepStrictEqual(none, { changes: 0, lastInsertRowid: 2, rows: [] }, 'RETURNING no row: rows is []')
  const plain = await db.execute('INSERT INTO t (v) VALUES (?)', ['c'])
  assert.deepStrictEqual(plain, { changes: 1, lastInsertRowid: 3 }, 'no result columns: no rows key')
  assert.deepStrictEqual(await db.select('SELECT id, v FROM t ORDER BY id'), [
    { id: 1, v: 'a' },
    { id: 2, v: 'é!' },
    { id: 3, v: 'c' },
  ])
})

test('RETURNING writes keep call order, group commit included, and safeIntegers makes bigints', async (t) => {
  const db = await table(t, { safeIntegers: true })
  // Sent together: standalone writes queued at once may commit as one group.
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => db.execute('INSERT INTO t (v) VALUES (?) RETURNING id, v', [`r${i}`])),
  )
  results.forEach((r, i) => {
    assert.deepStrictEqual(r, { changes: 1, lastInsertRowid: BigInt(i + 1), rows: [{ id: BigInt(i + 1), v: `r${i}` }] })
  })
  await db.execute('INSERT INTO t (id, v) VALUES (?, ?)', [2n ** 60n, 'big'])
  const big = await db.execute('UPDATE t SET n = 1 WHERE v = ? RETURNING id', ['big'])
  assert.deepStrictEqual(big, { changes: 1, lastInsertRowid: 2n ** 60n, rows: [{ id: 2n ** 60n }] })
})

test('a rowid beyond 2^53 crosses exactly beside RETURNING rows', async (t) => {
  const db = await table(t)
  const r = await db.execute('INSERT INTO t (id, v) VALUES (?, ?) RETURNING v', [2n ** 60n, 'x'])
  assert.deepStrictEqual(r, { changes: 1, lastInsertRowid: 2n ** 60n, rows: [{ v: 'x' }] })
})

test('RETURNING inside a transaction sees and is undone with it', async (t) => {
  const db = await table(t)
  await db.transaction(async (tx) => {
    const a = await tx.execute('INSERT INTO t (v) VALUES (?) RETURNING id', ['kept'])
    assert.deepStrictEqual(a.rows, [{ id: 1 }])
    // Called through db inside the body: routed to the transaction.
    const b = await db.execute('UPDATE t SET v = ? WHERE id = ? RETURNING v', ['kept2', 1])
    assert.deepStrictEqual(b.rows, [{ v: 'kept2' }])
  })
  await assert.rejects(
    db.transaction(async (tx) => {
      const r = await tx.execute('INSERT INTO t (v) VALUES (?) RETURNING id, v', ['gone'], { rowMode: 'array' })
      assert.deepStrictEqual(r, { changes: 1, lastInsertRowid: 2, columns: ['id', 'v'], rows: [[2, 'gone']] })
      throw new Error('roll back')
    }),
    /roll back/,
  )
  assert.deepStrictEqual(await db.select('SELECT v FROM t'), [{ v: 'kept2' }])
})

test('a failing RETURNING write rejects with its code and changes nothing', async (t) => {
  const db = await table(t)
  await db.execute('INSERT INTO t (id, v) VALUES (1, ?)', ['a'])
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (1, ?) RETURNING id', ['b']),
    ResqliteError,
    'SQLITE_CONSTRAINT_PRIMARYKEY',
  )
  await expectReject(
    () => db.execute('INSERT INTO t (v) VALUES (NULL) RETURNING id'),
    ResqliteError,
    'SQLITE_CONSTRAINT_NOTNULL',
  )
  assert.deepStrictEqual(await db.select('SELECT id, v FROM t'), [{ id: 1, v: 'a' }])
})

test('a live query re-runs after a RETURNING write', async (t) => {
  const db = await table(t)
  const live = collect(db.stream('SELECT count(*) AS n FROM t'))
  await live.waitFor((c) => c.deliveries.length === 1, 'the first run')
  await db.execute('INSERT INTO t (v) VALUES (?) RETURNING id', ['x'])
  await live.waitFor((c) => c.last?.[0]?.n === 1, 'the re-run after the insert')
  await db.execute('DELETE FROM t RETURNING id')
  await live.waitFor((c) => c.last?.[0]?.n === 0, 'the re-run after the delete')
  live.stop()
})

test("rowMode: 'array' keeps duplicate column names apart, on every read path", async (t) => {
  // inlineBudget 0: every read on the reader threads; the default: small reads on the JS thread.
  for (const inlineBudget of [0, 10]) {
    const db = await table(t, { inlineBudget })
    await db.execute("INSERT INTO t (v, n) VALUES ('a', 1), ('b', NULL)")
    const sql = 'SELECT id AS a, v AS a, n FROM t ORDER BY id'
    const expected = {
      columns: ['a', 'a', 'n'],
      rows: [
        [1, 'a', 1],
        [2, 'b', null],
      ],
    }
    assert.deepStrictEqual(await db.select(sql, [], { rowMode: 'array' }), expected, `inlineBudget ${inlineBudget}`)
    assert.deepStrictEqual(await db.select(sql, [], { rowMode: 'object' }), [
      { a: 'a', n: 1 },
      { a: 'b', n: null },
    ])
    assert.deepStrictEqual(await db.selectOne(sql, [], { rowMode: 'array' }), {
      columns: expected.columns,
      row: [1, 'a', 1],
    })
    assert.deepStrictEqual(await db.selectOne('SELECT 1 AS x WHERE 0', [], { rowMode: 'array' }), {
      columns: ['x'],
      row: undefined,
    })
    assert.deepStrictEqual(await db.select('SELECT v FROM t WHERE 0', [], { rowMode: 'array' }), {
      columns: ['v'],
      rows: [],
    })
    await db.transaction(async (tx) => {
      assert.deepStrictEqual(await tx.select(sql, [], { rowMode: 'array' }), expected, 'on the writer')
      assert.deepStrictEqual((await tx.selectOne(sql, [], { rowMode: 'array' })).row, [1, 'a', 1])
    })
    const it = db.iterate(sql, [], { rowMode: 'array', pageRows: 1 })
    assert.equal(it.columns, undefined, 'no columns before the first page')
    const rows = []
    for await (const row of it) rows.push(row)
    assert.deepStrictEqual(rows, expected.rows)
    assert.deepStrictEqual(it.columns, expected.columns)
  }
})

test("rowMode: 'array' on a large result assembled in parts", async (t) => {
  const db = await openDb(t, { inlineBudget: 0 })
  const n = 30_000
  const r = await db.select(
    'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) SELECT i, i * 2 AS i FROM c',
    [n],
    { rowMode: 'array' },
  )
  assert.deepStrictEqual(r.columns, ['i', 'i'])
  assert.equal(r.rows.length, n)
  assert.deepStrictEqual(r.rows[n - 1], [n, 2 * n])
  assert.ok(r.rows.every((row, k) => row[0] === k + 1 && row[1] === 2 * (k + 1)))
})

test('columns names each result column and its declared type, without running the statement', async (t) => {
  const db = await table(t)
  assert.deepStrictEqual(await db.columns('SELECT id, v AS label, n, n * 2, 1 AS a, 2 AS a FROM t'), [
    { name: 'id', declaredType: 'INTEGER' },
    { name: 'label', declaredType: 'TEXT' },
    { name: 'n', declaredType: 'REAL' },
    { name: 'n * 2', declaredType: null },
    { name: 'a', declaredType: null },
    { name: 'a', declaredType: null },
  ])
  assert.deepStrictEqual(await db.columns("INSERT INTO t (v) VALUES ('x') RETURNING id"), [
    { name: 'id', declaredType: 'INTEGER' },
  ])
  assert.deepStrictEqual(await db.columns("INSERT INTO t (v) VALUES ('x')"), [])
  assert.deepStrictEqual(await db.select('SELECT count(*) AS c FROM t'), [{ c: 0 }], 'columns ran nothing')
  await db.transaction(async (tx) => {
    await tx.execute('CREATE TABLE u (w BLOB)')
    assert.deepStrictEqual(
      await tx.columns('SELECT w FROM u'),
      [{ name: 'w', declaredType: 'BLOB' }],
      'sees the transaction',
    )
  })
})

test('bad input: rowMode, execute options, columns SQL', async (t) => {
  const db = await table(t)
  for (const rowMode of ['arrays', 1, null]) {
    await expectReject(() => db.select('SELECT 1', [], { rowMode }), TypeError, 'ERR_INVALID_ARG_VALUE', /rowMode/)
    await expectReject(() => db.execute('SELECT 1', [], { rowMode }), TypeError, 'ERR_INVALID_ARG_VALUE', /rowMode/)
  }
  await assert.rejects(db.iterate('SELECT 1', [], { rowMode: 'x' })[Symbol.asyncIterator]().next(), {
    name: 'TypeError',
    code: 'ERR_INVALID_ARG_VALUE',
  })
  await expectReject(
    () => db.selectBytes('SELECT 1', [], { rowMode: 'array' }),
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    /selectBytes/,
  )
  await expectReject(
    () => db.execute('SELECT 1', [], { signal: new AbortController().signal }),
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    /signal/,
  )
  await expectReject(() => db.execute('SELECT 1', [], 'array'), TypeError, 'ERR_INVALID_ARG_TYPE')
  await expectReject(() => db.columns(42), TypeError, 'ERR_INVALID_ARG_TYPE')
  await expectReject(() => db.columns('SELECT nope FROM t'), ResqliteError, 'SQLITE_ERROR', /nope/)
  await expectReject(() => db.columns('SELECT 1; SELECT 2'), ResqliteError, 'ERR_MULTIPLE_STATEMENTS')
  await expectReject(() => db.columns(''), ResqliteError, 'ERR_EMPTY_STATEMENT')
  // select still refuses a write, RETURNING or not: writes go through execute.
  await expectReject(() => db.select("INSERT INTO t (v) VALUES ('x') RETURNING id"), ResqliteError, 'ERR_NOT_READ_ONLY')
  assert.deepStrictEqual(await db.select('SELECT count(*) AS c FROM t'), [{ c: 0 }], 'the database is intact')
})

test('selectBytes is unchanged: objects, duplicate names as select gives them', async (t) => {
  const db = await table(t)
  await db.execute("INSERT INTO t (v, n) VALUES ('a', 1)")
  assert.equal((await db.selectBytes('SELECT id AS a, v AS a, n FROM t')).toString(), '[{"a":"a","n":1}]')
  assert.equal(
    (await db.selectBytes('SELECT id, v FROM t')).toString(),
    JSON.stringify(await db.select('SELECT id, v FROM t')),
  )
})
