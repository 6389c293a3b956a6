// Which transaction a call joins (docs/transactions.md): db.* calls inside a body are routed
// to it through AsyncLocalStorage, other databases and outside callers are not, and outside
// reads see only committed state.

import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import { test } from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import {
  assertError,
  deferred,
  INSERT,
  openTxDb,
  outsideContext,
  rejectionOf,
  sleep,
  T,
  tdb,
  track,
  transactionWithin,
  turns,
  values,
  withTimeout,
} from './tx-helpers.mjs'

test('db.* calls inside a body, directly and from helpers several awaits deep, go to the transaction', T, async (t) => {
  const db = await tdb(t)
  const runOutside = outsideContext()
  async function helper(depth) {
    if (depth > 0) {
      await turns(1)
      await sleep(1)
      await Promise.resolve()
      return helper(depth - 1)
    }
    await db.execute(INSERT, ['from helper'])
    return (await db.select('SELECT v FROM t ORDER BY id')).map((r) => r.v)
  }
  const result = await transactionWithin(
    db,
    async () => {
      await db.execute(INSERT, ['direct'])
      assert.deepStrictEqual(await db.select('SELECT v FROM t ORDER BY id'), [{ v: 'direct' }])
      assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n FROM t'), { n: 1 })
      assert.equal((await db.selectBytes('SELECT v FROM t ORDER BY id')).toString(), '[{"v":"direct"}]')
      assert.deepStrictEqual(await db.executeBatch(INSERT, [['batch 1'], ['batch 2']]), { changes: 2 })
      const seenByHelper = await helper(5)
      // from a timer callback scheduled inside the body
      const fromTimer = await new Promise((resolve, reject) =>
        setTimeout(
          () =>
            db
              .execute(INSERT, ['from timer'])
              .then(() => db.selectOne('SELECT count(*) AS n FROM t'))
              .then(resolve, reject),
          2,
        ),
      )
      // still not committed: a read outside the body sees nothing
      const outside = await runOutside(() => db.select('SELECT count(*) AS n FROM t'))
      return { seenByHelper, fromTimer, outside }
    },
    5000,
    'transaction calling db.* inside its body',
  )
  assert.deepStrictEqual(result, {
    seenByHelper: ['direct', 'batch 1', 'batch 2', 'from helper'],
    fromTimer: { n: 5 },
    outside: [{ n: 0 }],
  })
  assert.deepStrictEqual(await values(db), ['direct', 'batch 1', 'batch 2', 'from helper', 'from timer'])
})

test('db.transaction inside a body becomes a savepoint of the innermost transaction', T, async (t) => {
  const db = await tdb(t)
  const runOutside = outsideContext()
  async function deepInsert(v) {
    await turns(2)
    await sleep(1)
    return db.execute(INSERT, [v])
  }
  const r = await transactionWithin(
    db,
    async () => {
      await db.execute(INSERT, ['outer'])
      const inner = await db.transaction(async () => {
        await deepInsert('inner')
        // nested again through db.transaction, from a helper
        return db.transaction(async () => {
          await deepInsert('inner-inner')
          return 'inner-ret'
        })
      })
      assert.equal(inner, 'inner-ret')
      // a nested db.transaction is not a transaction of its own: nothing is committed yet
      assert.deepStrictEqual(await runOutside(() => db.select('SELECT count(*) AS n FROM t')), [{ n: 0 }])
      // a nested db.transaction that throws rolls back only itself, including what a helper wrote
      const boom = new Error('inner boom')
      const err = await rejectionOf(
        db.transaction(async () => {
          await deepInsert('discarded')
          await db.transaction(async () => deepInsert('discarded too'))
          throw boom
        }),
      )
      assert.equal(err, boom)
      assert.deepStrictEqual(
        (await db.select('SELECT v FROM t ORDER BY id')).map((x) => x.v),
        ['outer', 'inner', 'inner-inner'],
      )
      await deepInsert('outer again')
      return 'outer-ret'
    },
    5000,
    'transaction with nested db.transaction',
  )
  assert.equal(r, 'outer-ret')
  assert.deepStrictEqual(await values(db), ['outer', 'inner', 'inner-inner', 'outer again'])

  // an outer rollback discards what nested db.transaction calls committed into it
  const boom = new Error('outer boom')
  const err = await rejectionOf(
    transactionWithin(
      db,
      async () => {
        await db.transaction(async () => deepInsert('gone'))
        throw boom
      },
      5000,
      'transaction with a nested db.transaction, then a throw',
    ),
  )
  assert.equal(err, boom)
  assert.deepStrictEqual(await values(db), ['outer', 'inner', 'inner-inner', 'outer again'])
})

test('routing is per database: another Database used inside a body is not part of the transaction', T, async (t) => {
  const db = await tdb(t)
  const { db: other } = await openTxDb(t)
  await other.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  const boom = new Error('roll back db only')
  const err = await rejectionOf(
    transactionWithin(
      db,
      async (tx) => {
        await tx.execute(INSERT, ['db'])
        await other.execute(INSERT, ['other']) // commits on its own, at once
        assert.deepStrictEqual(await other.select('SELECT v FROM t'), [{ v: 'other' }])
        const inOther = await other.transaction(async (otx) => {
          await otx.execute(INSERT, ['other tx'])
          return 'other committed'
        })
        assert.equal(inOther, 'other committed')
        throw boom
      },
      5000,
      'transaction using a second database',
    ),
  )
  assert.equal(err, boom)
  assert.deepStrictEqual(await values(db), [])
  assert.deepStrictEqual(await values(other), ['other', 'other tx'])
})

test('two transactions started concurrently from outside any body run one after another', T, async (t) => {
  const db = await tdb(t)
  const log = []
  const body = (name) => async (tx) => {
    log.push(`enter ${name}`)
    await sleep(15)
    await tx.execute(INSERT, [name])
    await turns(2)
    const n = await tx.selectOne('SELECT count(*) AS n FROM t')
    await sleep(5)
    log.push(`exit ${name}`)
    return `${name}:${n.n}`
  }
  const results = await withTimeout(
    Promise.all([
      db.transaction(body('a')),
      db.transaction(body('b')),
      db.execute(INSERT, ['standalone']),
      db.transaction(body('c')),
    ]),
    10_000,
    'three concurrent transactions',
  )
  assert.deepStrictEqual(log, ['enter a', 'exit a', 'enter b', 'exit b', 'enter c', 'exit c'])
  assert.equal(results[0], 'a:1')
  assert.equal(results[1], 'b:2')
  assert.equal(results[3], 'c:4')
  assert.deepStrictEqual(await values(db), ['a', 'b', 'standalone', 'c'])
})

test('a db.* call from the async context of a finished transaction never joins a later transaction', T, async (t) => {
  const db = await tdb(t)
  let inFirstBody
  await db.transaction(async (tx) => {
    inFirstBody = AsyncLocalStorage.snapshot() // e.g. a callback scheduled in the body that runs later
    await tx.execute(INSERT, ['first'])
  })
  const boom = new Error('the second transaction rolls back')
  let leaked
  const err = await rejectionOf(
    transactionWithin(
      db,
      async (tx) => {
        leaked = track(inFirstBody(() => db.execute(INSERT, ['leaked'])))
        await sleep(20)
        assert.deepStrictEqual(
          (await tx.select('SELECT v FROM t ORDER BY id')).map((r) => r.v),
          ['first'],
          "a call from a finished transaction's context joined another transaction",
        )
        throw boom
      },
      5000,
      'the second transaction',
    ),
  )
  assert.equal(err, boom)
  await withTimeout(
    leaked.promise.catch(() => {}),
    5000,
    'the leaked call',
  )
  if (leaked.rejected) {
    assertError(leaked.error, ResqliteError, 'ERR_TRANSACTION_FINISHED')
    assert.deepStrictEqual(await values(db), ['first'])
  } else {
    assert.deepStrictEqual(await values(db), ['first', 'leaked']) // ran as a standalone write, after the rollback
  }
})

// ───────────────────────────── isolation ─────────────────────────────

test(
  'outside reads see the last committed state while a transaction is open; outside writes wait for it',
  T,
  async (t) => {
    const db = await tdb(t)
    await db.execute(INSERT, ['before'])
    const runOutside = outsideContext()
    const reached = deferred() // the body is open and has written
    const release = deferred() // the test lets the body finish
    // started outside any transaction: what they do after `reached` runs in this (outside) context
    const outsideRead = (async () => {
      await reached.promise
      return db.select('SELECT v FROM t ORDER BY id')
    })()
    let outsideWrite
    let outsideTx
    let outsideTxBodyRan = false
    const issued = (async () => {
      await reached.promise
      outsideWrite = track(db.execute("INSERT INTO t (v) SELECT 'outside:' || count(*) FROM t"))
      outsideTx = track(
        db.transaction(async (tx) => {
          outsideTxBodyRan = true
          await tx.execute("INSERT INTO t (v) SELECT 'outside tx:' || count(*) FROM t")
        }),
      )
    })()
    const txp = track(
      db.transaction(async (tx) => {
        await tx.execute(INSERT, ['in tx 1'])
        await tx.execute(INSERT, ['in tx 2'])
        reached.resolve()
        await release.promise
        await tx.execute(INSERT, ['in tx 3']) // after the outside write was queued: must not wait for it
        await db.execute(INSERT, ['in tx 4']) // routed, likewise
        return 'done'
      }),
    )
    await withTimeout(reached.promise, 5000, 'the transaction body')
    assert.deepStrictEqual(await withTimeout(outsideRead, 5000, 'an outside read'), [{ v: 'before' }])
    assert.deepStrictEqual(await runOutside(() => db.selectOne('SELECT count(*) AS n FROM t')), { n: 1 })
    assert.equal((await runOutside(() => db.selectBytes('SELECT v FROM t'))).toString(), '[{"v":"before"}]')
    await issued
    await sleep(150)
    assert.equal(
      outsideWrite.settled,
      false,
      `a standalone write issued during the transaction settled before it committed: ${outsideWrite.error ?? ''}`,
    )
    assert.equal(outsideTxBodyRan, false, 'a second transaction started while the first was open')
    assert.equal(txp.settled, false)
    assert.deepStrictEqual(await values(db), ['before'], 'the outside write must not have applied yet')

    release.resolve()
    assert.equal(await withTimeout(txp.promise, 5000, 'the transaction'), 'done')
    // after COMMIT, outside reads see the transaction's rows
    const afterCommit = await values(db)
    assert.deepStrictEqual(afterCommit.slice(0, 5), ['before', 'in tx 1', 'in tx 2', 'in tx 3', 'in tx 4'])
    await withTimeout(
      Promise.all([outsideWrite.promise, outsideTx.promise]),
      5000,
      'the queued outside write and transaction',
    )
    // the outside write ran after the commit (it counted 5 rows), then the outside transaction
    assert.deepStrictEqual(await values(db), [
      'before',
      'in tx 1',
      'in tx 2',
      'in tx 3',
      'in tx 4',
      'outside:5',
      'outside tx:6',
    ])
  },
)
