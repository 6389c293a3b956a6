// db.prepare(sql) → Statement (docs/api.md "prepare"): every method, inside and outside a
// transaction body, used concurrently, executeBatch through it, after close, and what it keeps
// alive. Bad arguments: statement-bad-input.test.mjs.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import test from 'node:test'
import { fileURLToPath } from 'node:url'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb, tempDir } from './helpers.mjs'

async function setUp(t, options) {
  const db = await openDb(t, options)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b TEXT)')
  await db.executeBatch(
    'INSERT INTO t VALUES (?, ?, ?)',
    Array.from({ length: 20 }, (_, i) => [i + 1, i * 10, `row ${i + 1}`]),
  )
  return db
}

const drain = async (iterator) => {
  const rows = []
  for await (const row of iterator) rows.push(row)
  return rows
}

for (const [label, options] of [
  ['default', undefined],
  ['inlineBudget 0 (every call on a thread)', { inlineBudget: 0 }],
]) {
  test(`${label}: every method runs the statement with its parameters`, async (t) => {
    const db = await setUp(t, options)
    const point = await db.prepare('SELECT * FROM t WHERE id = ?')
    assert.equal(point.sql, 'SELECT * FROM t WHERE id = ?')
    assert.equal(point.readonly, true)
    assert.deepStrictEqual(point.columnNames, ['id', 'a', 'b'])
    assert.deepStrictEqual(await point.selectOne([3]), { id: 3, a: 20, b: 'row 3' })
    assert.equal(await point.selectOne([99]), undefined)
    assert.deepStrictEqual(await point.select([4]), [{ id: 4, a: 30, b: 'row 4' }])
    assert.deepStrictEqual(await point.selectOne([5], { rowMode: 'array' }), {
      columns: ['id', 'a', 'b'],
      row: [5, 40, 'row 5'],
    })
    assert.equal((await point.selectBytes([6])).toString(), JSON.stringify([{ id: 6, a: 50, b: 'row 6' }]))
    assert.deepStrictEqual(await point.columns(), [
      { name: 'id', declaredType: 'INTEGER' },
      { name: 'a', declaredType: 'INTEGER' },
      { name: 'b', declaredType: 'TEXT' },
    ])

    const range = await db.prepare('SELECT id FROM t WHERE id BETWEEN :lo AND :hi ORDER BY id')
    assert.deepStrictEqual(await range.select({ lo: 2, hi: 4 }), [{ id: 2 }, { id: 3 }, { id: 4 }])
    assert.deepStrictEqual(await drain(range.iterate({ lo: 1, hi: 12 }, { pageRows: 5 })), [
      ...Array.from({ length: 12 }, (_, i) => ({ id: i + 1 })),
    ])

    const insert = await db.prepare('INSERT INTO t (a, b) VALUES (?, ?)')
    assert.equal(insert.readonly, false)
    assert.deepStrictEqual(insert.columnNames, [])
    assert.deepStrictEqual(await insert.execute([7, 'x']), { changes: 1, lastInsertRowid: 21 })
    assert.deepStrictEqual(
      await insert.executeBatch([
        [8, 'y'],
        [9, 'z'],
      ]),
      { changes: 2 },
    )
    assert.deepStrictEqual(await point.selectOne([23]), { id: 23, a: 9, b: 'z' })

    const returning = await db.prepare('UPDATE t SET a = a + 1 WHERE id = ? RETURNING id, a')
    assert.equal(returning.readonly, false)
    assert.deepStrictEqual(returning.columnNames, ['id', 'a'])
    assert.deepStrictEqual(await returning.execute([1]), { changes: 1, lastInsertRowid: 23, rows: [{ id: 1, a: 1 }] })

    // stream: a live query of the statement, re-run after a write changes it.
    const seen = []
    let changed
    const updated = new Promise((resolve) => (changed = resolve))
    let firstRun
    const ran = new Promise((resolve) => (firstRun = resolve))
    const stop = point.stream([2]).subscribe((rows) => {
      seen.push(rows)
      firstRun()
      if (rows[0].a === 111) changed()
    })
    // The write after the first run: issued at once, it could commit before that run (on a
    // reader with inlineBudget 0), which would then show it already (CI saw that once).
    await ran
    await db.execute('UPDATE t SET a = 111 WHERE id = 2')
    await updated
    stop()
    assert.deepStrictEqual(seen.at(0), [{ id: 2, a: 10, b: 'row 2' }])
    assert.deepStrictEqual(seen.at(-1), [{ id: 2, a: 111, b: 'row 2' }])
  })
}

test('sql, readonly and columnNames cannot be changed; columnNames is frozen', async (t) => {
  const db = await setUp(t)
  const s = await db.prepare('SELECT id FROM t')
  assert.throws(() => {
    s.sql = 'DELETE FROM t'
  }, TypeError)
  assert.throws(() => {
    s.readonly = false
  }, TypeError)
  assert.throws(() => s.columnNames.push('x'), TypeError)
  assert.equal(s.sql, 'SELECT id FROM t')
  assert.deepStrictEqual(s.columnNames, ['id'])
})

test('readonly is what select takes: BEGIN, a setting PRAGMA and writes are not; a report PRAGMA is', async (t) => {
  const db = await setUp(t)
  for (const [sql, reads] of [
    ['SELECT 1', true],
    ['PRAGMA table_info(t)', true],
    ['WITH x AS (SELECT 1 AS v) SELECT v FROM x', true],
    ['INSERT INTO t (a) VALUES (1)', false],
    ['DELETE FROM t', false],
    ['BEGIN', false],
    ['PRAGMA cache_size = 5', false],
    ['CREATE TABLE u (x)', false],
  ]) {
    assert.equal((await db.prepare(sql)).readonly, reads, sql)
  }
  // And select refuses what readonly says it does not take.
  const write = await db.prepare('DELETE FROM t WHERE id = ?')
  await expectReject(() => write.select([1]), ResqliteError, 'ERR_NOT_READ_ONLY')
  assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, 20)
})

test('preparing bad SQL rejects with the SQL error, and several statements are refused', async (t) => {
  const db = await setUp(t)
  await expectReject(() => db.prepare('SELEC 1'), ResqliteError, 'SQLITE_ERROR', /syntax error/)
  await expectReject(() => db.prepare('SELECT * FROM missing'), ResqliteError, 'SQLITE_ERROR', /no such table/)
  await expectReject(() => db.prepare('SELECT 1; SELECT 2'), ResqliteError, 'ERR_MULTIPLE_STATEMENTS')
  await expectReject(() => db.prepare('  -- nothing'), ResqliteError, 'ERR_EMPTY_STATEMENT')
  await expectReject(() => db.prepare('SELECT 1\0; DROP TABLE t'), ResqliteError, 'ERR_NUL_IN_SQL')
})

test('inside a transaction body its methods run in the transaction; outside they do not see it', async (t) => {
  const db = await setUp(t)
  const insert = await db.prepare('INSERT INTO t (id, a, b) VALUES (?, ?, ?)')
  const point = await db.prepare('SELECT a FROM t WHERE id = ?')
  const count = await db.prepare('SELECT count(*) AS n FROM t')
  let release
  const holding = new Promise((resolve) => (release = resolve))
  let inside
  const entered = new Promise((resolve) => (inside = resolve))
  const tx = db.transaction(async () => {
    await insert.execute([100, 1, 'in tx'])
    assert.deepStrictEqual(await point.selectOne([100]), { a: 1 }, 'the body sees its own write')
    assert.deepStrictEqual(await insert.executeBatch([[101, 2, 'b']]), { changes: 1 })
    assert.equal((await count.selectOne()).n, 22)
    assert.deepStrictEqual(await drain(point.iterate([101])), [{ a: 2 }])
    inside()
    await holding
  })
  await entered
  // Outside the body (this flow is not in it): committed data only.
  assert.equal(await point.selectOne([100]), undefined)
  assert.equal((await count.selectOne()).n, 20)
  release()
  await tx
  assert.equal((await count.selectOne()).n, 22)

  // A rollback undoes what the statements wrote in the body.
  await assert.rejects(
    db.transaction(async () => {
      await insert.execute([200, 3, 'gone'])
      throw new Error('roll back')
    }),
    /roll back/,
  )
  assert.equal(await point.selectOne([200]), undefined)

  // Nested: the statement runs in the savepoint.
  await db.transaction(async (outer) => {
    await outer
      .transaction(async () => {
        await insert.execute([300, 4, 'nested'])
        throw new Error('inner')
      })
      .catch(() => {})
    assert.equal(await point.selectOne([300]), undefined)
  })
})

test('transactions.md: a statement called later from a finished body’s async context is refused, not run outside', async (t) => {
  const db = await setUp(t)
  const insert = await db.prepare('INSERT INTO t (id, a, b) VALUES (?, ?, ?)')
  let later
  await db.transaction(async () => {
    await insert.execute([400, 1, 'in the body'])
    later = new Promise((resolve) => setTimeout(() => resolve(insert.execute([401, 2, 'too late'])), 20))
  })
  await expectReject(() => later, ResqliteError, 'ERR_TRANSACTION_FINISHED')
  assert.deepStrictEqual(await db.select('SELECT id FROM t WHERE id >= 400'), [{ id: 400 }])
})

test('prepare inside a transaction body sees the transaction’s schema', async (t) => {
  const db = await setUp(t)
  await db.transaction(async () => {
    await db.execute('CREATE TABLE made_here (x INTEGER)')
    const s = await db.prepare('SELECT x FROM made_here')
    assert.deepStrictEqual(s.columnNames, ['x'])
    const ins = await db.prepare('INSERT INTO made_here VALUES (?)')
    await ins.execute([5])
    assert.deepStrictEqual(await s.select(), [{ x: 5 }])
  })
})

test('used concurrently: many calls in flight each get their own result, in call order for writes', async (t) => {
  const db = await setUp(t)
  const point = await db.prepare('SELECT id, b FROM t WHERE id = ?')
  const results = await Promise.all(Array.from({ length: 200 }, (_, i) => point.selectOne([(i % 20) + 1])))
  for (const [i, row] of results.entries()) assert.deepStrictEqual(row, { id: (i % 20) + 1, b: `row ${(i % 20) + 1}` })

  const log = await db.prepare('INSERT INTO t (a, b) VALUES (?, ?) RETURNING id')
  const written = await Promise.all(Array.from({ length: 50 }, (_, i) => log.execute([i, 'c'])))
  assert.deepStrictEqual(
    written.map((r) => r.rows[0].id),
    Array.from({ length: 50 }, (_, i) => 21 + i),
  )
  // Two flows interleaving the same statement objects, reads seeing each flow's own writes.
  const upd = await db.prepare('UPDATE t SET a = ? WHERE id = ?')
  const get = await db.prepare('SELECT a FROM t WHERE id = ?')
  const flow = async (id) => {
    for (let v = 0; v < 20; v++) {
      upd.execute([v, id])
      assert.deepStrictEqual(await get.selectOne([id]), { a: v })
    }
  }
  await Promise.all([flow(1), flow(2), flow(3)])
})

test('executeBatch through a statement is all or nothing', async (t) => {
  const db = await setUp(t)
  const insert = await db.prepare('INSERT INTO t (id, a, b) VALUES (?, ?, ?)')
  await expectReject(
    () =>
      insert.executeBatch([
        [50, 1, 'a'],
        [51, 2, 'b'],
        [1, 3, 'duplicate id'],
      ]),
    ResqliteError,
    'SQLITE_CONSTRAINT_PRIMARYKEY',
  )
  assert.equal((await db.selectOne('SELECT count(*) AS n FROM t WHERE id >= 50')).n, 0)
  assert.deepStrictEqual(
    await insert.executeBatch([
      [50, 1, 'a'],
      [51, 2, 'b'],
    ]),
    { changes: 2 },
  )
})

test('after close every method rejects with ERR_DATABASE_CLOSED, and prepare too', async (t) => {
  const dir = tempDir(t)
  const db = await Database.open(path.join(dir, 'c.db'))
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  const read = await db.prepare('SELECT * FROM t WHERE id = ?')
  const write = await db.prepare('INSERT INTO t (v) VALUES (?)')
  const closing = db.close()
  // Called while the close is under way: refused already.
  await expectReject(() => read.selectOne([1]), ResqliteError, 'ERR_DATABASE_CLOSED')
  await closing
  for (const call of [
    () => read.select([1]),
    () => read.selectOne([1]),
    () => read.selectBytes([1]),
    () => read.columns(),
    () => write.execute([1]),
    () => write.executeBatch([[1]]),
    () => db.prepare('SELECT 1'),
  ]) {
    await expectReject(call, ResqliteError, 'ERR_DATABASE_CLOSED')
  }
  await assert.rejects(drain(read.iterate([1])), { code: 'ERR_DATABASE_CLOSED' })
  const error = await new Promise((resolve) => read.stream([1]).subscribe({ next: () => {}, error: resolve }))
  assert.equal(error.code, 'ERR_DATABASE_CLOSED')
  // The properties stay readable.
  assert.equal(read.sql, 'SELECT * FROM t WHERE id = ?')
  assert.deepStrictEqual(read.columnNames, ['id', 'v'])
})

test('a kept statement keeps neither its results nor a closed database alive', () => {
  const child = fileURLToPath(new URL('./statement-retention-child.mjs', import.meta.url))
  const out = JSON.parse(execFileSync(process.execPath, ['--expose-gc', child], { encoding: 'utf8' }))
  assert.equal(out.rowsCollected, true, 'a statement kept the rows of its last result alive')
  assert.equal(out.databaseCollected, true, 'a statement kept its closed database alive')
  assert.equal(out.stillRejects, 'ERR_DATABASE_CLOSED')
})
