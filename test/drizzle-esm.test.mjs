// resqlite/drizzle from an ES module (docs/integrations.md, "From ESM and CommonJS"): the driver
// is built on drizzle-orm's ESM build, the copy the app imports, so what it throws is an
// instance of the classes the app imports from 'drizzle-orm'; the resqlite core behind it is
// the one the app imports from 'resqlite'. No CommonJS copy of drizzle-orm is loaded.
// (Kept in a file of its own: node --test runs each file in its own process, and no test here
// may load the CommonJS entries before the module-cache check.)

import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { DrizzleError, sql, TransactionRollbackError } from 'drizzle-orm'
import { integer, SQLiteTransaction, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { drizzle, ResqliteDrizzleDatabase } from '../dist/esm/drizzle.mjs'
import { ResqliteError } from '../dist/esm/index.mjs'
import { openDb } from './helpers.mjs'

const require = createRequire(import.meta.url)
const users = sqliteTable('users', { id: integer('id').primaryKey(), name: text('name').notNull() })

async function setup(t) {
  const db = drizzle(await openDb(t))
  await db.run(sql`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`)
  return db
}

test("tx.rollback() rejects with the TransactionRollbackError an ES-module app imports from 'drizzle-orm'", async (t) => {
  const db = await setup(t)
  let inside
  const error = await db
    .transaction(async (tx) => {
      inside = tx
      await tx.insert(users).values({ name: 'ada' })
      tx.rollback()
    })
    .then(
      () => assert.fail('the transaction resolved'),
      (e) => e,
    )
  assert.ok(error instanceof TransactionRollbackError, `got ${error?.constructor?.name}: not the app's class`)
  assert.ok(error instanceof DrizzleError)
  assert.ok(inside instanceof SQLiteTransaction, "the transaction is the app's SQLiteTransaction")
  assert.deepEqual(await db.select().from(users), [])
})

test('a nested rollback is the same class, and rolls back its savepoint only', async (t) => {
  const db = await setup(t)
  await db.transaction(async (tx) => {
    await tx.insert(users).values({ name: 'kept' })
    await assert.rejects(
      tx.transaction(async (inner) => {
        await inner.insert(users).values({ name: 'dropped' })
        inner.rollback()
      }),
      (error) => error instanceof TransactionRollbackError,
    )
  })
  assert.deepEqual(await db.select({ name: users.name }).from(users), [{ name: 'kept' }])
})

test("the database is the app's drizzle class; SQL errors are resqlite's one ResqliteError", async (t) => {
  const db = await setup(t)
  const { BaseSQLiteDatabase } = await import('drizzle-orm/sqlite-core')
  assert.ok(db instanceof ResqliteDrizzleDatabase)
  assert.ok(db instanceof BaseSQLiteDatabase, "the database extends the app's BaseSQLiteDatabase")
  const error = await db.run(sql`SELEC 1`).then(
    () => assert.fail('resolved'),
    (e) => e,
  )
  assert.ok(error instanceof ResqliteError, `got ${error?.constructor?.name}`)
  assert.equal(error.code, 'SQLITE_ERROR')
})

test("the ESM entry loads no CommonJS copy of drizzle-orm, and no second copy of resqlite's core", async (t) => {
  const db = await setup(t)
  await db.insert(users).values({ name: 'ada' })
  await db.transaction(async (tx) => tx.select().from(users))
  const loaded = Object.keys(require.cache)
  assert.deepEqual(
    loaded.filter((f) => /[\\/]drizzle-orm[\\/].*\.cjs$/.test(f)),
    [],
    'CommonJS drizzle-orm modules were loaded',
  )
  // The core's modules are loaded once, from dist/cjs.
  assert.ok(loaded.some((f) => /[\\/]dist[\\/]cjs[\\/]database\.js$/.test(f)))
  assert.equal(ResqliteError, require('../dist/cjs/index.js').ResqliteError)
})
