// resqlite/kysely: Kysely's Migrator run several times at once applies each migration once
// (docs/integrations.md "Kysely": the adapter's migration lock), and Kysely's `log` shows the
// transaction statements (`begin`, `commit`, `rollback`, `savepoint`, `rollback to`, `release`)
// as Kysely's own SQLite driver sends them.

import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { Kysely, sql } from 'kysely'
import { Database } from '../dist/esm/index.mjs'
import { ResqliteDialect } from '../dist/esm/kysely.mjs'
import { openDb, tempDir } from './helpers.mjs'
import { Migrator } from './kysely-version/migrator.mjs'

/** Migrations that count their runs; the second waits a little, so runs started together overlap. */
function countingMigrations() {
  const ran = []
  const migrations = {
    migration1: {
      async up(db) {
        ran.push('migration1')
        await db.schema
          .createTable('a')
          .addColumn('id', 'integer', (c) => c.primaryKey())
          .execute()
      },
    },
    migration2: {
      async up(db) {
        ran.push('migration2')
        await new Promise((resolve) => setTimeout(resolve, 5))
        await db.insertInto('a').values({ id: 1 }).execute()
      },
    },
  }
  return { ran, migrations }
}

test('five concurrent migrateToLatest() calls run each migration once', { timeout: 30_000 }, async (t) => {
  const db = await openDb(t)
  const kysely = new Kysely({ dialect: new ResqliteDialect({ database: db }) })
  const { ran, migrations } = countingMigrations()
  const migrator = new Migrator({ db: kysely, provider: { getMigrations: async () => migrations } })
  const results = await Promise.all(Array.from({ length: 5 }, () => migrator.migrateToLatest()))
  for (const r of results) assert.equal(r.error, undefined, `a run failed: ${r.error?.message}`)
  assert.deepEqual(ran, ['migration1', 'migration2'])
  // One run applied both; the others found nothing left to do.
  const applied = results.map((r) => r.results.map((m) => `${m.migrationName}:${m.status}`).join(','))
  assert.deepEqual(applied.sort(), ['', '', '', '', 'migration1:Success,migration2:Success'])
  assert.deepEqual(await db.select('SELECT name FROM kysely_migration ORDER BY name'), [
    { name: 'migration1' },
    { name: 'migration2' },
  ])
})

test('with disableTransactions, concurrent runs still take turns under the lock', { timeout: 30_000 }, async (t) => {
  const db = await openDb(t)
  const kysely = new Kysely({ dialect: new ResqliteDialect({ database: db }) })
  const { ran, migrations } = countingMigrations()
  const migrator = new Migrator({
    db: kysely,
    provider: { getMigrations: async () => migrations },
    disableTransactions: true,
  })
  const results = await Promise.all(Array.from({ length: 5 }, () => migrator.migrateToLatest()))
  for (const r of results) assert.equal(r.error, undefined, `a run failed: ${r.error?.message}`)
  assert.deepEqual(ran, ['migration1', 'migration2'])
})

test('migrations of one Database through two Kysely instances do not overlap', { timeout: 30_000 }, async (t) => {
  const db = await openDb(t)
  const { ran, migrations } = countingMigrations()
  const runs = [0, 1].map(() => {
    const kysely = new Kysely({ dialect: new ResqliteDialect({ database: db }) })
    return new Migrator({ db: kysely, provider: { getMigrations: async () => migrations } }).migrateToLatest()
  })
  const results = await Promise.all(runs)
  for (const r of results) assert.equal(r.error, undefined, `a run failed: ${r.error?.message}`)
  assert.deepEqual(ran, ['migration1', 'migration2'])
})

test('two connections migrating one file at once run each migration once (the run begins IMMEDIATE)', {
  timeout: 60_000,
}, async (t) => {
  const dir = tempDir(t)
  for (let round = 0; round < 5; round++) {
    const file = path.join(dir, `shared-${round}.db`)
    const [a, b] = [await Database.open(file), await Database.open(file)]
    const [ka, kb] = [a, b].map((database) => new Kysely({ dialect: new ResqliteDialect({ database }) }))
    try {
      // The Migrator's tables exist already, so each run's first statement is a read: without
      // IMMEDIATE both would read, then race to write, and the later one fail on its stale
      // snapshot.
      await new Migrator({ db: ka, provider: { getMigrations: async () => ({}) } }).migrateToLatest()
      const { ran, migrations } = countingMigrations()
      const runs = [ka, kb].map((db) =>
        new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateToLatest(),
      )
      for (const r of await Promise.all(runs)) assert.equal(r.error, undefined, `a run failed: ${r.error?.message}`)
      assert.deepEqual(ran, ['migration1', 'migration2'])
    } finally {
      await a.close()
      await b.close()
    }
  }
})

test('a migration run is one transaction: a failing migration leaves none of the run behind', async (t) => {
  const db = await openDb(t)
  const kysely = new Kysely({ dialect: new ResqliteDialect({ database: db }) })
  const migrations = {
    m1: { up: (k) => k.schema.createTable('kept_only_if_all_pass').addColumn('v', 'integer').execute() },
    m2: {
      async up() {
        throw new Error('m2 fails')
      },
    },
  }
  const migrator = new Migrator({ db: kysely, provider: { getMigrations: async () => migrations } })
  const { error, results } = await migrator.migrateToLatest()
  assert.equal(error?.message, 'm2 fails')
  assert.deepEqual(
    results.map((r) => `${r.migrationName}:${r.status}`),
    ['m1:Success', 'm2:Error'],
  )
  assert.deepEqual(await db.select("SELECT name FROM sqlite_master WHERE name = 'kept_only_if_all_pass'"), [])
  assert.deepEqual(await db.select('SELECT name FROM kysely_migration'), [])
  // The lock was released: the next run (now passing) goes ahead.
  migrations.m2 = { up: async () => {} }
  const again = await migrator.migrateToLatest()
  assert.equal(again.error, undefined)
  assert.deepEqual(
    again.results.map((r) => `${r.migrationName}:${r.status}`),
    ['m1:Success', 'm2:Success'],
  )
})

test("Kysely's log shows begin, commit, rollback and the savepoint statements", async (t) => {
  const db = await openDb(t)
  const logged = []
  const kysely = new Kysely({
    dialect: new ResqliteDialect({ database: db }),
    log: (event) => logged.push(`${event.level}: ${event.query.sql}`),
  })
  await kysely.schema.createTable('t').addColumn('v', 'integer').execute()
  const insert = (k, v) => k.insertInto('t').values({ v }).execute()

  logged.length = 0
  await kysely.transaction().execute((trx) => insert(trx, 1))
  assert.deepEqual(logged, ['query: begin', 'query: insert into "t" ("v") values (?)', 'query: commit'])

  logged.length = 0
  await assert.rejects(
    kysely.transaction().execute(async (trx) => {
      await insert(trx, 2)
      throw new Error('abandon')
    }),
    /abandon/,
  )
  assert.deepEqual(logged, ['query: begin', 'query: insert into "t" ("v") values (?)', 'query: rollback'])

  logged.length = 0
  const trx = await kysely.startTransaction().execute()
  const sp1 = await trx.savepoint('sp1').execute()
  await insert(sp1, 3)
  const rolled = await sp1.rollbackToSavepoint('sp1').execute()
  const sp2 = await rolled.savepoint('sp2').execute()
  await insert(sp2, 4)
  const released = await sp2.releaseSavepoint('sp2').execute()
  await released.commit().execute()
  assert.deepEqual(logged, [
    'query: begin',
    'query: savepoint "sp1"',
    'query: insert into "t" ("v") values (?)',
    'query: rollback to "sp1"',
    'query: savepoint "sp2"',
    'query: insert into "t" ("v") values (?)',
    'query: release "sp2"',
    'query: commit',
  ])
  assert.deepEqual(await db.select('SELECT v FROM t ORDER BY v'), [{ v: 1 }, { v: 4 }])
})

test('a logged transaction step that fails is logged as an error, and a raw `begin` is still refused', async (t) => {
  const db = await openDb(t)
  const events = []
  const kysely = new Kysely({
    dialect: new ResqliteDialect({ database: db }),
    log: (event) => events.push(event),
  })
  const trx = await kysely.startTransaction().execute()
  // No savepoint of that name: the step's statement is logged with the error it raised.
  await assert.rejects(trx.releaseSavepoint('nope').execute(), { code: 'ERR_INVALID_ARG_VALUE' })
  const failed = events.at(-1)
  assert.equal(failed.level, 'error')
  assert.equal(failed.query.sql, 'release "nope"')
  await trx.rollback().execute()
  // SQL text is not a transaction step: a raw BEGIN goes to resqlite, which refuses it.
  await assert.rejects(sql`begin`.execute(kysely), { code: 'ERR_OPEN_TRANSACTION' })
  assert.deepEqual(await db.select('SELECT 1 AS ok'), [{ ok: 1 }])
})
