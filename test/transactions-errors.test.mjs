// Failing transactions (docs/transactions.md): a body that throws, a COMMIT that fails,
// SQLite rolling back on its own, a failing executeBatch inside a transaction.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { expectReject } from './helpers.mjs'
import { assertError, INSERT, openTxDb, rejectionOf, sleep, T, tdb, values } from './tx-helpers.mjs'

test('a body that throws rolls back and the transaction rejects with that error', T, async (t) => {
  const db = await tdb(t)
  await db.execute(INSERT, ['kept'])
  const boom = new Error('boom')
  const err = await rejectionOf(
    db.transaction(async (tx) => {
      await tx.execute(INSERT, ['x'])
      await tx.executeBatch(INSERT, [['y'], ['z']])
      await sleep(5)
      throw boom
    }),
  )
  assert.equal(err, boom)
  assert.deepStrictEqual(await values(db), ['kept'])
  // a rejected await that the body does not catch: the transaction rejects with that ResqliteError
  await db.execute('CREATE UNIQUE INDEX t_v ON t (v)')
  const err2 = await rejectionOf(
    db.transaction(async (tx) => {
      await tx.execute(INSERT, ['new'])
      await tx.execute(INSERT, ['kept'])
    }),
  )
  assertError(err2, ResqliteError, 'SQLITE_CONSTRAINT_UNIQUE', /t\.v/)
  assert.deepStrictEqual(await values(db), ['kept'])
  // a body that throws synchronously (before any await) still gives a rejected promise
  const sync = new Error('sync throw')
  let p3
  assert.doesNotThrow(() => {
    p3 = db.transaction(() => {
      throw sync
    })
  })
  assert.equal(await rejectionOf(p3), sync)
  await db.transaction(async (tx) => tx.execute(INSERT, ['after']))
  assert.deepStrictEqual(await values(db), ['kept', 'after'])
})

test('a COMMIT that fails (deferred foreign key) rolls back and rejects with its ResqliteError', T, async (t) => {
  const { db } = await openTxDb(t)
  await db.execute(`CREATE TABLE parent (id INTEGER PRIMARY KEY);
                    CREATE TABLE child (id INTEGER PRIMARY KEY,
                                        pid INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)`)
  let bodyFinished = false
  const err = await rejectionOf(
    db.transaction(async (tx) => {
      await tx.execute('INSERT INTO parent (id) VALUES (1)')
      await tx.execute('INSERT INTO child (pid) VALUES (?)', [99]) // checked only at COMMIT
      await tx.execute('INSERT INTO child (pid) VALUES (?)', [1])
      assert.deepStrictEqual(await tx.selectOne('SELECT count(*) AS n FROM child'), { n: 2 })
      bodyFinished = true
      return 'must not resolve'
    }),
  )
  assert.equal(bodyFinished, true)
  assertError(err, ResqliteError, 'SQLITE_CONSTRAINT_FOREIGNKEY', /FOREIGN KEY/i)
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM parent'), [{ n: 0 }])
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM child'), [{ n: 0 }])
  // the writer is not left inside the failed transaction: standalone writes commit and are visible
  await db.execute('INSERT INTO parent (id) VALUES (2)')
  assert.deepStrictEqual(await db.select('SELECT id FROM parent'), [{ id: 2 }])
  await db.transaction(async (tx) => tx.execute('INSERT INTO child (pid) VALUES (2)'))
  assert.deepStrictEqual(await db.select('SELECT pid FROM child'), [{ pid: 2 }])
  // the same at depth: the violation is written inside a released savepoint
  const err2 = await rejectionOf(
    db.transaction(async (tx) => {
      await tx.transaction(async (sp) => sp.execute('INSERT INTO child (pid) VALUES (?)', [77]))
      await tx.execute('INSERT INTO parent (id) VALUES (3)')
    }),
  )
  assertError(err2, ResqliteError, 'SQLITE_CONSTRAINT_FOREIGNKEY')
  assert.deepStrictEqual(await db.select('SELECT id FROM parent ORDER BY id'), [{ id: 2 }])
  assert.deepStrictEqual(await db.select('SELECT pid FROM child'), [{ pid: 2 }])
})

/** t with a trigger that makes SQLite roll the whole transaction back on v = 'bad'. */
async function raiseDb(t) {
  const db = await tdb(t)
  await db.execute(`CREATE TRIGGER no_bad BEFORE INSERT ON t WHEN NEW.v = 'bad'
                    BEGIN SELECT RAISE(ROLLBACK, 'nope'); END`)
  await db.execute(INSERT, ['committed before'])
  return db
}

test(
  'SQLite rolling back on its own (RAISE(ROLLBACK)): later tx calls and the transaction reject ERR_TRANSACTION_ROLLED_BACK',
  T,
  async (t) => {
    const db = await raiseDb(t)
    let raised
    let nestedRan = false
    const later = {}
    const err = await rejectionOf(
      db.transaction(async (tx) => {
        await tx.execute(INSERT, ['a'])
        raised = await rejectionOf(tx.execute(INSERT, ['bad']), 'the execute that fires RAISE(ROLLBACK)')
        // the body catches everything; none of these may run (in autocommit mode they would commit)
        later.execute = await rejectionOf(tx.execute(INSERT, ['after rollback']))
        later.executeBatch = await rejectionOf(tx.executeBatch(INSERT, [['batch after rollback']]))
        later.select = await rejectionOf(tx.select('SELECT v FROM t'))
        later.selectOne = await rejectionOf(tx.selectOne('SELECT v FROM t'))
        later.selectBytes = await rejectionOf(tx.selectBytes('SELECT v FROM t'))
        later.transaction = await rejectionOf(
          tx.transaction(async (sp) => {
            nestedRan = true
            await sp.execute(INSERT, ['nested after rollback'])
          }),
        )
        later.routed = await rejectionOf(db.execute(INSERT, ['routed after rollback']))
        return 'the body caught everything'
      }),
    )
    assertError(raised, ResqliteError, /^SQLITE_CONSTRAINT/, /nope/)
    for (const [name, e] of Object.entries(later)) {
      assert.ok(e instanceof ResqliteError, `${name}: expected a ResqliteError, got ${e?.stack ?? e}`)
      assert.equal(e.code, 'ERR_TRANSACTION_ROLLED_BACK', `${name}: ${e.message}`)
    }
    assert.equal(nestedRan, false, 'a nested body must not run in a transaction SQLite already rolled back')
    assertError(err, ResqliteError, 'ERR_TRANSACTION_ROLLED_BACK', /roll/i)
    assert.ok(err.cause instanceof ResqliteError, `cause must hold the error that rolled back: ${err.cause}`)
    assert.match(err.cause.message, /nope/)
    assert.deepStrictEqual(await values(db), ['committed before'])
    // later writes work and commit
    await db.execute(INSERT, ['later'])
    await db.transaction(async (tx) => tx.execute(INSERT, ['later tx']))
    assert.deepStrictEqual(await values(db), ['committed before', 'later', 'later tx'])
  },
)

test('RAISE(ROLLBACK) inside a savepoint rolls back the whole transaction', T, async (t) => {
  const db = await raiseDb(t)
  let innerErr
  let afterErr
  const err = await rejectionOf(
    db.transaction(async (tx) => {
      await tx.execute(INSERT, ['outer'])
      innerErr = await rejectionOf(
        tx.transaction(async (sp) => {
          await sp.execute(INSERT, ['inner'])
          await sp.execute(INSERT, ['bad'])
        }),
      )
      afterErr = await rejectionOf(tx.execute(INSERT, ['outer after']))
      return 'caught'
    }),
  )
  assert.ok(innerErr instanceof ResqliteError, `${innerErr}`)
  assert.match(innerErr.code, /^(SQLITE_CONSTRAINT|ERR_TRANSACTION_ROLLED_BACK)/)
  assertError(afterErr, ResqliteError, 'ERR_TRANSACTION_ROLLED_BACK')
  assertError(err, ResqliteError, 'ERR_TRANSACTION_ROLLED_BACK')
  // and when the body does not catch it: rejected, nothing committed
  const err2 = await rejectionOf(
    db.transaction(async (tx) => {
      await tx.execute(INSERT, ['x'])
      await tx.execute(INSERT, ['bad'])
    }),
  )
  assert.ok(err2 instanceof ResqliteError, `${err2}`)
  assert.match(err2.code, /^(SQLITE_CONSTRAINT|ERR_TRANSACTION_ROLLED_BACK)/)
  assert.deepStrictEqual(await values(db), ['committed before'])
  await db.execute(INSERT, ['later'])
  assert.deepStrictEqual(await values(db), ['committed before', 'later'])
})

test(
  'executeBatch with a ragged parameter set: ERR_PARAMETER_COUNT naming the set, nothing from the batch applied',
  T,
  async (t) => {
    const db = await tdb(t)
    const sql = 'INSERT INTO t (id, v) VALUES (?, ?)'
    const ragged = [[1, 'a'], [2], [3, 'c']]
    const SET_2 = /parameter set 2\b|paramSets\[1\]/
    await expectReject(() => db.executeBatch(sql, ragged), ResqliteError, 'ERR_PARAMETER_COUNT', SET_2)
    assert.deepStrictEqual(await values(db), [])
    await db.transaction(async (tx) => {
      await tx.execute(sql, [10, 'before'])
      await expectReject(() => tx.executeBatch(sql, ragged), ResqliteError, 'ERR_PARAMETER_COUNT', SET_2)
      assert.deepStrictEqual(await tx.select('SELECT id FROM t ORDER BY id'), [{ id: 10 }])
      // a batch failing on its third set leaves none of its first two rows
      await expectReject(
        () =>
          tx.executeBatch(sql, [
            [1, 'a'],
            [2, 'b'],
            [10, 'dup'],
          ]),
        ResqliteError,
        'SQLITE_CONSTRAINT_PRIMARYKEY',
      )
      assert.deepStrictEqual(await tx.select('SELECT id FROM t ORDER BY id'), [{ id: 10 }])
      // routed db.executeBatch likewise
      await expectReject(() => db.executeBatch(sql, ragged), ResqliteError, 'ERR_PARAMETER_COUNT', SET_2)
      await tx.execute(sql, [11, 'after'])
    })
    assert.deepStrictEqual(await values(db), ['before', 'after'])
  },
)
