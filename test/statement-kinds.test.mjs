// Statements SQLite counts as read-only that would still change a connection: transaction
// control (BEGIN, COMMIT, END, ROLLBACK, SAVEPOINT, RELEASE), PRAGMAs that change a setting,
// and the key PRAGMAs. Where each is refused, and that nothing of a transaction that asked to
// end itself is committed (docs/transactions.md "Rules", docs/api.md, values-and-errors.md).
import assert from 'node:assert/strict'
import path from 'node:path'
import test from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb, tempDir } from './helpers.mjs'

const ENDS = ['COMMIT', 'END', 'ROLLBACK', 'BEGIN', 'BEGIN IMMEDIATE', 'COMMIT TRANSACTION']

async function counted(db) {
  return (await db.selectOne('SELECT count(*) AS n FROM t')).n
}

for (const end of ENDS) {
  test(`inside a body, ${end} rejects ERR_TRANSACTION_CONTROL and nothing of the transaction is committed`, async (t) => {
    const dir = tempDir(t)
    const file = path.join(dir, 'app.db')
    let db = await Database.open(file)
    await db.execute('CREATE TABLE t (v)')
    const seen = []
    const stop = db.stream('SELECT v FROM t').subscribe((rows) => seen.push(...rows.map((r) => r.v)))
    let statementError
    const err = await expectReject(
      () =>
        db.transaction(async (tx) => {
          await tx.execute('INSERT INTO t VALUES (1)')
          try {
            await tx.execute(end)
          } catch (e) {
            statementError = e
          }
          // The body goes on as if nothing happened: the transaction must still not commit.
          await tx.execute('INSERT INTO t VALUES (2)').catch(() => {})
        }),
      ResqliteError,
      'ERR_TRANSACTION_ROLLED_BACK',
    )
    assert.ok(statementError instanceof ResqliteError)
    assert.equal(statementError.code, 'ERR_TRANSACTION_CONTROL')
    assert.match(statementError.message, /end a transaction by returning from or throwing in its body/)
    assert.equal(err.cause.code, 'ERR_TRANSACTION_CONTROL')
    assert.equal(await counted(db), 0)
    // The database goes on normally.
    await db.transaction((tx) => tx.execute('INSERT INTO t VALUES (3)'))
    await db.execute('INSERT INTO t VALUES (4)')
    await new Promise((r) => setTimeout(r, 50))
    stop()
    assert.ok(!seen.includes(1) && !seen.includes(2), `a live query saw the rolled-back rows: ${seen}`)
    await db.close()
    db = await Database.open(file)
    assert.deepEqual(
      (await db.select('SELECT v FROM t ORDER BY v')).map((r) => r.v),
      [3, 4],
    )
    await db.close()
  })
}

test('a COMMIT inside a script, or in a nested transaction, ends nothing: the whole transaction rolls back', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (v)')
  await expectReject(
    () =>
      db.transaction(async (tx) => {
        await tx.execute('INSERT INTO t VALUES (1)')
        await tx.execute('INSERT INTO t VALUES (2); COMMIT; INSERT INTO t VALUES (3)')
      }),
    ResqliteError,
    'ERR_TRANSACTION_ROLLED_BACK',
  )
  assert.equal(await counted(db), 0)
  await expectReject(
    () =>
      db.transaction(async (tx) => {
        await tx.execute('INSERT INTO t VALUES (1)')
        await tx.transaction(async (inner) => {
          await inner.execute('INSERT INTO t VALUES (2)')
          await inner.execute('COMMIT')
        })
      }),
    ResqliteError,
    /ERR_TRANSACTION_(ROLLED_BACK|CONTROL)/,
  )
  assert.equal(await counted(db), 0)
  // A script that commits what it begins, outside a body, is still fine.
  await db.execute('BEGIN; INSERT INTO t VALUES (5); COMMIT')
  assert.equal(await counted(db), 1)
})

test('executeBatch refuses a statement that begins or ends a transaction, inside a body and outside', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (v)')
  await expectReject(
    () => db.executeBatch('COMMIT', [[], []]),
    ResqliteError,
    'ERR_TRANSACTION_CONTROL',
    /executeBatch/,
  )
  await expectReject(() => db.executeBatch('BEGIN', [[]]), ResqliteError, 'ERR_TRANSACTION_CONTROL')
  await expectReject(
    () =>
      db.transaction(async (tx) => {
        await tx.execute('INSERT INTO t VALUES (1)')
        await tx.executeBatch('COMMIT', [[]])
      }),
    ResqliteError,
    'ERR_TRANSACTION_ROLLED_BACK',
  )
  assert.equal(await counted(db), 0)
  await db.executeBatch('INSERT INTO t VALUES (?)', [[1], [2]])
  assert.equal(await counted(db), 2)
})

const CONTROL = ['COMMIT', 'END', 'ROLLBACK', 'BEGIN', 'SAVEPOINT a', 'RELEASE a', 'ROLLBACK TO a']
const READS = {
  select: (q, sql) => q.select(sql),
  selectOne: (q, sql) => q.selectOne(sql),
  selectBytes: (q, sql) => q.selectBytes(sql),
  iterate: async (q, sql) => {
    for await (const _ of q.iterate(sql));
  },
}

for (const [name, read] of Object.entries(READS)) {
  test(`${name} refuses transaction control with ERR_NOT_READ_ONLY, outside and inside a body, on every connection`, async (t) => {
    for (const inlineBudget of [0.1, 0]) {
      const db = await openDb(t, { inlineBudget })
      await db.execute('CREATE TABLE t (v)')
      for (const sql of CONTROL) {
        await expectReject(() => read(db, sql), ResqliteError, 'ERR_NOT_READ_ONLY', /transaction/)
      }
      // Inside a body it would end the transaction on the writer: refused, and the
      // transaction goes on and commits all of its writes.
      await db.transaction(async (tx) => {
        await tx.execute('INSERT INTO t VALUES (1)')
        for (const sql of CONTROL) {
          await expectReject(() => read(tx, sql), ResqliteError, 'ERR_NOT_READ_ONLY', /transaction/)
        }
        await tx.execute('INSERT INTO t VALUES (2)')
      })
      assert.equal(await counted(db), 2)
    }
  })
}

test('a live query of COMMIT is refused with ERR_NOT_READ_ONLY', async (t) => {
  const db = await openDb(t)
  const err = await new Promise((resolve) => {
    db.stream('COMMIT').subscribe({ next: () => resolve(undefined), error: resolve })
  })
  assert.ok(err instanceof ResqliteError)
  assert.equal(err.code, 'ERR_NOT_READ_ONLY')
})

const SETTINGS = [
  'PRAGMA cache_size = 5',
  'PRAGMA main.cache_size = 5',
  'PRAGMA cache_size(5)',
  'PRAGMA trusted_schema = ON',
  'PRAGMA foreign_keys = OFF',
  'PRAGMA busy_timeout = 1',
  'PRAGMA query_only = 1',
]

test('a read refuses a PRAGMA that changes a setting, and no connection changed', async (t) => {
  for (const inlineBudget of [0.1, 0]) {
    const db = await openDb(t, { inlineBudget, readers: 2 })
    await db.execute('CREATE TABLE t (v)')
    const before = (await db.selectOne('PRAGMA cache_size')).cache_size
    for (const sql of SETTINGS) {
      for (const [name, read] of Object.entries(READS)) {
        await expectReject(() => read(db, sql), ResqliteError, 'ERR_NOT_READ_ONLY', /setting/, /execute\(\)/)
        await db.transaction(async (tx) => {
          await expectReject(() => read(tx, sql), ResqliteError, 'ERR_NOT_READ_ONLY', /setting/)
        })
        assert.ok(name)
      }
    }
    // Every connection still has its own setting: reads issued together reach the readers too.
    const sizes = await Promise.all(Array.from({ length: 12 }, () => db.selectOne('PRAGMA cache_size')))
    assert.deepEqual(new Set(sizes.map((r) => r.cache_size)), new Set([before]))
    const fks = await Promise.all(Array.from({ length: 12 }, () => db.selectOne('PRAGMA foreign_keys')))
    assert.deepEqual(new Set(fks.map((r) => r.foreign_keys)), new Set([1]))
    // Queries that take an argument still read, and execute still sets (on the writer).
    assert.deepEqual(
      (await db.select('PRAGMA table_info(t)')).map((c) => c.name),
      ['v'],
    )
    assert.equal((await db.select('PRAGMA integrity_check(10)'))[0].integrity_check, 'ok')
    await db.execute('PRAGMA cache_size = 5')
    // Now cached on the writer's connection, the same text is still refused to a read.
    await expectReject(() => db.select('PRAGMA cache_size = 5'), ResqliteError, 'ERR_NOT_READ_ONLY', /setting/)
  }
})

const KEYS = [
  "PRAGMA key = 'other'",
  "PRAGMA rekey = 'other'",
  "PRAGMA hexkey = '00112233'",
  "PRAGMA hexrekey = '00112233'",
  "PRAGMA textkey = 'other'",
  "PRAGMA main.rekey = 'other'",
  'PRAGMA key',
]

for (const key of [undefined, 'secret']) {
  test(`key PRAGMAs are refused with ERR_KEY_PRAGMA everywhere (${key ? 'encrypted' : 'plaintext'}), and the key stays as it was`, async (t) => {
    const file = path.join(tempDir(t), 'app.db')
    let db = await Database.open(file, key ? { encryptionKey: key } : undefined)
    await db.execute('CREATE TABLE t (v)')
    for (const sql of KEYS) {
      await expectReject(() => db.execute(sql), ResqliteError, 'ERR_KEY_PRAGMA', /rekey\(\)/)
      await expectReject(() => db.select(sql), ResqliteError, 'ERR_KEY_PRAGMA')
      await expectReject(() => db.executeBatch(sql, [[]]), ResqliteError, 'ERR_KEY_PRAGMA')
    }
    // In a script the refusal comes before the script's first statement runs.
    await expectReject(
      () => db.execute("INSERT INTO t VALUES (1); PRAGMA rekey = 'other'"),
      ResqliteError,
      'ERR_KEY_PRAGMA',
    )
    assert.equal(await counted(db), 0)
    await db.transaction(async (tx) => {
      await tx.execute('INSERT INTO t VALUES (2)')
      await expectReject(() => tx.execute("PRAGMA rekey = 'other'"), ResqliteError, 'ERR_KEY_PRAGMA')
    })
    await db.close()
    // Reopened with the key it had (or none), every connection reads it.
    db = await Database.open(file, key ? { encryptionKey: key } : undefined)
    const reads = await Promise.all(Array.from({ length: 8 }, () => db.selectOne('SELECT count(*) AS n FROM t')))
    assert.deepEqual(new Set(reads.map((r) => r.n)), new Set([1]))
    await db.close()
    if (key)
      await expectReject(() => Database.open(file, { encryptionKey: 'other' }), ResqliteError, 'ERR_ENCRYPTION_KEY')
  })
}

test('close() inside a transaction body rejects with ERR_CLOSE_IN_TRANSACTION instead of waiting forever', {
  timeout: 10_000,
}, async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (v)')
  await db.transaction(async (tx) => {
    await tx.execute('INSERT INTO t VALUES (1)')
    await expectReject(() => db.close(), ResqliteError, 'ERR_CLOSE_IN_TRANSACTION', /after db\.transaction\(\) settles/)
    await tx.execute('INSERT INTO t VALUES (2)')
  })
  assert.equal(await counted(db), 2)
  // A timer the body set runs after the transaction: close() from there works.
  let later
  await db.transaction(async () => {
    later = new Promise((resolve) => setTimeout(() => resolve(db.close()), 20))
  })
  await later
  await expectReject(() => db.select('SELECT 1'), ResqliteError, 'ERR_DATABASE_CLOSED')
})

test("inside a body, RELEASE or ROLLBACK TO of the library's savepoints is refused, and so are a user's own", async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (v)')
  for (const sql of ['RELEASE resqlite_sp1', 'ROLLBACK TO resqlite_sp1', 'ROLLBACK TO SAVEPOINT RESQLITE_SP1']) {
    let statementError
    await expectReject(
      () =>
        db.transaction(async (tx) => {
          await tx.execute('INSERT INTO t VALUES (1)')
          await tx.transaction(async (inner) => {
            await inner.execute('INSERT INTO t VALUES (2)')
            statementError = await inner.execute(sql).catch((e) => e)
          })
        }),
      ResqliteError,
      'ERR_TRANSACTION_ROLLED_BACK',
    )
    assert.equal(statementError?.code, 'ERR_TRANSACTION_CONTROL', sql)
    assert.equal(await counted(db), 0, sql)
  }
  // A user's own savepoint: its RELEASE or ROLLBACK TO would also end the levels opened after it
  // (issue 43), so it is refused as the library's are; nest with tx.transaction() instead.
  for (const sql of ['SAVEPOINT mine', 'RELEASE mine', 'ROLLBACK TO mine']) {
    let statementError
    await expectReject(
      () =>
        db.transaction(async (tx) => {
          await tx.execute('INSERT INTO t VALUES (1)')
          statementError = await tx.execute(sql).catch((e) => e)
        }),
      ResqliteError,
      'ERR_TRANSACTION_ROLLED_BACK',
    )
    assert.equal(statementError?.code, 'ERR_TRANSACTION_CONTROL', sql)
    assert.equal(await counted(db), 0, sql)
  }
})
