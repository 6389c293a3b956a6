// resqlite/drizzle with the real drizzle-orm package (docs/integrations.md "Drizzle"): a
// schema with relations, inserts with RETURNING, selects with joins and aggregates, relational
// queries, transactions and savepoints — and the results Drizzle gives over another driver.
//
// The reference: Drizzle's sqlite-proxy over node:sqlite where the runtime has it (with
// StatementSync#setReturnArrays), and recorded results (EXPECTED) everywhere. better-sqlite3 is
// not a dependency (its prebuilt binaries crash on Node 20).

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { count, eq, gt, relations, sql, sum } from 'drizzle-orm'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { drizzle as proxyDrizzle } from 'drizzle-orm/sqlite-proxy'
import { drizzle } from '../dist/esm/drizzle.mjs'
import { ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb } from './helpers.mjs'
import { collect } from './live-helpers.mjs'

const users = sqliteTable('users', {
  id: integer('id').primaryKey(),
  name: text('name').notNull().unique(),
  active: integer('active', { mode: 'boolean' }).notNull().default(true),
  joined: integer('joined', { mode: 'timestamp' }),
})
const posts = sqliteTable('posts', {
  id: integer('id').primaryKey(),
  authorId: integer('author_id')
    .notNull()
    .references(() => users.id),
  title: text('title').notNull(),
  likes: integer('likes').notNull().default(0),
})
const usersRelations = relations(users, ({ many }) => ({ posts: many(posts) }))
const postsRelations = relations(posts, ({ one }) => ({
  author: one(users, { fields: [posts.authorId], references: [users.id] }),
}))
const schema = { users, posts, usersRelations, postsRelations }

const DDL = [
  sql`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, active INTEGER NOT NULL DEFAULT 1, joined INTEGER)`,
  sql`CREATE TABLE posts (id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL REFERENCES users(id), title TEXT NOT NULL, likes INTEGER NOT NULL DEFAULT 0)`,
]

/** The operations both drivers run; their results as plain JSON (dates as ISO strings). */
async function operations(db) {
  const out = {}
  for (const statement of DDL) await db.run(statement)
  out.inserted = await db
    .insert(users)
    .values([{ name: 'ada', joined: new Date('2024-01-02T03:04:05Z') }, { name: 'bob', active: false }, { name: 'cy' }])
    .returning({ id: users.id, name: users.name, active: users.active, joined: users.joined })
  await db.insert(posts).values([
    { authorId: 1, title: 'engines', likes: 5 },
    { authorId: 1, title: 'notes', likes: 2 },
    { authorId: 2, title: 'cats' },
  ])
  out.join = await db
    .select({ author: users.name, title: posts.title, likes: posts.likes })
    .from(posts)
    .innerJoin(users, eq(posts.authorId, users.id))
    .orderBy(posts.id)
  out.leftJoin = await db.select().from(users).leftJoin(posts, eq(posts.authorId, users.id)).orderBy(users.id, posts.id)
  out.aggregate = await db
    .select({ name: users.name, posts: count(posts.id), likes: sum(posts.likes) })
    .from(users)
    .leftJoin(posts, eq(posts.authorId, users.id))
    .groupBy(users.id)
    .orderBy(users.id)
  out.one = await db.select().from(users).where(eq(users.id, 1)).get()
  out.none = (await db.select().from(users).where(eq(users.id, 99)).get()) ?? 'none'
  out.relational = await db.query.users.findMany({
    with: { posts: { columns: { title: true }, orderBy: (p, { asc }) => [asc(p.id)] } },
    orderBy: (u, { asc }) => [asc(u.id)],
  })
  out.relationalOne = await db.query.posts.findFirst({ where: eq(posts.title, 'cats'), with: { author: true } })
  out.updated = await db
    .update(posts)
    .set({ likes: sql`${posts.likes} + 1` })
    .where(gt(posts.likes, 1))
    .returning()
  out.deleted = await db.delete(posts).where(eq(posts.title, 'cats')).returning({ title: posts.title })
  out.rawAll = await db.all(sql`SELECT name FROM users WHERE active = ${1} ORDER BY id`)
  out.rawValues = await db.values(sql`SELECT 1 AS a, 2 AS a`)
  out.rawGet = await db.get(sql`SELECT count(*) AS n FROM posts`)

  await db.transaction(async (tx) => {
    await tx.insert(users).values({ name: 'dee' })
    await tx.update(posts).set({ authorId: 4 }).where(eq(posts.title, 'notes'))
  })
  out.rolledBack = await db
    .transaction(async (tx) => {
      await tx.insert(users).values({ name: 'eve' })
      tx.rollback()
    })
    .then(
      () => 'committed',
      (e) => e.constructor.name,
    )
  await db.transaction(async (tx) => {
    await tx.insert(users).values({ name: 'fay' })
    await tx
      .transaction(async (inner) => {
        await inner.insert(users).values({ name: 'gus' })
        inner.rollback()
      })
      .catch(() => {})
    await tx.transaction(async (inner) => {
      await inner.insert(users).values({ name: 'hal' })
    })
  })
  out.failed = await db
    .transaction(async (tx) => {
      await tx.insert(users).values({ name: 'ivy' })
      await tx.insert(users).values({ name: 'ada' }) // UNIQUE
    })
    .then(
      () => 'committed',
      () => 'failed',
    )
  out.users = await db.select({ id: users.id, name: users.name }).from(users).orderBy(users.id)
  out.posts = await db.select().from(posts).orderBy(posts.id)
  return JSON.parse(JSON.stringify(out))
}

// Recorded from this driver (Node 20.20) and checked once by hand on Node 24.21: equal to
// Drizzle's sqlite-proxy over node:sqlite, and, up to the transactions (better-sqlite3's are
// synchronous), to Drizzle over better-sqlite3 13.2.0.
const EXPECTED = JSON.parse(
  '{"inserted":[{"id":1,"name":"ada","active":true,"joined":"2024-01-02T03:04:05.000Z"},{"id":2,"name":"bob","active":false,"joined":null},{"id":3,"name":"cy","active":true,"joined":null}],"join":[{"author":"ada","title":"engines","likes":5},{"author":"ada","title":"notes","likes":2},{"author":"bob","title":"cats","likes":0}],"leftJoin":[{"users":{"id":1,"name":"ada","active":true,"joined":"2024-01-02T03:04:05.000Z"},"posts":{"id":1,"authorId":1,"title":"engines","likes":5}},{"users":{"id":1,"name":"ada","active":true,"joined":"2024-01-02T03:04:05.000Z"},"posts":{"id":2,"authorId":1,"title":"notes","likes":2}},{"users":{"id":2,"name":"bob","active":false,"joined":null},"posts":{"id":3,"authorId":2,"title":"cats","likes":0}},{"users":{"id":3,"name":"cy","active":true,"joined":null},"posts":null}],"aggregate":[{"name":"ada","posts":2,"likes":"7"},{"name":"bob","posts":1,"likes":"0"},{"name":"cy","posts":0,"likes":null}],"one":{"id":1,"name":"ada","active":true,"joined":"2024-01-02T03:04:05.000Z"},"none":"none","relational":[{"id":1,"name":"ada","active":true,"joined":"2024-01-02T03:04:05.000Z","posts":[{"title":"engines"},{"title":"notes"}]},{"id":2,"name":"bob","active":false,"joined":null,"posts":[{"title":"cats"}]},{"id":3,"name":"cy","active":true,"joined":null,"posts":[]}],"relationalOne":{"id":3,"authorId":2,"title":"cats","likes":0,"author":{"id":2,"name":"bob","active":false,"joined":null}},"updated":[{"id":1,"authorId":1,"title":"engines","likes":6},{"id":2,"authorId":1,"title":"notes","likes":3}],"deleted":[{"title":"cats"}],"rawAll":[{"name":"ada"},{"name":"cy"}],"rawValues":[[1,2]],"rawGet":{"n":2},"rolledBack":"TransactionRollbackError","failed":"failed","users":[{"id":1,"name":"ada"},{"id":2,"name":"bob"},{"id":3,"name":"cy"},{"id":4,"name":"dee"},{"id":5,"name":"fay"},{"id":6,"name":"hal"}],"posts":[{"id":1,"authorId":1,"title":"engines","likes":6},{"id":2,"authorId":4,"title":"notes","likes":3}]}',
)
/** Raw `db.all(sql)` / `db.get(sql)`: objects, as over better-sqlite3 and libsql; sqlite-proxy's
 * protocol makes them arrays, so the comparison with it leaves them out. */
const PROXY_SHAPED = ['rawAll', 'rawGet']

/** Drizzle's sqlite-proxy over node:sqlite, or undefined where the runtime lacks it. */
async function nodeSqliteReference() {
  const nodeSqlite = await import('node:sqlite').catch(() => undefined)
  if (nodeSqlite === undefined || typeof nodeSqlite.StatementSync.prototype.setReturnArrays !== 'function') {
    return undefined
  }
  const raw = new nodeSqlite.DatabaseSync(':memory:')
  raw.exec('PRAGMA foreign_keys = ON')
  const db = proxyDrizzle(
    async (text, params, method) => {
      const stmt = raw.prepare(text)
      if (method === 'run') return { rows: [], ...stmt.run(...params) }
      stmt.setReturnArrays(true)
      return { rows: method === 'get' ? stmt.get(...params) : stmt.all(...params) }
    },
    { schema },
  )
  return { db, close: () => raw.close() }
}

test('Drizzle over resqlite gives the results Drizzle gives over another SQLite driver', async (t) => {
  const resqlite = await operations(drizzle(await openDb(t), { schema }))
  assert.deepStrictEqual(resqlite, EXPECTED)
  const reference = await nodeSqliteReference()
  if (reference === undefined) {
    t.diagnostic('no node:sqlite with setReturnArrays here: compared with the recorded results only')
    return
  }
  try {
    const proxied = await operations(reference.db)
    for (const key of PROXY_SHAPED) {
      delete proxied[key]
      delete resqlite[key]
    }
    assert.deepStrictEqual(resqlite, proxied)
  } finally {
    reference.close()
  }
})

test('Drizzle writes run on the writer: a live query re-runs, a transaction holds the writer', async (t) => {
  const database = await openDb(t)
  const db = drizzle(database, { schema })
  for (const statement of DDL) await db.run(statement)
  const live = collect(database.stream('SELECT count(*) AS n FROM users'))
  await live.waitFor((c) => c.deliveries.length === 1, 'the first run')
  const run = await db.insert(users).values({ name: 'ada' }).run()
  assert.deepStrictEqual(run, { changes: 1, lastInsertRowid: 1 }, "run() resolves resqlite's RunResult")
  await live.waitFor((c) => c.last?.[0]?.n === 1, 'the re-run after a Drizzle insert')
  let release
  const gate = new Promise((resolve) => (release = resolve))
  let wrote = false
  const transaction = db.transaction(async (tx) => {
    await tx.insert(users).values({ name: 'bob' })
    wrote = true
    await gate
  })
  while (!wrote) await new Promise((r) => setTimeout(r, 1))
  assert.deepStrictEqual(await db.select({ n: count() }).from(users), [{ n: 1 }], 'reads outside see committed data')
  release()
  await transaction
  assert.deepStrictEqual(await db.select({ n: count() }).from(users), [{ n: 2 }])
  await live.waitFor((c) => c.last?.[0]?.n === 2, 'the re-run after the commit')
  live.stop()
})

test('Drizzle: bad input is refused with typed errors; the database stays intact', async (t) => {
  const database = await openDb(t)
  const db = drizzle(database, { schema })
  for (const statement of DDL) await db.run(statement)
  await db.insert(users).values({ name: 'ada' })
  await expectReject(
    () => db.insert(users).values({ name: 'ada' }).execute(),
    ResqliteError,
    'SQLITE_CONSTRAINT_UNIQUE',
  )
  await expectReject(() => db.run(sql`SELECT * FROM nope`), ResqliteError, 'SQLITE_ERROR', /nope/)
  // Transaction control as SQL is refused: transactions are db.transaction().
  await expectReject(() => db.run(sql`BEGIN`), ResqliteError, 'ERR_OPEN_TRANSACTION')
  assert.throws(() => drizzle({}), TypeError)
  assert.throws(() => drizzle(database, { cache: {} }), TypeError)
  assert.deepStrictEqual(await db.select({ name: users.name }).from(users), [{ name: 'ada' }])
})
