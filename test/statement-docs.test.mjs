// docs/api.md "prepare(sql)" is a contract: each test names the promise it checks. Promises
// checked elsewhere: every method, readonly, bad SQL, inside and outside a transaction body,
// after close and what a kept statement keeps alive (statement.test.mjs); bad arguments and
// the caller's frames (statement-bad-input.test.mjs).
import assert from 'node:assert/strict'
import test from 'node:test'
import { openDb, outcome } from './helpers.mjs'

test('api.md prepare: the example runs as shown', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)')
  await db.execute("INSERT INTO users (name) VALUES ('ada')")
  const byId = await db.prepare('SELECT id, name FROM users WHERE id = ?')
  assert.deepStrictEqual(byId.columnNames, ['id', 'name'])
  assert.deepStrictEqual(await byId.selectOne([1]), { id: 1, name: 'ada' })
  const insert = await db.prepare('INSERT INTO users (name) VALUES (?)')
  assert.deepStrictEqual(await insert.execute(['bob']), { changes: 1, lastInsertRowid: 2 })
  const seen = await db.transaction(async () => {
    await insert.execute(['cy'])
    return byId.selectOne([3])
  })
  assert.deepStrictEqual(seen, { id: 3, name: 'cy' })
})

test('api.md prepare: "it resolves asynchronously" (a promise, even for SQL that compiles)', async (t) => {
  const db = await openDb(t)
  const pending = db.prepare('SELECT 1 AS one')
  assert.equal(typeof pending.then, 'function')
  let settled = false
  pending.then(() => (settled = true))
  await null
  assert.equal(settled, false, 'compiling takes a connection on a thread: not settled within a microtask')
  assert.deepStrictEqual((await pending).columnNames, ['one'])
})

test('api.md prepare: the methods "take the same parameters and options, resolve with the same results and reject with the same errors"', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE, n REAL)')
  await db.executeBatch('INSERT INTO t VALUES (?, ?, ?)', [
    [1, 'a', 1.5],
    [2, 'b', null],
    [3, 'c', -0.25],
  ])
  const reads = [
    ['SELECT * FROM t WHERE id >= ? ORDER BY id', [2]],
    ['SELECT * FROM t WHERE v = :v', { v: 'c' }],
    ['SELECT * FROM t WHERE id = ?', [1, 2]],
    ['SELECT * FROM t WHERE id = ?', [true]],
    ['SELECT * FROM t WHERE v = :v', { w: 1 }],
  ]
  for (const [sql, params] of reads) {
    const s = await db.prepare(sql)
    for (const options of [undefined, { rowMode: 'array' }, { rowMode: 'bad' }, { nope: 1 }]) {
      assert.deepStrictEqual(await outcome(s.select(params, options)), await outcome(db.select(sql, params, options)))
      assert.deepStrictEqual(
        await outcome(s.selectOne(params, options)),
        await outcome(db.selectOne(sql, params, options)),
      )
    }
    assert.deepStrictEqual(await outcome(s.selectBytes(params)), await outcome(db.selectBytes(sql, params)))
    assert.deepStrictEqual(await outcome(s.columns()), await outcome(db.columns(sql)))
  }
  // Each write in a transaction rolled back afterwards, so both see the same table.
  const undone = async (write) => {
    let result
    await db
      .transaction(async () => {
        result = await outcome(write())
        throw new Error('undo')
      })
      .catch(() => {})
    return result
  }
  const writes = [
    ['INSERT INTO t (v) VALUES (?)', ['d']],
    ['INSERT INTO t (v) VALUES (?) RETURNING id, v', ['e']],
    ['INSERT INTO t (v) VALUES (?)', ['a']], // UNIQUE
    ['INSERT INTO t (v) VALUES (?)', [undefined]],
    ['UPDATE t SET n = ? WHERE id = ?', [2]],
  ]
  for (const [sql, params] of writes) {
    const s = await db.prepare(sql)
    assert.deepStrictEqual(await undone(() => s.execute(params)), await undone(() => db.execute(sql, params)))
  }
  const batch = await db.prepare('INSERT INTO t (v) VALUES (?)')
  assert.deepStrictEqual(
    await outcome(batch.executeBatch([['x'], ['a']])),
    await outcome(db.executeBatch('INSERT INTO t (v) VALUES (?)', [['x'], ['a']])),
  )
})

test('api.md prepare: after a schema change "the rows and columns() show the new columns", columnNames does not', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY)')
  await db.execute('INSERT INTO t VALUES (1)')
  const all = await db.prepare('SELECT * FROM t')
  assert.deepStrictEqual(all.columnNames, ['id'])
  await db.execute('ALTER TABLE t ADD COLUMN extra TEXT')
  assert.deepStrictEqual(await all.select(), [{ id: 1, extra: null }])
  assert.deepStrictEqual(
    (await all.columns()).map((c) => c.name),
    ['id', 'extra'],
  )
  assert.deepStrictEqual(all.columnNames, ['id'])
  assert.ok(Object.isFrozen(all.columnNames))
})

test('api.md prepare: "a call runs exactly where the same db.* call would" (the JS thread, or a thread with inlineBudget 0)', async (t) => {
  for (const [options, onJsThread] of [
    [undefined, true],
    [{ inlineBudget: 0 }, false],
  ]) {
    const db = await openDb(t, options)
    await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
    const s = await db.prepare('SELECT * FROM t WHERE id = ?')
    const before = (await db.diagnostics()).inline.runs
    await s.selectOne([1])
    await db.selectOne('SELECT * FROM t WHERE id = ?', [1])
    const runs = (await db.diagnostics()).inline.runs - before
    assert.equal(runs, onJsThread ? 2 : 0)
  }
})

test('api.md prepare: reads see "the writes their own flow issued", awaited or not', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  const insert = await db.prepare('INSERT INTO t (v) VALUES (?)')
  const count = await db.prepare('SELECT count(*) AS n FROM t')
  for (let i = 1; i <= 20; i++) {
    insert.execute([i]) // not awaited
    assert.deepStrictEqual(await count.selectOne(), { n: i })
  }
})

test('api.md prepare: "one evicted is compiled again on its next run" (more statements than the cache holds)', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  await db.execute('INSERT INTO t VALUES (1, 1)')
  const kept = await db.prepare('SELECT v FROM t WHERE id = ?')
  const many = []
  for (let i = 0; i < 300; i++) many.push(await db.prepare(`SELECT v + ${i} AS w FROM t WHERE id = ?`))
  for (const [i, s] of many.entries()) assert.deepStrictEqual(await s.selectOne([1]), { w: 1 + i })
  assert.deepStrictEqual(await kept.selectOne([1]), { v: 1 })
})
