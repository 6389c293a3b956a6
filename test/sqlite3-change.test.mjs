// resqlite/sqlite3's 'change' event (docs/integrations.md "resqlite/sqlite3"): node-sqlite3's
// update hook, `(type, database, table, rowid)` for each row a write inserts, updates or
// deletes, on the writer's connection, whichever thread runs the write.

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import sqlite3 from '../dist/esm/sqlite3.mjs'
import { call, openWith } from './sqlite3-helpers.mjs'

const dir = mkdtempSync(join(tmpdir(), 'resqlite-sqlite3-change-'))
after(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const file = () => join(dir, `db${files++}.db`)

const open = (path) => openWith(sqlite3, path)
/** Collects db's 'change' events as [type, database, table, rowid]. */
function changes(db) {
  const seen = []
  const listener = (...event) => seen.push(event)
  db.on('change', listener)
  return { seen, listener }
}

test("'change' reports each inserted, updated and deleted row with its table and rowid, before the run's callback", async () => {
  const db = await open(file())
  await call(db, 'run', 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  await call(db, 'run', "INSERT INTO t VALUES (1, 'before')")
  const { seen } = changes(db)
  const atCallback = []
  await new Promise((resolve, reject) =>
    db.run("INSERT INTO t VALUES (2, 'a'), (3, 'b')", (e) => (e ? reject(e) : resolve(atCallback.push(seen.length)))),
  )
  await call(db, 'run', "UPDATE t SET v = 'x' WHERE id = 2")
  await call(db, 'run', 'DELETE FROM t WHERE id IN (1, 3)')
  await call(db, 'exec', "CREATE TABLE u (k TEXT); INSERT INTO u VALUES ('k')")
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(atCallback, [2], "the insert's events came before its callback")
  assert.deepEqual(seen, [
    ['insert', 'main', 't', 2],
    ['insert', 'main', 't', 3],
    ['update', 'main', 't', 2],
    ['delete', 'main', 't', 1],
    ['delete', 'main', 't', 3],
    ['insert', 'main', 'u', 1],
  ])
  await call(db, 'close')
})

test("'change' covers writes inside an SQL transaction (a rolled-back one too, as SQLite's hook fires before the commit) and writes through db.resqlite", async () => {
  const db = await open(file())
  await call(db, 'run', 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  const { seen } = changes(db)
  await call(db, 'run', 'BEGIN')
  await call(db, 'run', "INSERT INTO t VALUES (10, 'kept')")
  await call(db, 'run', 'COMMIT')
  await call(db, 'run', 'BEGIN')
  await call(db, 'run', "INSERT INTO t VALUES (11, 'rolled back')")
  await call(db, 'run', 'ROLLBACK')
  await db.resqlite.execute("UPDATE t SET v = 'resqlite' WHERE id = 10")
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(seen, [
    ['insert', 'main', 't', 10],
    ['insert', 'main', 't', 11],
    ['update', 'main', 't', 10],
  ])
  await call(db, 'close')
})

test("no 'change' events before a listener is added or after the last is removed; a listener added before the open works", async () => {
  const early = []
  const db = new sqlite3.Database(':memory:')
  const listener = (...event) => early.push(event)
  db.on('change', listener)
  await new Promise((resolve) => db.once('open', resolve))
  await call(db, 'run', 'CREATE TABLE t (id INTEGER PRIMARY KEY)')
  await call(db, 'run', 'INSERT INTO t VALUES (1)')
  db.removeListener('change', listener)
  await call(db, 'run', 'INSERT INTO t VALUES (2)')
  await call(db, 'run', 'DELETE FROM t')
  const later = changes(db)
  await call(db, 'run', 'INSERT INTO t VALUES (3)')
  db.removeAllListeners('change')
  await call(db, 'run', 'UPDATE t SET id = 4')
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(early, [['insert', 'main', 't', 1]])
  assert.deepEqual(later.seen, [['insert', 'main', 't', 3]])
  await call(db, 'close')
})

test('a bulk UPDATE reports every row, in rowid order', async () => {
  const db = await open(file())
  const n = 5000
  await call(
    db,
    'exec',
    `CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER);
    WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n}) INSERT INTO t SELECT i, 0 FROM s`,
  )
  const { seen } = changes(db)
  const { self } = await call(db, 'run', 'UPDATE t SET v = v + 1')
  assert.equal(self.changes, n)
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(seen.length, n)
  assert.ok(
    seen.every(
      ([type, database, table], i) => type === 'update' && database === 'main' && table === 't' && seen[i][3] === i + 1,
    ),
  )
  await call(db, 'close')
})

test('a write changing more rows than are kept between deliveries reports the rest as one ERR_RESULT_TOO_LARGE error', async () => {
  const db = await open(file())
  const kept = 100_000
  await call(db, 'run', 'CREATE TABLE t (id INTEGER PRIMARY KEY)')
  let count = 0
  db.on('change', () => count++)
  const error = new Promise((resolve) => db.once('error', resolve))
  await call(
    db,
    'run',
    `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${kept + 7}) INSERT INTO t SELECT i FROM s`,
  )
  const dropped = await error
  assert.equal(dropped.code, 'ERR_RESULT_TOO_LARGE')
  assert.equal(dropped.errno, sqlite3.TOOBIG)
  assert.match(dropped.message, /7 rows changed past the 100000/)
  assert.equal(count, kept)
  // The next write reports its rows again.
  await call(db, 'run', 'DELETE FROM t WHERE id = 1')
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(count, kept + 1)
  await call(db, 'close')
})

test("the same writes give the real sqlite3's 'change' events (a trigger's rows, REPLACE, a rollback, WITHOUT ROWID)", async () => {
  // The real sqlite3 is one of the benchmark's peers (test/tiers.mjs NEEDS).
  const real = createRequire(import.meta.url)(new URL('../bench/node_modules/sqlite3', import.meta.url).pathname)
  const script = [
    'CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER UNIQUE, v TEXT)',
    'CREATE TABLE log (n INTEGER)',
    'CREATE TABLE w (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID',
    'CREATE TRIGGER t_log AFTER UPDATE ON t BEGIN INSERT INTO log VALUES (new.id); END',
    "INSERT INTO t (k, v) VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    "UPDATE t SET v = 'x' WHERE k >= 2",
    "INSERT OR REPLACE INTO t (k, v) VALUES (1, 'replaced')",
    "INSERT INTO w VALUES ('a', 'b')",
    'BEGIN',
    'DELETE FROM t WHERE k = 3',
    'ROLLBACK',
    'DELETE FROM log',
  ]
  const events = async (module) => {
    const db = await openWith(module, file())
    const seen = []
    db.on('change', (...event) => seen.push(event))
    for (const sql of script) await call(db, 'run', sql)
    await call(db, 'close')
    await new Promise((resolve) => setImmediate(resolve))
    return seen
  }
  const expected = await events(real)
  assert.ok(expected.length > 5, 'the real sqlite3 reported the changes')
  assert.deepEqual(await events(sqlite3), expected)
})
