// Another connection holding the write lock (docs/api.md `busyTimeout`, docs/values-and-errors.md
// "Errors"; issue 3 "Busy and locked").

import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, tempDir } from './helpers.mjs'

async function twoDatabases(t, options) {
  const file = path.join(tempDir(t), 'busy.db')
  const a = await Database.open(file, options)
  const b = await Database.open(file, options)
  t.after(async () => {
    await a.close()
    await b.close()
  })
  await a.execute('CREATE TABLE t (v)')
  return { a, b }
}

test('a write waits busyTimeout for a lock held elsewhere, then rejects SQLITE_BUSY naming the timeout', async (t) => {
  const { a, b } = await twoDatabases(t, { busyTimeout: 300 })
  let release
  const held = new Promise((resolve) => (release = resolve))
  const holder = b.transaction(
    async (tx) => {
      await tx.execute('INSERT INTO t VALUES (1)')
      await held
    },
    { mode: 'immediate' },
  )
  await new Promise((r) => setTimeout(r, 50))
  const t0 = performance.now()
  const err = await expectReject(
    () => a.execute('INSERT INTO t VALUES (2)'),
    ResqliteError,
    /^SQLITE_BUSY/,
    /busyTimeout = 300 ms/,
  )
  const waited = performance.now() - t0
  assert.ok(waited >= 250, `gave up after ${waited.toFixed(0)} ms, before the 300 ms busyTimeout`)
  assert.equal(err.sql, 'INSERT INTO t VALUES (2)')
  release()
  await holder
  // Once the lock is free, writes go through and nothing was lost or applied twice.
  await a.execute('INSERT INTO t VALUES (3)')
  assert.deepEqual(await a.select('SELECT v FROM t ORDER BY v'), [{ v: 1 }, { v: 3 }])
})

test('a deferred transaction that read, then writes after another connection wrote, gets SQLITE_BUSY_SNAPSHOT explained', async (t) => {
  const { a, b } = await twoDatabases(t, { busyTimeout: 200 })
  await a.execute('INSERT INTO t VALUES (0)')
  const err = await expectReject(
    () =>
      a.transaction(async (tx) => {
        await tx.select('SELECT count(*) FROM t') // the snapshot starts here
        await b.execute('INSERT INTO t VALUES (1)') // another connection commits past it
        await tx.execute('INSERT INTO t VALUES (2)') // cannot upgrade to a writer
      }),
    ResqliteError,
    'SQLITE_BUSY_SNAPSHOT',
    /mode 'immediate'/,
  )
  assert.ok(err.message.length > 0)
  assert.deepEqual(await a.select('SELECT v FROM t ORDER BY v'), [{ v: 0 }, { v: 1 }])
  // The same transaction begun 'immediate' takes the write lock up front and succeeds.
  await a.transaction(
    async (tx) => {
      await tx.select('SELECT count(*) FROM t')
      await tx.execute('INSERT INTO t VALUES (2)')
    },
    { mode: 'immediate' },
  )
  assert.deepEqual(await a.select('SELECT v FROM t ORDER BY v'), [{ v: 0 }, { v: 1 }, { v: 2 }])
})

test('an immediate transaction whose BEGIN times out rejects with SQLITE_BUSY before its body runs', async (t) => {
  const { a, b } = await twoDatabases(t, { busyTimeout: 150 })
  let release
  const held = new Promise((resolve) => (release = resolve))
  const holder = b.transaction(async () => held, { mode: 'immediate' })
  await new Promise((r) => setTimeout(r, 50))
  let bodyRan = false
  const err = await expectReject(
    () =>
      a.transaction(
        async (tx) => {
          bodyRan = true
          await tx.execute('INSERT INTO t VALUES (1)')
        },
        { mode: 'immediate' },
      ),
    ResqliteError,
    /^SQLITE_BUSY/,
    /busyTimeout = 150 ms/,
  )
  assert.equal(err.sql, 'BEGIN IMMEDIATE')
  assert.equal(bodyRan, false, 'the body ran although the transaction never began')
  release()
  await holder
  await a.transaction(async (tx) => tx.execute('INSERT INTO t VALUES (3)'))
  assert.deepEqual(await a.select('SELECT v FROM t ORDER BY v'), [{ v: 3 }])
})

test('execute() may not leave a transaction open; a statement ending db.transaction() is reported', async (t) => {
  const { a } = await twoDatabases(t, {})
  await expectReject(() => a.execute('BEGIN'), ResqliteError, 'ERR_OPEN_TRANSACTION', /db\.transaction/)
  await expectReject(
    () => a.execute('BEGIN; INSERT INTO t VALUES (1)'),
    ResqliteError,
    'ERR_OPEN_TRANSACTION',
    /rolled back/,
  )
  // A script that commits what it begins is fine (migrations).
  await a.execute('BEGIN; INSERT INTO t VALUES (2); COMMIT')
  // Nothing is left open: a transaction now begins and commits normally.
  await a.transaction(async (tx) => tx.execute('INSERT INTO t VALUES (3)'))
  const err = await expectReject(
    () =>
      a.transaction(async (tx) => {
        await tx.execute('INSERT INTO t VALUES (4)')
        await tx.execute('COMMIT')
      }),
    ResqliteError,
    'ERR_TRANSACTION_ROLLED_BACK',
    /rolled the transaction back/,
  )
  assert.equal(err.cause.code, 'ERR_TRANSACTION_CONTROL')
  // Nothing of the transaction that tried to end itself was committed (test/statement-kinds.test.mjs).
  assert.deepEqual(
    (await a.select('SELECT v FROM t ORDER BY v')).map((r) => r.v),
    [2, 3],
  )
  await a.execute('INSERT INTO t VALUES (5)')
  assert.deepEqual(
    (await a.select('SELECT v FROM t ORDER BY v')).map((r) => r.v),
    [2, 3, 5],
  )
})
