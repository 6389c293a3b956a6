// What db.transaction refuses (docs/transactions.md): a bad body or options, a tx used after
// its body finished, a closed or readonly database; and close() while a transaction is open.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject } from './helpers.mjs'
import {
  deferred,
  INSERT,
  openTxDb,
  rejectionOf,
  sleep,
  T,
  tdb,
  track,
  turns,
  values,
  withTimeout,
} from './tx-helpers.mjs'

test('a body that is not a function is a TypeError', T, async (t) => {
  const db = await tdb(t)
  for (const bad of [undefined, null, 'INSERT INTO t (v) VALUES (1)', 42, {}, Promise.resolve()]) {
    await expectReject(() => db.transaction(bad), TypeError, 'ERR_INVALID_ARG_TYPE', /body|function/i)
  }
  await db.transaction(async (tx) => {
    await expectReject(() => tx.transaction('nope'), TypeError, 'ERR_INVALID_ARG_TYPE', /body|function/i)
    await tx.execute(INSERT, ['outer still usable'])
  })
  assert.deepStrictEqual(await values(db), ['outer still usable'])
})

test('a body that does not return a promise is a TypeError and nothing is committed', T, async (t) => {
  const db = await tdb(t)
  let ran = 0
  let leakedWrite
  await expectReject(
    () =>
      db.transaction((tx) => {
        ran++
        leakedWrite = track(tx.execute(INSERT, ['from a sync body']))
        return 42
      }),
    TypeError,
    /^ERR_INVALID_(ARG_TYPE|ARG_VALUE|RETURN_VALUE)$/,
    /promise|async/i,
  )
  assert.equal(ran, 1)
  await withTimeout(
    leakedWrite.promise.catch(() => {}),
    5000,
    "the sync body's write",
  )
  await turns()
  assert.deepStrictEqual(await values(db), [], "a sync body's writes must not be committed")
  // the same for a nested body
  await db.transaction(async (tx) => {
    await expectReject(
      () => tx.transaction(() => 'not a promise'),
      TypeError,
      /^ERR_INVALID_(ARG_TYPE|ARG_VALUE|RETURN_VALUE)$/,
      /promise|async/i,
    )
    await tx.execute(INSERT, ['outer'])
  })
  assert.deepStrictEqual(await values(db), ['outer'])
  // a plain (non-async) function that returns a promise is a valid body
  assert.deepStrictEqual(await db.transaction((tx) => tx.execute(INSERT, ['plain fn'])), {
    changes: 1,
    lastInsertRowid: 2,
  })
  assert.deepStrictEqual(await values(db), ['outer', 'plain fn'])
})

test('a tx used after its body finished rejects ERR_TRANSACTION_FINISHED', T, async (t) => {
  const db = await tdb(t)
  let leaked
  await db.transaction(async (tx) => {
    leaked = tx
    await tx.execute(INSERT, ['ok'])
  })
  let nestedRan = false
  const calls = {
    execute: () => leaked.execute(INSERT, ['late']),
    executeBatch: () => leaked.executeBatch(INSERT, [['late batch']]),
    select: () => leaked.select('SELECT v FROM t'),
    selectOne: () => leaked.selectOne('SELECT v FROM t'),
    selectBytes: () => leaked.selectBytes('SELECT v FROM t'),
    transaction: () =>
      leaked.transaction(async (sp) => {
        nestedRan = true
        await sp.execute(INSERT, ['late nested'])
      }),
  }
  for (const [name, call] of Object.entries(calls)) {
    const e = await expectReject(call, ResqliteError, 'ERR_TRANSACTION_FINISHED', /finish/i)
    assert.ok(e, name)
  }
  // leaked from a rolled-back transaction
  let leaked2
  await rejectionOf(
    db.transaction(async (tx) => {
      leaked2 = tx
      throw new Error('roll back')
    }),
  )
  await expectReject(() => leaked2.execute(INSERT, ['late 2']), ResqliteError, 'ERR_TRANSACTION_FINISHED', /finish/i)
  await expectReject(
    () =>
      leaked2.transaction(async () => {
        nestedRan = true
      }),
    ResqliteError,
    'ERR_TRANSACTION_FINISHED',
    /finish/i,
  )
  // a leaked tx used while another transaction is open must not write into that one
  await db.transaction(async (tx) => {
    await expectReject(() => leaked.execute(INSERT, ['late 3']), ResqliteError, 'ERR_TRANSACTION_FINISHED', /finish/i)
    await tx.execute(INSERT, ['second'])
  })
  // a nested tx leaked while its parent is still open
  await db.transaction(async (tx) => {
    let inner
    await tx.transaction(async (sp) => {
      inner = sp
      await sp.execute(INSERT, ['inner'])
    })
    await expectReject(
      () => inner.execute(INSERT, ['late inner']),
      ResqliteError,
      'ERR_TRANSACTION_FINISHED',
      /finish/i,
    )
    await expectReject(() => inner.select('SELECT v FROM t'), ResqliteError, 'ERR_TRANSACTION_FINISHED', /finish/i)
    await expectReject(
      () =>
        inner.transaction(async () => {
          nestedRan = true
        }),
      ResqliteError,
      'ERR_TRANSACTION_FINISHED',
      /finish/i,
    )
    await tx.execute(INSERT, ['outer after inner'])
  })
  assert.equal(nestedRan, false, 'a nested body on a finished parent must not run')
  assert.deepStrictEqual(await values(db), ['ok', 'second', 'inner', 'outer after inner'])
})

test('bad options: unknown mode, mode on a nested transaction, a non-AbortSignal signal', T, async (t) => {
  const db = await tdb(t)
  let ran = false
  const body = async (tx) => {
    ran = true
    await tx.execute(INSERT, ['must not commit'])
  }
  const e = await rejectionOf(db.transaction(body, { mode: 'weird' }))
  assert.ok(e instanceof TypeError || e instanceof RangeError, `expected TypeError or RangeError, got ${e?.stack ?? e}`)
  assert.match(String(e.code), /^ERR_(INVALID_ARG_VALUE|INVALID_ARG_TYPE|OUT_OF_RANGE)$/)
  // It lists the modes and does not echo the value given (docs/values-and-errors.md).
  assert.doesNotMatch(e.message, /weird/)
  assert.match(e.message, /mode must be 'deferred', 'immediate' or 'exclusive'/)
  await expectReject(() => db.transaction(body, { mode: 5 }), TypeError, /^ERR_INVALID_ARG_(TYPE|VALUE)$/, /mode/)
  await expectReject(() => db.transaction(body, { signal: 'abort' }), TypeError, 'ERR_INVALID_ARG_TYPE', /signal/)
  await expectReject(() => db.transaction(body, 'immediate'), TypeError, 'ERR_INVALID_ARG_TYPE', /options/)
  assert.equal(ran, false, 'the body must not run when the options are bad')
  await db.transaction(async (tx) => {
    await expectReject(
      () =>
        tx.transaction(
          async (sp) => {
            ran = true
            await sp.execute(INSERT, ['nested must not run'])
          },
          { mode: 'immediate' },
        ),
      TypeError,
      /^ERR_INVALID_ARG_(TYPE|VALUE)$/,
      /mode/,
    )
    await tx.execute(INSERT, ['outer'])
  })
  assert.equal(ran, false)
  assert.deepStrictEqual(await values(db), ['outer'])
})

test('db.transaction after close() rejects ERR_DATABASE_CLOSED without running the body', T, async (t) => {
  const { db } = await openTxDb(t)
  await db.close()
  let ran = false
  await expectReject(
    () =>
      db.transaction(async () => {
        ran = true
      }),
    ResqliteError,
    'ERR_DATABASE_CLOSED',
    /closed/,
  )
  await turns()
  assert.equal(ran, false)
})

test(
  'close() while a transaction is open waits for it to commit; calls from outside after close() reject',
  T,
  async (t) => {
    const { db, file } = await openTxDb(t)
    await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
    const reached = deferred()
    const release = deferred()
    const txp = track(
      db.transaction(async (tx) => {
        await tx.execute(INSERT, ['before close'])
        reached.resolve()
        await release.promise
        await tx.execute(INSERT, ['after close']) // the open transaction may still finish its work
        await db.execute(INSERT, ['routed after close'])
        return (await tx.selectOne('SELECT count(*) AS n FROM t')).n
      }),
    )
    await withTimeout(reached.promise, 5000, 'the body')
    const closing = track(db.close())
    await expectReject(
      () => db.execute(INSERT, ['outside after close']),
      ResqliteError,
      'ERR_DATABASE_CLOSED',
      /closed/,
    )
    await expectReject(
      () => db.transaction(async (tx) => tx.execute(INSERT, ['tx after close'])),
      ResqliteError,
      'ERR_DATABASE_CLOSED',
      /closed/,
    )
    await sleep(50)
    assert.equal(closing.settled, false, 'close() finished while a transaction was still open')
    release.resolve()
    assert.equal(await withTimeout(txp.promise, 5000, 'the transaction open at close()'), 3)
    await withTimeout(closing.promise, 5000, 'close()')
    const reopened = await Database.open(file)
    try {
      assert.deepStrictEqual(await values(reopened), ['before close', 'after close', 'routed after close'])
    } finally {
      await reopened.close()
    }
  },
)

test('db.transaction on a readonly database rejects ERR_DATABASE_READONLY without running the body', T, async (t) => {
  const { db, file } = await openTxDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  const ro = await Database.open(file, { readonly: true, readers: 1 })
  t.after(() => ro.close())
  let ran = false
  await expectReject(
    () =>
      ro.transaction(async () => {
        ran = true
      }),
    ResqliteError,
    'ERR_DATABASE_READONLY',
    /readonly|read-only/i,
  )
  await turns()
  assert.equal(ran, false)
  assert.deepStrictEqual(await ro.select('SELECT count(*) AS n FROM t'), [{ n: 0 }])
})
