// db.iterate / tx.iterate (docs/api.md "iterate"): a query's rows a page at a time, on a
// connection of its own outside transactions (crates/engine/src/threads/cursors.rs).

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb } from './helpers.mjs'

async function numbers(t, n, options) {
  const db = await openDb(t, options)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, v)')
  await db.execute(
    `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${n})
     INSERT INTO t SELECT x, 'name-' || x, x * 0.5 FROM c`,
  )
  return db
}

async function collect(iterable) {
  const out = []
  for await (const x of iterable) out.push(x)
  return out
}

/** Rejects `promise`'s first step with `code` (an iteration is not a promise itself). */
async function rejects(iterable, Class, code) {
  await expectReject(() => collect(iterable), Class, code)
}

test('every value type through iterate equals select, across page boundaries', async (t) => {
  const db = await openDb(t, { safeIntegers: true })
  await db.execute('CREATE TABLE v (id INTEGER PRIMARY KEY, x)')
  const values = [
    null,
    0n,
    -1n,
    2n ** 62n,
    1.5,
    -0.0,
    'ascii',
    'é ü ✓ 😀',
    '',
    Buffer.from([0, 1, 255]),
    Buffer.alloc(0),
  ]
  for (let i = 0; i < 50; i++) await db.execute('INSERT INTO v (x) VALUES (?)', [values[i % values.length]])
  const all = await db.select('SELECT * FROM v ORDER BY id')
  for (const pageRows of [1, 3, 7, 50, 1000]) {
    assert.deepStrictEqual(
      await collect(db.iterate('SELECT * FROM v ORDER BY id', [], { pageRows })),
      all,
      `${pageRows}`,
    )
  }
})

test('pages() gives whole pages of pageRows rows, the last one shorter, none empty', async (t) => {
  const db = await numbers(t, 25)
  const pages = await collect(db.iterate('SELECT id FROM t WHERE id > ?', [0], { pageRows: 10 }).pages())
  assert.deepStrictEqual(
    pages.map((p) => p.length),
    [10, 10, 5],
  )
  assert.deepStrictEqual(
    pages.flat().map((r) => r.id),
    Array.from({ length: 25 }, (_, i) => i + 1),
  )
  const exact = await collect(db.iterate('SELECT id FROM t WHERE id <= 20', [], { pageRows: 10 }).pages())
  assert.deepStrictEqual(
    exact.map((p) => p.length),
    [10, 10],
    'a full last page, then nothing',
  )
  assert.deepStrictEqual(await collect(db.iterate('SELECT id FROM t WHERE 0').pages()), [], 'no rows: no page')
})

test('break, return() and a throw out of the loop free the statement: later reads on one reader go on', async (t) => {
  const db = await numbers(t, 5_000, { readers: 1, inlineBudget: 0 })
  for await (const row of db.iterate('SELECT * FROM t', [], { pageRows: 100 })) if (row.id === 150) break
  const it = db.iterate('SELECT * FROM t')[Symbol.asyncIterator]()
  assert.equal((await it.next()).value.id, 1)
  assert.deepStrictEqual(await it.return(), { value: undefined, done: true })
  await assert.rejects(async () => {
    for await (const row of db.iterate('SELECT * FROM t')) if (row.id === 3) throw new Error('body')
  }, /body/)
  // Many more than the engine keeps open connections for: each one ended.
  for (let i = 0; i < 20; i++) for await (const _ of db.iterate('SELECT * FROM t')) break
  assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS c FROM t'), { c: 5_000 })
})

test('reads awaited inside the loop body run while the iteration is open, on a one-reader database', async (t) => {
  const db = await numbers(t, 300, { readers: 1, inlineBudget: 0 })
  let sum = 0
  for await (const row of db.iterate('SELECT id FROM t', [], { pageRows: 7 })) {
    sum += (await db.selectOne('SELECT v FROM t WHERE id = ?', [row.id])).v
  }
  assert.equal(sum, (300 * 301) / 2 / 2)
})

test('one snapshot from first row to last: a write committed meanwhile is not seen, a later read sees it', async (t) => {
  const db = await numbers(t, 100)
  let seen = 0
  for await (const row of db.iterate('SELECT id FROM t', [], { pageRows: 10 })) {
    if (row.id === 5) await db.execute('INSERT INTO t (id, name) VALUES (1000, ?)', ['late'])
    seen++
  }
  assert.equal(seen, 100)
  assert.equal((await db.selectOne('SELECT count(*) AS c FROM t')).c, 101)
})

test('an abort ends the iteration with ABORT_ERR and frees the statement', async (t) => {
  const db = await numbers(t, 2_000, { readers: 1, inlineBudget: 0 })
  const controller = new AbortController()
  let n = 0
  await expectReject(
    async () => {
      for await (const _ of db.iterate('SELECT * FROM t', [], { pageRows: 100, signal: controller.signal })) {
        if (++n === 150) controller.abort()
      }
    },
    ResqliteError,
    'ABORT_ERR',
  )
  assert.equal(n, 200, 'the rows of the pages that had arrived, then the abort')
  const aborted = AbortSignal.abort()
  await rejects(db.iterate('SELECT * FROM t', [], { signal: aborted }), ResqliteError, 'ABORT_ERR')
  assert.equal((await db.selectOne('SELECT count(*) AS c FROM t')).c, 2_000)
})

test('misuse: a second reading, a write, bad SQL, bad options, after close', async (t) => {
  const db = await numbers(t, 10)
  const it = db.iterate('SELECT * FROM t')
  await collect(it)
  assert.throws(() => it[Symbol.asyncIterator](), { code: 'ERR_ITERATION_STARTED' })
  assert.throws(() => it.pages(), { code: 'ERR_ITERATION_STARTED' })
  const racing = db.iterate('SELECT * FROM t')
  racing[Symbol.asyncIterator]()
  assert.throws(() => racing.pages(), { code: 'ERR_ITERATION_STARTED' })
  await rejects(db.iterate('DELETE FROM t'), ResqliteError, 'ERR_NOT_READ_ONLY')
  await rejects(db.iterate('SELECT * FROM nope'), ResqliteError, 'SQLITE_ERROR')
  await rejects(db.iterate('SELECT 1; SELECT 2'), ResqliteError, 'ERR_MULTIPLE_STATEMENTS')
  await rejects(db.iterate('SELECT ?', []), ResqliteError, 'ERR_PARAMETER_COUNT')
  await rejects(db.iterate(42), TypeError, 'ERR_INVALID_ARG_TYPE')
  await rejects(db.iterate('SELECT 1', [], { pageRows: 0 }), RangeError, 'ERR_OUT_OF_RANGE')
  await rejects(db.iterate('SELECT 1', [], { pageRows: 1.5 }), TypeError, 'ERR_INVALID_ARG_TYPE')
  await rejects(db.iterate('SELECT 1', [], { signal: 'no' }), TypeError, 'ERR_INVALID_ARG_TYPE')
  assert.deepStrictEqual(await db.select('SELECT count(*) AS c FROM t'), [{ c: 10 }], 'nothing changed')
  const open = db.iterate('SELECT * FROM t', [], { pageRows: 2 })[Symbol.asyncIterator]()
  assert.equal((await open.next()).value.id, 1)
  await db.close()
  await rejects(db.iterate('SELECT 1'), ResqliteError, 'ERR_DATABASE_CLOSED')
  // The iteration open at close: the rows already here, then the close's error.
  await open.next()
  await expectReject(
    async () => {
      for (;;) if ((await open.next()).done) break
    },
    ResqliteError,
    'ERR_DATABASE_CLOSED',
  )
})

test('rekey waits for no open iteration: it is refused while one is open, and works after', async (t) => {
  const db = await numbers(t, 100)
  const it = db.iterate('SELECT * FROM t', [], { pageRows: 10 })[Symbol.asyncIterator]()
  await it.next()
  await expectReject(() => db.rekey('secret'), ResqliteError, 'ERR_ITERATION_OPEN')
  await it.return()
  // The end reaches the engine after the next page in flight: give it a moment.
  for (let i = 0; i < 50; i++) {
    try {
      await db.rekey('secret')
      break
    } catch (error) {
      assert.equal(error.code, 'ERR_ITERATION_OPEN')
      await new Promise((r) => setTimeout(r, 10))
    }
  }
  assert.equal((await collect(db.iterate('SELECT * FROM t'))).length, 100, 'iterations open with the new key')
})

test('inside a transaction: its uncommitted writes are seen, and the iteration ends with it', async (t) => {
  const db = await numbers(t, 20)
  let kept
  await db.transaction(async (tx) => {
    await tx.execute('DELETE FROM t WHERE id > 10')
    const rows = await collect(tx.iterate('SELECT id FROM t', [], { pageRows: 3 }))
    assert.equal(rows.length, 10)
    // db.iterate inside the body is the transaction's too.
    assert.equal((await collect(db.iterate('SELECT id FROM t', [], { pageRows: 4 }))).length, 10)
    kept = tx.iterate('SELECT id FROM t', [], { pageRows: 2 })[Symbol.asyncIterator]()
    assert.equal((await kept.next()).value.id, 1)
  })
  // The rows of the pages that had arrived (the one asked for ahead included), then the error.
  let after = 0
  await expectReject(
    async () => {
      while (!(await kept.next()).done) after++
    },
    ResqliteError,
    'ERR_TRANSACTION_FINISHED',
  )
  assert.ok(after <= 3, `${after} rows after the transaction ended`)
  assert.equal((await db.selectOne('SELECT count(*) AS c FROM t')).c, 10, 'committed')
  await expectReject(
    () =>
      db.transaction(async (tx) => {
        for await (const _ of tx.iterate('SELECT id FROM t', [], { pageRows: 2 })) {
          await tx.execute('INSERT INTO t (id) VALUES (?)', [1]) // a constraint error
        }
      }),
    ResqliteError,
    'SQLITE_CONSTRAINT_PRIMARYKEY',
  )
  assert.equal((await db.selectOne('SELECT count(*) AS c FROM t')).c, 10, 'rolled back')
})
