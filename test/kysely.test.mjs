// resqlite/kysely with the real kysely package (docs/integrations.md "Kysely"): migrations, CRUD
// with joins and aggregates, RETURNING, transactions and savepoints, streaming, reads during a
// transaction — and the same operations' results equal to Kysely's own SqliteDialect.
//
// The reference: Kysely's SqliteDialect needs a synchronous driver shaped like better-sqlite3.
// better-sqlite3 is not a dependency (its prebuilt binaries crash on Node 20), so the reference
// runs over node:sqlite where the runtime has it (with StatementSync#columns: Node 22.16+), and
// its results were recorded below (EXPECTED, from Node 24.21) for runtimes without it.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Kysely, SqliteDialect, sql } from 'kysely'
import { ResqliteError } from '../dist/esm/index.mjs'
import { ResqliteDialect } from '../dist/esm/kysely.mjs'
import { expectReject, openDb } from './helpers.mjs'
import { Migrator } from './kysely-version/migrator.mjs'

const migrations = {
  '001_person': {
    async up(db) {
      await db.schema
        .createTable('person')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .execute()
    },
  },
  '002_pet': {
    async up(db) {
      await db.schema
        .createTable('pet')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('owner_id', 'integer', (c) => c.notNull().references('person.id').onDelete('cascade'))
        .addColumn('species', 'text', (c) => c.notNull())
        .addColumn('age', 'integer')
        .execute()
      await db.schema.createIndex('pet_owner').on('pet').column('owner_id').execute()
    },
  },
  '003_person_city': {
    async up(db) {
      await db.schema.alterTable('person').addColumn('city', 'text').execute()
    },
  },
}

/** The operations both dialects run; their results, as plain JSON (bigints as strings). */
async function operations(db) {
  const out = {}
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const migrated = await migrator.migrateToLatest()
  if (migrated.error) throw migrated.error
  out.migrations = migrated.results.map((r) => `${r.migrationName}:${r.direction}:${r.status}`)
  out.tables = (await db.introspection.getTables()).map((t) => ({
    name: t.name,
    columns: t.columns.map((c) => `${c.name}:${c.dataType}:${c.isNullable}`),
  }))

  out.insertMany = await db
    .insertInto('person')
    .values([
      { name: 'ada', city: 'london' },
      { name: 'bob', city: 'paris' },
      { name: 'cy', city: 'london' },
    ])
    .executeTakeFirst()
  out.insertReturning = await db
    .insertInto('person')
    .values({ name: 'dee', city: null })
    .returning(['id', 'name'])
    .executeTakeFirstOrThrow()
  await db
    .insertInto('pet')
    .values([
      { owner_id: 1, species: 'cat', age: 3 },
      { owner_id: 1, species: 'dog', age: 5 },
      { owner_id: 2, species: 'cat', age: 1 },
      { owner_id: 4, species: 'fish', age: null },
    ])
    .execute()
  out.join = await db
    .selectFrom('person')
    .innerJoin('pet', 'pet.owner_id', 'person.id')
    .select(['person.name', 'pet.species', 'pet.age'])
    .orderBy('person.name')
    .orderBy('pet.species')
    .execute()
  out.aggregate = await db
    .selectFrom('person')
    .leftJoin('pet', 'pet.owner_id', 'person.id')
    .select((eb) => [
      'person.name',
      eb.fn.count('pet.id').as('pets'),
      eb.fn.sum('pet.age').as('ages'),
      eb.fn.max('pet.species').as('last_species'),
    ])
    .groupBy('person.id')
    .orderBy('pets', 'desc')
    .orderBy('person.name')
    .execute()
  out.byCity = await db
    .selectFrom('person')
    .select(['city', (eb) => eb.fn.countAll().as('n')])
    .groupBy('city')
    .having((eb) => eb.fn.countAll(), '>', 0)
    .orderBy('city')
    .execute()
  out.update = await db
    .updateTable('pet')
    .set((eb) => ({ age: eb('age', '+', 1) }))
    .where('species', '=', 'cat')
    .executeTakeFirst()
  out.updateReturning = await db
    .updateTable('person')
    .set({ city: 'rome' })
    .where('name', '=', 'bob')
    .returningAll()
    .execute()
  out.deleteResult = await db.deleteFrom('pet').where('age', 'is', null).executeTakeFirst()
  out.raw = (await sql`SELECT count(*) AS n, total(age) AS t FROM pet`.execute(db)).rows
  out.rawWrite = await sql`UPDATE pet SET age = age * 2 WHERE species = ${'dog'}`.execute(db)

  await db.transaction().execute(async (trx) => {
    await trx.insertInto('person').values({ name: 'eve', city: 'oslo' }).execute()
    await trx.updateTable('pet').set({ owner_id: 5 }).where('species', '=', 'dog').execute()
  })
  out.rolledBack = await db
    .transaction()
    .execute(async (trx) => {
      await trx.insertInto('person').values({ name: 'fay', city: 'oslo' }).execute()
      await trx.deleteFrom('pet').execute()
      throw new Error('no')
    })
    .then(
      () => 'committed',
      (e) => e.message,
    )
  out.failedInTransaction = await db
    .transaction()
    .execute(async (trx) => {
      await trx.insertInto('person').values({ name: 'gus' }).execute()
      await trx.insertInto('person').values({ name: 'ada' }).execute() // UNIQUE: fails
    })
    .then(
      () => 'committed',
      (e) => (e instanceof Error ? 'failed' : 'odd'),
    )

  const trx = await db.startTransaction().execute()
  await trx.insertInto('person').values({ name: 'hal' }).execute()
  const sp1 = await trx.savepoint('sp1').execute()
  await sp1.insertInto('person').values({ name: 'ivy' }).execute()
  const sp2 = await sp1.savepoint('sp2').execute()
  await sp2.insertInto('person').values({ name: 'jo' }).execute()
  const back = await sp2.rollbackToSavepoint('sp2').execute()
  const released = await back.releaseSavepoint('sp1').execute()
  out.insideSavepoints = (await released.selectFrom('person').select('name').orderBy('id').execute()).map((r) => r.name)
  await released.commit().execute()

  out.people = await db.selectFrom('person').selectAll().orderBy('id').execute()
  out.pets = await db.selectFrom('pet').selectAll().orderBy('id').execute()
  const streamed = []
  for await (const row of db.selectFrom('person').select(['id', 'name']).orderBy('id').stream(2)) streamed.push(row)
  out.streamed = streamed
  return JSON.parse(JSON.stringify(out, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)))
}

// Recorded with Kysely's SqliteDialect over node:sqlite (Node 24.21): see the header.
const EXPECTED = JSON.parse(
  '{"migrations":["001_person:Up:Success","002_pet:Up:Success","003_person_city:Up:Success"],"tables":[{"name":"person","columns":["id:INTEGER:true","name:TEXT:false","city:TEXT:true"]},{"name":"pet","columns":["id:INTEGER:true","owner_id:INTEGER:false","species:TEXT:false","age:INTEGER:true"]}],"insertMany":{"insertId":"3n","numInsertedOrUpdatedRows":"3n"},"insertReturning":{"id":4,"name":"dee"},"join":[{"name":"ada","species":"cat","age":3},{"name":"ada","species":"dog","age":5},{"name":"bob","species":"cat","age":1},{"name":"dee","species":"fish","age":null}],"aggregate":[{"name":"ada","pets":2,"ages":8,"last_species":"dog"},{"name":"bob","pets":1,"ages":1,"last_species":"cat"},{"name":"dee","pets":1,"ages":null,"last_species":"fish"},{"name":"cy","pets":0,"ages":null,"last_species":null}],"byCity":[{"city":null,"n":1},{"city":"london","n":2},{"city":"paris","n":1}],"update":{"numUpdatedRows":"2n"},"updateReturning":[{"id":2,"name":"bob","city":"rome"}],"deleteResult":{"numDeletedRows":"1n"},"raw":[{"n":3,"t":11}],"rawWrite":{"numAffectedRows":"1n","insertId":"4n","rows":[]},"rolledBack":"no","failedInTransaction":"failed","insideSavepoints":["ada","bob","cy","dee","eve","hal","ivy"],"people":[{"id":1,"name":"ada","city":"london"},{"id":2,"name":"bob","city":"rome"},{"id":3,"name":"cy","city":"london"},{"id":4,"name":"dee","city":null},{"id":5,"name":"eve","city":"oslo"},{"id":6,"name":"hal","city":null},{"id":7,"name":"ivy","city":null}],"pets":[{"id":1,"owner_id":1,"species":"cat","age":4},{"id":2,"owner_id":5,"species":"dog","age":10},{"id":3,"owner_id":2,"species":"cat","age":2}],"streamed":[{"id":1,"name":"ada"},{"id":2,"name":"bob"},{"id":3,"name":"cy"},{"id":4,"name":"dee"},{"id":5,"name":"eve"},{"id":6,"name":"hal"},{"id":7,"name":"ivy"}]}',
)

/** node:sqlite shaped as the better-sqlite3 database Kysely's SqliteDialect drives, or
 * undefined where the runtime lacks it. */
async function nodeSqliteReference() {
  const nodeSqlite = await import('node:sqlite').catch(() => undefined)
  if (nodeSqlite === undefined || typeof nodeSqlite.StatementSync.prototype.columns !== 'function') return undefined
  const raw = new nodeSqlite.DatabaseSync(':memory:')
  raw.exec('PRAGMA foreign_keys = ON')
  return {
    prepare(text) {
      const stmt = raw.prepare(text)
      return {
        reader: stmt.columns().length > 0,
        all: (params) => stmt.all(...params),
        run: (params) => stmt.run(...params),
        iterate: (params) => stmt.iterate(...params),
      }
    },
    close: () => raw.close(),
  }
}

function kyselyOver(database) {
  return new Kysely({ dialect: new ResqliteDialect({ database }) })
}

test('Kysely over resqlite gives the results Kysely gives over its own SqliteDialect', async (t) => {
  const db = await openDb(t)
  const resqlite = await operations(kyselyOver(db))
  assert.deepStrictEqual(resqlite, EXPECTED)
  const reference = await nodeSqliteReference()
  if (reference === undefined) {
    t.diagnostic('no node:sqlite with StatementSync#columns here: compared with the recorded results only')
    return
  }
  const kysely = new Kysely({ dialect: new SqliteDialect({ database: reference }) })
  try {
    assert.deepStrictEqual(resqlite, await operations(kysely))
  } finally {
    await kysely.destroy()
  }
})

test('a Kysely transaction holds the writer; reads outside it go on and see committed data', async (t) => {
  const db = await openDb(t)
  const kysely = kyselyOver(db)
  await kysely.schema.createTable('t').addColumn('v', 'integer').execute()
  await kysely.insertInto('t').values({ v: 1 }).execute()
  let release
  const gate = new Promise((resolve) => (release = resolve))
  let inside
  const transaction = kysely.transaction().execute(async (trx) => {
    await trx.insertInto('t').values({ v: 2 }).execute()
    inside = await trx
      .selectFrom('t')
      .select((eb) => eb.fn.sum('v').as('s'))
      .executeTakeFirst()
    await gate
  })
  // Wait until the transaction has written, then read from outside it, several at once.
  while (inside === undefined) await new Promise((r) => setTimeout(r, 1))
  const outside = await Promise.all(
    Array.from({ length: 8 }, () =>
      kysely
        .selectFrom('t')
        .select((eb) => eb.fn.sum('v').as('s'))
        .executeTakeFirst(),
    ),
  )
  assert.deepStrictEqual(inside, { s: 3 }, 'the transaction sees its own write')
  assert.ok(
    outside.every((r) => r.s === 1),
    'reads outside see the committed state only',
  )
  // A write outside waits its turn behind the transaction.
  const write = kysely.insertInto('t').values({ v: 10 }).execute()
  release()
  await transaction
  await write
  assert.deepStrictEqual(
    await kysely
      .selectFrom('t')
      .select((eb) => eb.fn.sum('v').as('s'))
      .executeTakeFirst(),
    { s: 13 },
  )
})

test('Kysely errors are resqlite errors; bad dialect config and transaction settings are refused', async (t) => {
  const db = await openDb(t)
  const kysely = kyselyOver(db)
  await expectReject(() => kysely.selectFrom('nope').selectAll().execute(), ResqliteError, 'SQLITE_ERROR', /nope/)
  await expectReject(
    () =>
      kysely
        .transaction()
        .setIsolationLevel('read committed')
        .execute(async () => {}),
    ResqliteError,
    'ERR_INVALID_ARG_VALUE',
    /isolation/,
  )
  assert.throws(() => new ResqliteDialect({}), TypeError)
  assert.throws(() => new ResqliteDialect(), TypeError)
  // Streaming is for selects.
  await kysely.schema.createTable('t').addColumn('v', 'integer').execute()
  await assert.rejects(
    async () => {
      for await (const _ of kysely.insertInto('t').values({ v: 1 }).stream()) {
      }
    },
    { code: 'ERR_NOT_READ_ONLY' },
  )
  // destroy() closes the database the dialect was given.
  await kysely.destroy()
  await expectReject(() => db.select('SELECT 1'), ResqliteError, 'ERR_DATABASE_CLOSED')
})

test('the dialect opens its database lazily from a function, once', async (t) => {
  let opened = 0
  let db
  const kysely = kyselyOver(async () => {
    opened++
    db = await openDb(t)
    return db
  })
  assert.equal(opened, 0)
  await Promise.all([sql`SELECT 1`.execute(kysely), sql`SELECT 2`.execute(kysely)])
  assert.equal(opened, 1)
  await kysely.destroy()
})
