// SQL text the engine must not take as it reads: a NUL character, after which SQLite would drop
// everything unseen (issue 30 item 13), and UPDATE/DELETE with ORDER BY/LIMIT, which the shipped
// parser does not have (item 4).

import assert from 'node:assert/strict'
import { test } from 'node:test'

import { ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb } from './helpers.mjs'
import { collect } from './live-helpers.mjs'

const TIMEOUT = { timeout: 60_000 }

test('SQL holding a NUL character is refused on every path, naming its offset; nothing runs', TIMEOUT, async (t) => {
  for (const inlineBudget of [undefined, 0]) {
    const db = await openDb(t, { inlineBudget })
    await db.execute('CREATE TABLE t (v)')
    const nul = (sql) => new RegExp(`NUL character at offset ${sql.indexOf('\0')}\\b`)
    const refused = async (call, sql, what) => {
      const e = await expectReject(call, ResqliteError, 'ERR_NUL_IN_SQL', nul(sql)).catch((e) => {
        throw new Error(`${what}: ${e.message}`)
      })
      return e
    }
    const two = 'INSERT INTO t VALUES (1);\0INSERT INTO t VALUES (2)'
    await refused(() => db.execute(two), two, 'execute of two statements')
    const spaced = 'INSERT INTO t VALUES (1); \0 INSERT INTO t VALUES (2)'
    await refused(() => db.execute(spaced), spaced, 'a NUL after a space')
    const bound = 'INSERT INTO t VALUES (?)\0; DELETE FROM t'
    await refused(() => db.execute(bound, [1]), bound, 'a bound write (the JS thread, or the writer)')
    await refused(() => db.executeBatch(bound, [[1], [2]]), bound, 'executeBatch')
    const read = "SELECT 'é😀' AS v\0 junk"
    assert.equal(read.indexOf('\0'), 17) // UTF-16 units, as the message counts
    await refused(() => db.select(read), read, 'select')
    await refused(() => db.selectOne(read), read, 'selectOne')
    await refused(() => db.selectBytes(read), read, 'selectBytes')
    await refused(
      async () => {
        for await (const _ of db.iterate(read)) {
        }
      },
      read,
      'iterate',
    )
    const live = collect(db.stream(read))
    await live.waitFor((c) => c.errors.length === 1, 'the live query error')
    assert.equal(live.errors[0].code, 'ERR_NUL_IN_SQL')
    live.stop()
    const inComment = 'INSERT INTO t VALUES (1) -- note\0\nINSERT INTO t VALUES (2)'
    await refused(() => db.execute(inComment), inComment, 'a NUL in a comment')
    await expectReject(
      () =>
        db.transaction(async (tx) => {
          await tx.execute('INSERT INTO t VALUES (3)')
          await tx.execute(two)
        }),
      ResqliteError,
      'ERR_NUL_IN_SQL',
    )
    assert.deepStrictEqual(await db.select('SELECT v FROM t'), [], 'nothing ran, the transaction rolled back')
    // the database goes on as usual
    await db.execute('INSERT INTO t VALUES (?)', [9])
    assert.deepStrictEqual(await db.select('SELECT v FROM t'), [{ v: 9 }])
    await db.execute('DELETE FROM t')
  }
})

// ---------------------------------------------------------------------------------------------
// UPDATE/DELETE … ORDER BY … LIMIT

test('UPDATE/DELETE with ORDER BY or LIMIT is a syntax error, as docs/api.md says (the shipped parser lacks them)', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (v INTEGER)')
  await db.execute('INSERT INTO t VALUES (1), (2), (3)')
  await expectReject(
    () => db.execute('DELETE FROM t LIMIT 1'),
    ResqliteError,
    'SQLITE_ERROR',
    /near "LIMIT": syntax error/,
  )
  await expectReject(
    () => db.execute('UPDATE t SET v = v + 10 ORDER BY v LIMIT 1'),
    ResqliteError,
    'SQLITE_ERROR',
    /near "ORDER": syntax error/,
  )
  await expectReject(
    () => db.transaction((tx) => tx.execute('DELETE FROM t WHERE v > ? LIMIT 1', [0])),
    ResqliteError,
    'SQLITE_ERROR',
  )
  // the portable form does the same
  await db.execute('DELETE FROM t WHERE rowid IN (SELECT rowid FROM t ORDER BY v DESC LIMIT 1)')
  assert.deepStrictEqual(await db.select('SELECT v FROM t ORDER BY v'), [{ v: 1 }, { v: 2 }])
})
