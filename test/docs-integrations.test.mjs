// docs/integrations.md is a contract: the promises of the page that no other test file
// checked, each test naming the promise and the section it comes from.

import assert from 'node:assert/strict'
import path from 'node:path'
import { describe, test } from 'node:test'
import { sql as drizzleSql } from 'drizzle-orm'
import { Kysely, sql } from 'kysely'
import { drizzle } from '../dist/esm/drizzle.mjs'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { ResqliteDialect } from '../dist/esm/kysely.mjs'
import { expectReject, openDb, tempDir } from './helpers.mjs'
import { deferred, withTimeout } from './tx-helpers.mjs'

const T = { timeout: 20_000 }

describe('integrations.md Kysely', () => {
  test('"Isolation levels and access modes are refused (ERR_INVALID_ARG_VALUE)": setAccessMode', T, async (t) => {
    const db = await openDb(t)
    const kysely = new Kysely({ dialect: new ResqliteDialect({ database: db }) })
    let ran = false
    for (const mode of ['read only', 'read write']) {
      await expectReject(
        () =>
          kysely
            .transaction()
            .setAccessMode(mode)
            .execute(async () => {
              ran = true
            }),
        ResqliteError,
        'ERR_INVALID_ARG_VALUE',
      )
    }
    assert.equal(ran, false)
  })

  test(
    '"Raw SQL … is tried as a read first and, when it writes, sent to the writer": a raw INSERT writes, a raw SELECT reads',
    T,
    async (t) => {
      const db = await openDb(t)
      const kysely = new Kysely({ dialect: new ResqliteDialect({ database: db }) })
      await sql`CREATE TABLE t (v)`.execute(kysely)
      const written = await sql`INSERT INTO t VALUES (${'raw'})`.execute(kysely)
      assert.equal(written.numAffectedRows, 1n)
      const read = await sql`SELECT v FROM t`.execute(kysely)
      assert.deepStrictEqual(read.rows, [{ v: 'raw' }])
      assert.deepStrictEqual(await db.select('SELECT v FROM t'), [{ v: 'raw' }])
    },
  )
})

describe('integrations.md Drizzle', () => {
  test('"db.$client is the Database"', T, async (t) => {
    const db = await openDb(t)
    const orm = drizzle(db)
    assert.equal(orm.$client, db)
  })

  test(
    '"db.transaction(cb, { behavior }) is db.transaction(body, { mode: behavior })": immediate takes the write lock at BEGIN, deferred does not',
    T,
    async (t) => {
      const dir = tempDir(t)
      const file = path.join(dir, 'b.db')
      const db = await Database.open(file)
      t.after(() => db.close())
      await db.execute('CREATE TABLE t (v)')
      const other = await Database.open(file, { busyTimeout: 0, readers: 1 })
      t.after(() => other.close())
      const orm = drizzle(db)
      for (const behavior of ['deferred', 'immediate']) {
        const inside = deferred()
        const release = deferred()
        const txp = orm.transaction(
          async (tx) => {
            await tx.all(drizzleSql`SELECT count(*) AS n FROM t`)
            inside.resolve()
            await release.promise
          },
          { behavior },
        )
        await withTimeout(inside.promise, 5000, 'the body')
        const write = await other.execute('INSERT INTO t VALUES (1)').then(
          () => 'written',
          (e) => e.code,
        )
        release.resolve()
        await txp
        assert.equal(write, behavior === 'immediate' ? 'SQLITE_BUSY' : 'written', behavior)
      }
    },
  )

  test(
    '"Raw SQL (db.all(sql`…`), db.run) is tried as a read first and, when it writes, sent to the writer"',
    T,
    async (t) => {
      const db = await openDb(t)
      const orm = drizzle(db)
      await orm.run(drizzleSql`CREATE TABLE t (v)`)
      const returned = await orm.all(drizzleSql`INSERT INTO t VALUES (${'a'}) RETURNING v`)
      assert.deepStrictEqual(returned, [{ v: 'a' }])
      assert.deepStrictEqual(await orm.run(drizzleSql`INSERT INTO t VALUES (${'b'})`), {
        changes: 1,
        lastInsertRowid: 2,
      })
      assert.deepStrictEqual(await orm.all(drizzleSql`SELECT v FROM t ORDER BY v`), [{ v: 'a' }, { v: 'b' }])
    },
  )
})
