// The CommonJS entry works and shares its classes with the ESM entry.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import * as esm from '../dist/esm/index.mjs'

const require = createRequire(import.meta.url)

test('require() exposes Database and ResqliteError, the same classes as the ESM entry', async (t) => {
  const cjs = require('../dist/cjs/index.js')
  assert.equal(typeof cjs.Database, 'function')
  assert.equal(typeof cjs.ResqliteError, 'function')
  assert.equal(cjs.ResqliteError, esm.ResqliteError, 'ResqliteError must be the same class from both entries')
  assert.ok(cjs.ResqliteError.prototype instanceof Error, 'ResqliteError must extend Error')

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const db = await cjs.Database.open(path.join(dir, 'cjs.db'))
  try {
    await db.execute('CREATE TABLE t (v TEXT)')
    await db.execute('INSERT INTO t VALUES (?)', ['from cjs'])
    assert.deepStrictEqual(await db.select('SELECT v FROM t'), [{ v: 'from cjs' }])
    // an error raised through the CJS entry is an instance of the ESM class
    let err
    try {
      await db.select('SELEC 1')
    } catch (e) {
      err = e
    }
    assert.ok(err instanceof esm.ResqliteError, `expected the ESM ResqliteError, got ${err?.constructor?.name}`)
    assert.ok(err instanceof cjs.ResqliteError)
    assert.equal(err.code, 'SQLITE_ERROR')
  } finally {
    await db.close()
  }
})

test('every subpath export resolves to ESM, CommonJS and types; one core behind all of them', async (t) => {
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url)))
  for (const [subpath, entry] of Object.entries(pkg.exports)) {
    for (const file of [entry.import.types, entry.import.default, entry.require.types, entry.require.default]) {
      assert.ok(fs.existsSync(new URL(`../${file}`, import.meta.url)), `${subpath}: ${file} is built`)
    }
    // The package's own name resolves through its exports (self-reference), as users import it.
    const specifier = path.posix.join(pkg.name, subpath)
    const fromEsm = await import(specifier)
    const fromCjs = require(specifier)
    // resqlite/sqlite3's ESM entry also has a default export, the module itself (`import sqlite3
    // from 'resqlite/sqlite3'`, as sqlite3 users import the CommonJS sqlite3).
    const named = Object.keys(fromEsm).filter((name) => name !== 'default' || subpath !== './sqlite3')
    assert.deepStrictEqual(named.sort(), Object.keys(fromCjs).sort(), `${specifier}: same exports`)
    if (subpath === './sqlite3') assert.equal(fromEsm.default, fromCjs)
    if (subpath === '.') {
      // The core: the same classes from both entries.
      for (const name of Object.keys(fromCjs)) assert.equal(fromEsm[name], fromCjs[name], `${specifier}: ${name}`)
    } else {
      // An adapter: each entry is built on its own module system's copy of the ORM (the one the
      // app imports), so its classes differ; both run over the one core (tested below).
      for (const name of Object.keys(fromCjs)) assert.equal(typeof fromEsm[name], typeof fromCjs[name], name)
    }
  }

  // The CommonJS adapters work over a Database from the ESM entry, and their errors are the
  // core's one ResqliteError.
  const db = await esm.Database.open(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-')), 'cjs.db'))
  t.after(() => db.close())
  const { Kysely } = require('kysely')
  const { sql } = require('drizzle-orm')
  const kysely = new Kysely({ dialect: new (require('resqlite/kysely').ResqliteDialect)({ database: db }) })
  await kysely.transaction().execute((trx) => trx.schema.createTable('t').addColumn('v', 'integer').execute())
  await kysely.insertInto('t').values({ v: 1 }).execute()
  const drizzle = require('resqlite/drizzle').drizzle(db)
  assert.deepEqual(await drizzle.all(sql`SELECT v FROM t`), [{ v: 1 }])
  const { TransactionRollbackError } = require('drizzle-orm')
  await assert.rejects(
    drizzle.transaction(async (tx) => tx.rollback()),
    (e) => e instanceof TransactionRollbackError,
  )
  await assert.rejects(kysely.selectFrom('nope').selectAll().execute(), (e) => e instanceof esm.ResqliteError)
  await assert.rejects(drizzle.run(sql`SELEC 1`), (e) => e instanceof esm.ResqliteError)
})
