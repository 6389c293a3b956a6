// Aborting a transaction with its signal (docs/transactions.md): before it starts, while its
// body or a savepoint awaits, while it waits for its turn, while a statement runs.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { ENDLESS_SQL, expectReject } from './helpers.mjs'
import {
  assertError,
  deferred,
  INSERT,
  rejectionOf,
  sleep,
  T,
  tdb,
  track,
  turns,
  values,
  withTimeout,
} from './tx-helpers.mjs'

test('an already-aborted signal rejects with ABORT_ERR and the body does not run', T, async (t) => {
  const db = await tdb(t)
  const ac = new AbortController()
  const reason = new Error('not needed')
  ac.abort(reason)
  let ran = false
  const err = await expectReject(
    () =>
      db.transaction(
        async (tx) => {
          ran = true
          await tx.execute(INSERT, ['x'])
        },
        { signal: ac.signal },
      ),
    ResqliteError,
    'ABORT_ERR',
    /abort/i,
  )
  assert.equal(err.cause, reason)
  await turns()
  assert.equal(ran, false)
  assert.deepStrictEqual(await values(db), [])
  await db.transaction(async (tx) => tx.execute(INSERT, ['ok']))
  assert.deepStrictEqual(await values(db), ['ok'])
})

/** Aborts a transaction whose body (or, with `nested`, a savepoint body inside it) awaits a
 * promise the test controls; checks the rejection, the rollback and the freed writer. */
async function abortWhileAwaiting(t, nested) {
  const where = nested ? 'inside a savepoint' : 'in the outer body'
  const db = await tdb(t)
  const ac = new AbortController()
  const reached = deferred()
  const hold = deferred()
  const bodyDone = deferred()
  const later = {}
  async function wait(tx) {
    reached.resolve()
    await hold.promise // the body does not go on until the test lets it
    later.execute = await rejectionOf(tx.execute(INSERT, ['after abort']))
    later.select = await rejectionOf(tx.select('SELECT v FROM t'))
    later.transaction = await rejectionOf(tx.transaction(async (sp) => sp.execute(INSERT, ['nested after abort'])))
    later.routed = await rejectionOf(db.execute(INSERT, ['routed after abort']))
  }
  const txp = db.transaction(
    async (tx) => {
      try {
        await tx.execute(INSERT, ['a'])
        await tx.transaction(async (sp) => sp.execute(INSERT, ['released savepoint']))
        if (nested) {
          await rejectionOf(
            tx.transaction(async (sp) => {
              await sp.execute(INSERT, ['open savepoint'])
              await wait(sp)
            }),
          )
          later.outerAfterNested = await rejectionOf(tx.execute(INSERT, ['outer after abort']))
        } else {
          await wait(tx)
        }
      } finally {
        bodyDone.resolve()
      }
    },
    { signal: ac.signal },
  )
  const state = track(txp)
  await withTimeout(reached.promise, 5000, 'the body')
  const reason = new Error('user cancelled')
  ac.abort(reason)
  // It rejects while the body still waits (the test lets it go on only below): not timed, so
  // the machine's load cannot fail it.
  const err = await rejectionOf(withTimeout(txp, 5000, 'the aborted transaction'))
  assertError(err, ResqliteError, 'ABORT_ERR', /abort/i)
  assert.equal(err.cause, reason, where)
  assert.equal(state.rejected, true)
  // rolled back, and the writer is free although the body has not finished
  assert.deepStrictEqual(await values(db), [], where)
  await withTimeout(db.execute(INSERT, ['later']), 3000, `${where}: a write after the abort`)
  await withTimeout(
    db.transaction(async (tx) => tx.execute(INSERT, ['later tx'])),
    3000,
    `${where}: a transaction after the abort`,
  )
  assert.deepStrictEqual(await values(db), ['later', 'later tx'], where)
  // the body goes on: every tx call rejects and writes nothing
  hold.resolve()
  await withTimeout(bodyDone.promise, 5000, `${where}: the rest of the aborted body`)
  assert.ok(Object.keys(later).length >= 4, where)
  for (const [name, e] of Object.entries(later)) {
    assert.ok(e instanceof ResqliteError, `${where}, ${name}: expected a ResqliteError, got ${e?.stack ?? e}`)
    assert.match(
      e.code,
      /^(ABORT_ERR|ERR_TRANSACTION_FINISHED|ERR_TRANSACTION_ROLLED_BACK)$/,
      `${where}, ${name}: ${e.message}`,
    )
  }
  await turns()
  assert.deepStrictEqual(await values(db), ['later', 'later tx'], where)
}

test(
  "aborting while the body awaits rejects promptly, rolls back, frees the writer; the body's later tx calls reject",
  T,
  async (t) => {
    await abortWhileAwaiting(t, false)
  },
)

test('aborting while a savepoint body awaits rolls back the whole transaction', T, async (t) => {
  await abortWhileAwaiting(t, true)
})

test('aborting a transaction still waiting for its turn rejects at once; the queue behind it goes on', T, async (t) => {
  const db = await tdb(t)
  const hold = deferred()
  const first = track(
    db.transaction(async (tx) => {
      await tx.execute(INSERT, ['first'])
      await hold.promise
    }),
  )
  const ac = new AbortController()
  let abortedRan = false
  const aborted = track(
    db.transaction(
      async (tx) => {
        abortedRan = true
        await tx.execute(INSERT, ['aborted'])
      },
      { signal: ac.signal },
    ),
  )
  const third = db.transaction(async (tx) => tx.execute(INSERT, ['third']))
  const fourth = db.execute(INSERT, ['fourth'])
  await sleep(20)
  const reason = new Error('gave up waiting')
  ac.abort(reason)
  const err = await rejectionOf(withTimeout(aborted.promise, 1000, 'the queued, aborted transaction'))
  assertError(err, ResqliteError, 'ABORT_ERR', /abort/i)
  assert.equal(err.cause, reason)
  assert.equal(first.settled, false, 'the first transaction is still open')
  hold.resolve()
  await withTimeout(Promise.all([first.promise, third, fourth]), 5000, 'the rest of the queue')
  assert.equal(abortedRan, false, "an aborted transaction's body must never run")
  assert.deepStrictEqual(await values(db), ['first', 'third', 'fourth'])
})

test('aborting while a long statement of the transaction runs rejects and rolls back', T, async (t) => {
  const db = await tdb(t, { readers: 1 })
  const ac = new AbortController()
  const started = deferred()
  let slow
  const txp = db.transaction(
    async (tx) => {
      await tx.execute(INSERT, ['a'])
      started.resolve()
      slow = track(tx.select(ENDLESS_SQL))
      await slow.promise
      await tx.execute(INSERT, ['b'])
    },
    { signal: ac.signal },
  )
  await withTimeout(started.promise, 5000, 'the body')
  await sleep(150)
  ac.abort()
  // The statement never ends on its own: the transaction rejects only if the abort stopped it.
  const err = await rejectionOf(withTimeout(txp, 10_000, 'the aborted transaction'))
  assertError(err, ResqliteError, 'ABORT_ERR', /abort/i)
  await withTimeout(
    slow.promise.catch(() => {}),
    10_000,
    'the statement running at abort',
  )
  await withTimeout(db.execute(INSERT, ['later']), 5000, 'a write after the abort')
  assert.deepStrictEqual(await values(db), ['later'])
})
