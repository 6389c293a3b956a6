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
import { PrismaResqlite } from '../dist/esm/prisma.mjs'
import { expectReject, openDb, tempDir } from './helpers.mjs'
import { SCHEMA_SQL as PRISMA_SCHEMA_SQL, prismaClient } from './prisma/client.mjs'
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

describe('integrations.md Prisma', async () => {
  const { PrismaClient } = await import(prismaClient())
  /** A Prisma client over an open Database holding test/prisma/schema.sql's tables. */
  async function prismaOver(t, options) {
    const db = await openDb(t, { safeIntegers: true })
    await db.execute(PRISMA_SCHEMA_SQL)
    const prisma = new PrismaClient({ adapter: new PrismaResqlite(db, options) })
    t.after(() => prisma.$disconnect())
    return { db, prisma }
  }

  test('"Reads outside it go on meanwhile; other writes wait for it on the writer"', T, async (t) => {
    const { prisma } = await prismaOver(t)
    let outsideWrite
    let writeSettled = false
    await prisma.$transaction(async (tx) => {
      await tx.tag.create({ data: { name: 'inside' } })
      // A read outside runs on a reader beside the open transaction (on the writer it would
      // wait for the transaction, which waits for it: a deadlock).
      assert.equal(await withTimeout(prisma.tag.count(), 15_000, 'a read outside the transaction'), 0)
      outsideWrite = prisma.tag.create({ data: { name: 'outside' } }).finally(() => (writeSettled = true))
      assert.equal(await withTimeout(prisma.tag.count(), 15_000, 'a second read outside'), 0)
      assert.equal(writeSettled, false, 'the write outside waits for the transaction')
    })
    await outsideWrite
    assert.deepStrictEqual(
      (await prisma.tag.findMany({ orderBy: { id: 'asc' } })).map((tag) => tag.name),
      ['inside', 'outside'],
    )
  })

  test('"Isolation levels other than Serializable are refused (P2023)"', T, async (t) => {
    const { db, prisma } = await prismaOver(t)
    let ran = false
    await assert.rejects(
      prisma.$transaction(
        async () => {
          ran = true
        },
        { isolationLevel: 'ReadCommitted' },
      ),
      (error) => error.code === 'P2023',
    )
    assert.equal(ran, false)
    await prisma.$transaction((tx) => tx.tag.create({ data: { name: 'a' } }), { isolationLevel: 'Serializable' })
    assert.deepStrictEqual(await db.select('SELECT "name" FROM "Tag"'), [{ name: 'a' }])
  })

  test('"raw SQL ($queryRaw) is tried as a read first and, when it writes, sent to the writer"', T, async (t) => {
    const { db, prisma } = await prismaOver(t)
    assert.deepStrictEqual(
      await prisma.$queryRaw`INSERT INTO "Tag" ("name") VALUES (${'raw'}) RETURNING "id", "name"`,
      [{ id: 1, name: 'raw' }],
    )
    assert.deepStrictEqual(await prisma.$queryRaw`SELECT "name" FROM "Tag"`, [{ name: 'raw' }])
    assert.deepStrictEqual(await db.select('SELECT "name" FROM "Tag"'), [{ name: 'raw' }])
  })

  test('"resqlite\'s own errors reach the app with their code and message": a raw BEGIN', T, async (t) => {
    const { prisma } = await prismaOver(t)
    await assert.rejects(prisma.$executeRawUnsafe('BEGIN'), (error) => {
      assert.equal(error.code, 'ERR_OPEN_TRANSACTION')
      assert.match(error.message, /left a transaction open/)
      return true
    })
  })

  test('"timestampFormat: \'unixepoch-ms\'" stores DateTime values as milliseconds', T, async (t) => {
    const { db, prisma } = await prismaOver(t, { timestampFormat: 'unixepoch-ms' })
    const born = new Date('2001-02-03T04:05:06.789Z')
    const { id } = await prisma.user.create({ data: { email: 'a@example.com', born } })
    assert.deepStrictEqual(await db.select('SELECT "born", typeof("born") AS t FROM "User"'), [
      { born: BigInt(born.getTime()), t: 'integer' },
    ])
    assert.deepStrictEqual((await prisma.user.findUnique({ where: { id } })).born, born)
  })

  test('"shadowDatabaseUrl … default \':memory:\'": connectToShadowDb opens a database of its own', T, async (t) => {
    const { db } = await prismaOver(t)
    const shadow = await new PrismaResqlite(db).connectToShadowDb()
    await shadow.executeScript('CREATE TABLE "Shadow" ("v" INTEGER)')
    await shadow.executeRaw({
      sql: 'INSERT INTO "Shadow" VALUES (?)',
      args: [7],
      argTypes: [{ scalarType: 'int', arity: 'scalar' }],
    })
    const result = await shadow.queryRaw({ sql: 'SELECT "v" FROM "Shadow"', args: [], argTypes: [] })
    assert.deepStrictEqual(result, { columnNames: ['v'], columnTypes: [0], rows: [[7]] })
    await shadow.dispose()
    assert.deepStrictEqual(await db.select("SELECT name FROM sqlite_master WHERE name = 'Shadow'"), [])
  })

  test('"forgetting them when it runs DDL itself": a table made again with other column types', T, async (t) => {
    const { prisma } = await prismaOver(t)
    await prisma.$executeRawUnsafe('CREATE TABLE "t" ("v" INTEGER)')
    await prisma.$executeRawUnsafe('INSERT INTO "t" VALUES (5)')
    assert.deepStrictEqual(await prisma.$queryRawUnsafe('SELECT "v" FROM "t"'), [{ v: 5 }])
    await prisma.$executeRawUnsafe('DROP TABLE "t"')
    await prisma.$executeRawUnsafe('CREATE TABLE "t" ("v" TEXT)')
    await prisma.$executeRawUnsafe(`INSERT INTO "t" VALUES ('5')`)
    assert.deepStrictEqual(await prisma.$queryRawUnsafe('SELECT "v" FROM "t"'), [{ v: '5' }])
  })
})
