// db.transaction (docs/transactions.md): commit and the body's return value, the tx methods,
// call order, modes, un-awaited statements, and executeBatch as part of a transaction.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject } from './helpers.mjs'
import {
  assertError,
  count,
  INSERT,
  openTxDb,
  outsideContext,
  rejectionOf,
  sleep,
  T,
  tdb,
  values,
  withTimeout,
} from './tx-helpers.mjs'

test("transaction resolves with the body's return value after COMMIT", T, async (t) => {
  const db = await tdb(t)
  const ret = { answer: 42 }
  let runs = 0
  const r = await db.transaction(async (tx) => {
    runs++
    assert.equal(typeof tx, 'object')
    await tx.execute(INSERT, ['a'])
    await tx.execute(INSERT, ['b'])
    return ret
  })
  assert.equal(r, ret, 'the transaction must resolve with the very object the body returned')
  assert.equal(runs, 1, 'the body runs exactly once')
  // committed: a reader connection sees it as soon as the transaction has resolved
  assert.deepStrictEqual(await values(db), ['a', 'b'])
  assert.equal(await db.transaction(async () => {}), undefined)
  assert.equal(await db.transaction(async (tx) => (await tx.selectOne('SELECT count(*) AS n FROM t')).n * 10), 20)
})

// BEGIN and SAVEPOINT are sent without waiting for them (experiments/014, 031): levels that
// wait before their first statement, or send none, must still end.
test('levels that wait before their first statement, or send none, commit', T, async (t) => {
  const db = await tdb(t)
  const r = await withTimeout(
    db.transaction(async (tx) => {
      await sleep(20)
      const empty = await tx.transaction(async () => 'empty savepoint')
      const late = await tx.transaction(async (sp) => {
        await sleep(10)
        await sp.execute(INSERT, ['late'])
        return 'late'
      })
      await tx.transaction(async (sp) => sp.transaction(async () => {}))
      return [empty, late]
    }),
    5000,
    'the transaction',
  )
  assert.deepStrictEqual(r, ['empty savepoint', 'late'])
  assert.deepStrictEqual(await values(db), ['late'])
  assert.equal(
    await withTimeout(
      db.transaction(async () => 'no statement at all'),
      5000,
      'an empty transaction',
    ),
    'no statement at all',
  )
})

test("tx.select / selectOne / selectBytes / execute / executeBatch see the transaction's own writes", T, async (t) => {
  const db = await tdb(t)
  const runOutside = outsideContext()
  await db.transaction(async (tx) => {
    assert.deepStrictEqual(await tx.execute(INSERT, ['a']), { changes: 1, lastInsertRowid: 1 })
    assert.deepStrictEqual(await tx.executeBatch('INSERT INTO t (v) VALUES (:v)', [{ v: 'b' }, { v: 'c' }]), {
      changes: 2,
    })
    assert.deepStrictEqual(await tx.select('SELECT id, v FROM t ORDER BY id'), [
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
      { id: 3, v: 'c' },
    ])
    assert.deepStrictEqual(await tx.select('SELECT v FROM t WHERE id = $id', { id: 2 }), [{ v: 'b' }])
    assert.deepStrictEqual(await tx.selectOne('SELECT count(*) AS n FROM t'), { n: 3 })
    assert.equal(await tx.selectOne('SELECT v FROM t WHERE id = ?', [99]), undefined)
    const bytes = await tx.selectBytes('SELECT id, v FROM t ORDER BY id')
    assert.ok(Buffer.isBuffer(bytes))
    assert.equal(bytes.toString(), '[{"id":1,"v":"a"},{"id":2,"v":"b"},{"id":3,"v":"c"}]')
    const up = await tx.execute('UPDATE t SET v = v || ? WHERE id > ?', ['!', 1])
    assert.equal(up.changes, 2)
    // several statements without parameters run them all, inside the transaction
    await tx.execute("INSERT INTO t (v) VALUES ('d'); INSERT INTO t (v) VALUES ('e')")
    assert.deepStrictEqual(
      (await tx.select('SELECT v FROM t ORDER BY id')).map((r) => r.v),
      ['a', 'b!', 'c!', 'd', 'e'],
    )
    // nothing is visible outside before COMMIT
    assert.deepStrictEqual(await runOutside(() => db.select('SELECT count(*) AS n FROM t')), [{ n: 0 }])
  })
  assert.deepStrictEqual(await values(db), ['a', 'b!', 'c!', 'd', 'e'])
})

test('tx.select on the writer connection still refuses a statement that writes', T, async (t) => {
  const db = await tdb(t)
  await db.transaction(async (tx) => {
    await expectReject(() => tx.select("INSERT INTO t (v) VALUES ('sneaky')"), ResqliteError, 'ERR_NOT_READ_ONLY')
    await expectReject(() => tx.selectOne('DELETE FROM t'), ResqliteError, 'ERR_NOT_READ_ONLY')
    await tx.execute(INSERT, ['ok'])
  })
  assert.deepStrictEqual(await values(db), ['ok'])
})

test('tx calls issued without awaiting each one run in call order', T, async (t) => {
  const db = await tdb(t)
  const results = await db.transaction(async (tx) =>
    Promise.all([
      tx.execute(INSERT, ['1']),
      tx.execute(INSERT, ['2']),
      tx.select('SELECT v FROM t ORDER BY id'),
      tx.execute(INSERT, ['3']),
      tx.selectOne('SELECT count(*) AS n FROM t'),
    ]),
  )
  assert.deepStrictEqual(results[2], [{ v: '1' }, { v: '2' }])
  assert.deepStrictEqual(results[4], { n: 3 })
  assert.deepStrictEqual(await values(db), ['1', '2', '3'])
})

test('modes deferred, immediate, exclusive and the default all commit', T, async (t) => {
  const db = await tdb(t)
  for (const mode of [undefined, 'deferred', 'immediate', 'exclusive']) {
    const options = mode === undefined ? undefined : { mode }
    const r = await db.transaction(async (tx) => {
      await tx.execute(INSERT, [String(mode)])
      return (await tx.selectOne('SELECT count(*) AS n FROM t')).n
    }, options)
    assert.equal(typeof r, 'number', `mode ${mode}`)
  }
  // { mode } absent from a present options object, and { signal } alone
  await db.transaction(async (tx) => tx.execute(INSERT, ['empty-options']), {})
  await db.transaction(async (tx) => tx.execute(INSERT, ['signal-only']), { signal: new AbortController().signal })
  assert.deepStrictEqual(await values(db), [
    'undefined',
    'deferred',
    'immediate',
    'exclusive',
    'empty-options',
    'signal-only',
  ])
})

test('immediate and exclusive take the write lock at BEGIN; deferred (the default) does not', T, async (t) => {
  const { db, file } = await openTxDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  // a second Database on the same file: its own writer connection, failing at once on a lock
  const other = await Database.open(file, { busyTimeout: 0, readers: 1 })
  t.after(() => other.close())
  const runOutside = outsideContext()
  for (const mode of ['immediate', 'exclusive']) {
    await db.transaction(
      async (tx) => {
        // nothing written yet: the lock must already be held
        const err = await rejectionOf(
          runOutside(() => other.execute(INSERT, [`other during ${mode}`])),
          `other.execute during ${mode}`,
        )
        assertError(err, ResqliteError, /^SQLITE_BUSY/)
        await tx.execute(INSERT, [mode])
      },
      { mode },
    )
  }
  for (const options of [{ mode: 'deferred' }, undefined]) {
    const label = options ? 'deferred' : 'default'
    await db.transaction(async (tx) => {
      await runOutside(() => other.execute(INSERT, [`other during ${label}`]))
      await tx.execute(INSERT, [label])
    }, options)
  }
  assert.deepStrictEqual(await values(db), [
    'immediate',
    'exclusive',
    'other during deferred',
    'deferred',
    'other during default',
    'default',
  ])
})

test('statements and savepoints the body started but did not await are part of the transaction', T, async (t) => {
  const db = await tdb(t)
  let pending
  const r = await withTimeout(
    db.transaction(async (tx) => {
      pending = [
        tx.execute(INSERT, ['not awaited']),
        tx.transaction(async (sp) => {
          await sleep(20)
          await sp.execute(INSERT, ['savepoint not awaited'])
          return 'sp'
        }),
        db.execute(INSERT, ['routed, not awaited']),
      ]
      return 'returned early'
    }),
    5000,
    'a transaction with un-awaited statements',
  )
  assert.equal(r, 'returned early')
  const settled = await Promise.allSettled(pending)
  for (const s of settled) assert.equal(s.status, 'fulfilled', `${s.reason?.stack ?? ''}`)
  assert.equal(settled[1].value, 'sp')
  assert.deepStrictEqual(await values(db), ['not awaited', 'savepoint not awaited', 'routed, not awaited'])
})

// ───────────────────────────── executeBatch joins the transaction ─────────────────────────────

test(
  'executeBatch inside a transaction joins it: visible to the tx, not outside until COMMIT, rolled back with it',
  T,
  async (t) => {
    const db = await tdb(t)
    const runOutside = outsideContext()
    await db.execute(INSERT, ['pre'])
    await db.transaction(async (tx) => {
      assert.deepStrictEqual(await tx.executeBatch(INSERT, [['b1'], ['b2'], ['b3']]), { changes: 3 })
      assert.deepStrictEqual(await db.executeBatch(INSERT, [['r1'], ['r2']]), { changes: 2 }) // routed
      assert.deepStrictEqual(
        (await tx.select('SELECT v FROM t ORDER BY id')).map((r) => r.v),
        ['pre', 'b1', 'b2', 'b3', 'r1', 'r2'],
      )
      assert.deepStrictEqual(await runOutside(() => values(db)), ['pre'])
      const many = Array.from({ length: 2000 }, (_, i) => [`m${i}`])
      assert.deepStrictEqual(await tx.executeBatch(INSERT, many), { changes: 2000 })
      assert.deepStrictEqual(await runOutside(() => count(db)), 1)
    })
    assert.equal(await count(db), 2006)

    const boom = new Error('roll back the batches')
    const err = await rejectionOf(
      db.transaction(async (tx) => {
        await tx.executeBatch(INSERT, [['x1'], ['x2']])
        await tx.transaction(async (sp) => sp.executeBatch(INSERT, [['x3']]))
        throw boom
      }),
    )
    assert.equal(err, boom)
    assert.equal(await count(db), 2006)
    // a batch inside a savepoint that rolls back goes with the savepoint only
    await db.transaction(async (tx) => {
      await rejectionOf(
        tx.transaction(async (sp) => {
          await sp.executeBatch(INSERT, [['sp1'], ['sp2']])
          throw new Error('savepoint only')
        }),
      )
      await tx.executeBatch(INSERT, [['kept']])
    })
    const last = await db.select('SELECT v FROM t ORDER BY id DESC LIMIT 2')
    assert.deepStrictEqual(last, [{ v: 'kept' }, { v: 'm1999' }])
  },
)

test('executeBatch with no parameter sets resolves { changes: 0 }, inside and outside a transaction', T, async (t) => {
  const db = await tdb(t)
  assert.deepStrictEqual(await db.executeBatch(INSERT, []), { changes: 0 })
  const r = await db.transaction(async (tx) => {
    await tx.execute(INSERT, ['x'])
    const empty = await tx.executeBatch(INSERT, [])
    await tx.execute(INSERT, ['y'])
    return empty
  })
  assert.deepStrictEqual(r, { changes: 0 })
  assert.deepStrictEqual(await values(db), ['x', 'y'])
})
