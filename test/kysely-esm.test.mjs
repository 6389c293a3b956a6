// resqlite/kysely from an ES module (docs/integrations.md, "From ESM and CommonJS"): the dialect
// is built on kysely's ESM build, the copy the app imports (its adapter, compiler and
// introspector are instances of the app's Kysely classes), over the one resqlite core. No
// CommonJS copy of kysely is loaded. (A file of its own: node --test runs each file in its own
// process, and nothing here may load the CommonJS entries before the module-cache check.)

import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql } from 'kysely'
import { ResqliteError } from '../dist/esm/index.mjs'
import { ResqliteDialect } from '../dist/esm/kysely.mjs'
import { openDb } from './helpers.mjs'

const require = createRequire(import.meta.url)

test("the dialect's adapter, compiler and introspector are the app's Kysely classes", async (t) => {
  const dialect = new ResqliteDialect({ database: await openDb(t) })
  const kysely = new Kysely({ dialect })
  assert.ok(dialect.createAdapter() instanceof SqliteAdapter, "the adapter is not the app's SqliteAdapter")
  assert.ok(dialect.createQueryCompiler() instanceof SqliteQueryCompiler)
  assert.ok(dialect.createIntrospector(kysely) instanceof SqliteIntrospector)
})

test('errors are the one ResqliteError; no CommonJS copy of kysely is loaded', async (t) => {
  const kysely = new Kysely({ dialect: new ResqliteDialect({ database: await openDb(t) }) })
  await sql`CREATE TABLE t (v INTEGER)`.execute(kysely)
  await kysely.transaction().execute((trx) => trx.insertInto('t').values({ v: 1 }).execute())
  await assert.rejects(kysely.selectFrom('nope').selectAll().execute(), (error) => {
    assert.ok(error instanceof ResqliteError, `got ${error?.constructor?.name}`)
    assert.equal(error.code, 'SQLITE_ERROR')
    return true
  })
  const loaded = Object.keys(require.cache)
  assert.deepEqual(
    loaded.filter((f) => /[\\/]kysely[\\/]dist[\\/]cjs[\\/]/.test(f)),
    [],
    'CommonJS kysely modules were loaded',
  )
  assert.equal(ResqliteError, require('../dist/cjs/index.js').ResqliteError)
})
