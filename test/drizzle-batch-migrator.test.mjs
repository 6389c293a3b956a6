// resqlite/drizzle's db.batch([...]) and resqlite/drizzle/migrator (docs/integrations.md
// "Drizzle"): a batch runs its queries in order in one transaction (all or nothing) and resolves
// one result per query, each what the query alone resolves; migrate(db, { migrationsFolder })
// applies a drizzle-kit migrations folder once, in one transaction.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { eq, relations, sql, TransactionRollbackError } from 'drizzle-orm'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { drizzle } from '../dist/esm/drizzle.mjs'
import { migrate } from '../dist/esm/drizzle-migrator.mjs'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb, tempDir } from './helpers.mjs'

const people = sqliteTable('people', { id: integer('id').primaryKey(), name: text('name').notNull().unique() })
const notes = sqliteTable('notes', {
  id: integer('id').primaryKey(),
  personId: integer('person_id').notNull(),
  body: text('body').notNull(),
})
const schema = {
  people,
  notes,
  peopleRelations: relations(people, ({ many }) => ({ notes: many(notes) })),
  notesRelations: relations(notes, ({ one }) => ({
    person: one(people, { fields: [notes.personId], references: [people.id] }),
  })),
}

async function setup(t) {
  const database = await openDb(t)
  await database.execute('CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)')
  await database.execute('CREATE TABLE notes (id INTEGER PRIMARY KEY, person_id INTEGER NOT NULL, body TEXT NOT NULL)')
  return { database, db: drizzle(database, { schema }) }
}

test('db.batch() resolves one result per query, in order, each later query seeing the earlier writes', async (t) => {
  const { db } = await setup(t)
  const results = await db.batch([
    db.insert(people).values({ id: 1, name: 'ada' }).returning({ id: people.id }),
    db.run(sql`INSERT INTO people (id, name) VALUES (2, 'bob')`),
    db.insert(notes).values([
      { personId: 1, body: 'first' },
      { personId: 1, body: 'second' },
    ]),
    db.update(people).set({ name: 'Ada' }).where(eq(people.id, 1)).returning(),
    db.select({ name: people.name }).from(people).orderBy(people.id),
    db.query.people.findMany({ with: { notes: { columns: { body: true } } }, orderBy: people.id }),
    db.query.people.findFirst({ where: eq(people.id, 2) }),
    db.all(sql`SELECT count(*) AS n FROM notes`),
    db.get(sql`SELECT name FROM people WHERE id = 2`),
    db.values(sql`SELECT id, name FROM people ORDER BY id`),
    db.delete(notes).where(eq(notes.body, 'second')),
  ])
  assert.deepEqual(results, [
    [{ id: 1 }],
    { changes: 1, lastInsertRowid: 2 },
    { changes: 2, lastInsertRowid: 2 },
    [{ id: 1, name: 'Ada' }],
    [{ name: 'Ada' }, { name: 'bob' }],
    [
      { id: 1, name: 'Ada', notes: [{ body: 'first' }, { body: 'second' }] },
      { id: 2, name: 'bob', notes: [] },
    ],
    { id: 2, name: 'bob' },
    [{ n: 2 }],
    { name: 'bob' },
    [
      [1, 'Ada'],
      [2, 'bob'],
    ],
    { changes: 1, lastInsertRowid: 2 },
  ])
  assert.deepEqual(await db.select().from(notes), [{ id: 1, personId: 1, body: 'first' }])
})

test('db.batch() is all or nothing: the first failure rolls the batch back and rejects with its error', async (t) => {
  const { db, database } = await setup(t)
  await db.insert(people).values({ id: 9, name: 'taken' })
  const err = await expectReject(
    () =>
      db.batch([
        db.insert(people).values({ id: 1, name: 'ada' }),
        db.insert(notes).values({ personId: 1, body: 'kept only with the batch' }),
        db.insert(people).values({ id: 2, name: 'taken' }),
        db.run(sql`INSERT INTO notes (person_id, body) VALUES (2, 'never runs')`),
      ]),
    ResqliteError,
    'SQLITE_CONSTRAINT_UNIQUE',
  )
  assert.match(err.message, /UNIQUE/)
  const ranAfter = (await database.select('SELECT count(*) AS n FROM notes'))[0].n !== 0
  assert.equal(ranAfter, false, 'no write of the failed batch stays')
  assert.deepEqual(await db.select().from(people), [{ id: 9, name: 'taken' }])
})

test('db.batch() refuses what is not a query of the database before running any of it', async (t) => {
  const { db } = await setup(t)
  assert.deepEqual(await db.batch([]), [])
  for (const bad of [undefined, 'SELECT 1', { 0: db.select().from(people) }]) {
    await assert.rejects(db.batch(bad), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })
  }
  // Queries of another database (which would otherwise run on this one) are refused too.
  const other = drizzle(await openDb(t), { schema })
  const foreign = [other.select().from(people), other.run(sql`DELETE FROM people`), other.query.people.findMany()]
  for (const item of ['SELECT 1', 42, null, Promise.resolve([]), sql`SELECT 1`, ...foreign]) {
    await assert.rejects(db.batch([db.insert(people).values({ id: 1, name: 'ada' }), item]), {
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      message: /item 1 is not a query/,
    })
  }
  assert.deepEqual(await db.select().from(people), [], 'the valid item before the bad one did not run')
})

test('db.batch() inside a transaction body runs as a savepoint of it', async (t) => {
  const { db } = await setup(t)
  await assert.rejects(
    db.transaction(async (tx) => {
      const results = await db.batch([
        db.insert(people).values({ id: 1, name: 'ada' }),
        db.select({ name: people.name }).from(people),
      ])
      assert.deepEqual(results[1], [{ name: 'ada' }])
      assert.deepEqual(await tx.select({ name: people.name }).from(people), [{ name: 'ada' }])
      tx.rollback()
    }),
    (error) => error instanceof TransactionRollbackError,
  )
  assert.deepEqual(await db.select().from(people), [], "the batch's writes rolled back with the transaction")
})

/** A drizzle-kit migrations folder: `meta/_journal.json` and one SQL file per migration. */
function migrationsFolder(t, migrations) {
  const folder = path.join(tempDir(t), 'drizzle')
  fs.mkdirSync(path.join(folder, 'meta'), { recursive: true })
  const entries = migrations.map(([tag], i) => ({
    idx: i,
    version: '6',
    when: 1_700_000_000_000 + i,
    tag,
    breakpoints: true,
  }))
  fs.writeFileSync(
    path.join(folder, 'meta', '_journal.json'),
    JSON.stringify({ version: '7', dialect: 'sqlite', entries }),
  )
  for (const [tag, statements] of migrations) {
    fs.writeFileSync(path.join(folder, `${tag}.sql`), statements.join('\n--> statement-breakpoint\n'))
  }
  return folder
}

const MIGRATIONS = [
  ['0000_people', ['CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);']],
  [
    '0001_notes',
    [
      'CREATE TABLE notes (id INTEGER PRIMARY KEY, person_id INTEGER NOT NULL, body TEXT NOT NULL);',
      'CREATE INDEX notes_person ON notes (person_id);',
    ],
  ],
]

test('migrate() applies a migrations folder once, recording each migration', async (t) => {
  const database = await openDb(t)
  const db = drizzle(database, { schema })
  const migrationsFolder_ = migrationsFolder(t, MIGRATIONS)
  await migrate(db, { migrationsFolder: migrationsFolder_ })
  await migrate(db, { migrationsFolder: migrationsFolder_ })
  await db.insert(people).values({ id: 1, name: 'ada' })
  await db.insert(notes).values({ personId: 1, body: 'hello' })
  assert.deepEqual(await db.query.people.findMany({ with: { notes: { columns: { body: true } } } }), [
    { id: 1, name: 'ada', notes: [{ body: 'hello' }] },
  ])
  const recorded = await database.select('SELECT created_at FROM __drizzle_migrations ORDER BY created_at')
  assert.deepEqual(
    recorded.map((r) => Number(r.created_at)),
    [1_700_000_000_000, 1_700_000_000_001],
  )
  // A table of another name, as Drizzle's migrators take it.
  const other = drizzle(await openDb(t))
  await migrate(other, { migrationsFolder: migrationsFolder_, migrationsTable: 'my_migrations' })
  assert.deepEqual(await other.all(sql`SELECT count(*) AS n FROM my_migrations`), [{ n: 2 }])
})

test('five migrate() calls at once apply each migration once', { timeout: 30_000 }, async (t) => {
  const database = await openDb(t)
  const db = drizzle(database)
  const folder = migrationsFolder(t, MIGRATIONS)
  await Promise.all(Array.from({ length: 5 }, () => migrate(db, { migrationsFolder: folder })))
  assert.deepEqual(await database.select('SELECT count(*) AS n FROM __drizzle_migrations'), [{ n: 2 }])
})

test('a failing migration leaves none of the run behind; bad arguments are refused', async (t) => {
  const database = await openDb(t)
  const db = drizzle(database)
  const folder = migrationsFolder(t, [...MIGRATIONS, ['0002_broken', ['CREATE TABLE people (id INTEGER);']]])
  await expectReject(() => migrate(db, { migrationsFolder: folder }), ResqliteError, 'SQLITE_ERROR', /already exists/)
  assert.deepEqual(await database.select("SELECT name FROM sqlite_master WHERE name IN ('people', 'notes')"), [])
  // Arguments
  await assert.rejects(migrate(database, { migrationsFolder: folder }), {
    name: 'TypeError',
    code: 'ERR_INVALID_ARG_TYPE',
  })
  await assert.rejects(migrate(db, {}), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })
  await assert.rejects(migrate(db, { migrationsFolder: path.join(folder, 'nowhere') }), {
    name: 'TypeError',
    code: 'ERR_INVALID_ARG_VALUE',
    message: /meta\/_journal\.json/,
  })
})

test('two connections migrating one file at once apply each migration once (the run begins IMMEDIATE)', {
  timeout: 60_000,
}, async (t) => {
  const dir = tempDir(t)
  for (let round = 0; round < 5; round++) {
    const file = path.join(dir, `shared-${round}.db`)
    const [a, b] = [await Database.open(file), await Database.open(file)]
    try {
      // Both connections find the migrations table already there (its CREATE then writes
      // nothing), so the first statement each runs is a read: without IMMEDIATE both would read,
      // then race to write, and the later one fail on its stale snapshot.
      await migrate(drizzle(a), { migrationsFolder: migrationsFolder(t, MIGRATIONS.slice(0, 1)) })
      const folder = migrationsFolder(t, MIGRATIONS)
      await Promise.all([
        migrate(drizzle(a), { migrationsFolder: folder }),
        migrate(drizzle(b), { migrationsFolder: folder }),
      ])
      assert.deepEqual(await a.select('SELECT count(*) AS n FROM __drizzle_migrations'), [{ n: 2 }])
    } finally {
      await a.close()
      await b.close()
    }
  }
})

test("db.batch() and migrate() on a closed database reject with ERR_DATABASE_CLOSED, and their errors name the caller's frames", async (t) => {
  const database = await openDb(t)
  const db = drizzle(database)
  await db.run(sql`CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)`)
  async function callerOfBatch() {
    await db.batch([db.insert(people).values({ id: 1, name: 'a' }), db.insert(people).values({ id: 2, name: 'a' })])
  }
  const failed = await callerOfBatch().catch((e) => e)
  assert.ok(failed instanceof Error)
  assert.match(failed.stack, /callerOfBatch/)
  assert.deepEqual(await database.select('SELECT count(*) AS n FROM people'), [{ n: 0 }])
  const folder = migrationsFolder(t, MIGRATIONS)
  await database.close()
  await expectReject(() => db.batch([db.select().from(people)]), ResqliteError, 'ERR_DATABASE_CLOSED')
  await expectReject(() => migrate(db, { migrationsFolder: folder }), ResqliteError, 'ERR_DATABASE_CLOSED')
})
