// resqlite/sqlite3's Backup (docs/integrations.md "resqlite/sqlite3"): sqlite3's
// `Database#backup` over the engine's paused backup. A copy complete and readable, steps of n
// pages and the counts between them, a write between steps, a finish part way, the automatic
// finish and `retryErrors`, close refused while a backup is unfinished, a paused backup holding
// no snapshot, a dropped Backup finished when collected, and the refusals (an existing
// destination, a missing directory, restoring into the open database, other database names,
// bad arguments).

import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import v8 from 'node:v8'
import vm from 'node:vm'
import sqlite3 from '../dist/esm/sqlite3.mjs'
import { call, openWith } from './sqlite3-helpers.mjs'

const dir = mkdtempSync(join(tmpdir(), 'resqlite-sqlite3-backup-'))
after(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const file = () => join(dir, `db${files++}.db`)

/** The error `target[method](...args, callback)` calls back with. */
function failure(target, method, ...args) {
  return new Promise((resolve, reject) => {
    target[method](...args, (err) => (err ? resolve(err) : reject(new Error(`${method} did not fail`))))
  })
}
const open = (path, mode = sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE) => openWith(sqlite3, path, mode)
const rows = async (db, sql) => (await call(db, 'all', sql)).results[0]

/** A database of more than 256 pages: 2000 rows of 1 KB. */
async function source() {
  const db = await open(file())
  await call(db, 'exec', 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  await call(
    db,
    'run',
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO t (v) SELECT printf('%.1000c', 'x') || i FROM n",
  )
  return db
}
const pageCount = async (db) => (await rows(db, 'PRAGMA page_count'))[0].page_count

test('backup(file) then step(-1) copies the whole database; the backup then finishes by itself', async () => {
  const db = await source()
  const dest = file()
  const pages = await pageCount(db)
  assert.ok(pages > 256, `${pages} pages: more than one of resqlite's steps`)
  const backup = await new Promise((resolve, reject) => {
    const made = db.backup(dest, (err) => (err ? reject(err) : resolve(made)))
  })
  assert.ok(backup instanceof sqlite3.Backup)
  assert.equal(backup.idle, true)
  assert.deepEqual([backup.remaining, backup.pageCount], [-1, -1])
  const { self, results } = await call(backup, 'step', -1)
  assert.equal(self, backup)
  assert.deepEqual(results, [true])
  assert.deepEqual([backup.completed, backup.failed, backup.remaining, backup.pageCount], [true, false, 0, pages])
  // Finished by itself (DONE is not in the default retryErrors): close does not wait for finish().
  await call(db, 'close')
  const copy = await open(dest)
  assert.deepEqual(await rows(copy, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }])
  assert.deepEqual(await rows(copy, 'SELECT count(*) AS n, sum(length(v)) AS bytes FROM t'), [
    { n: 2000, bytes: 2000 * 1000 + 6893 },
  ])
  await call(copy, 'close')
})

test('step(n) copies n pages and pauses; remaining and pageCount move as in sqlite3; the first step creates the destination empty', async () => {
  const db = await source()
  const dest = file()
  const backup = await new Promise((resolve, reject) => {
    const made = db.backup(dest, (err) => (err ? reject(err) : resolve(made)))
  })
  backup.retryErrors = [] // kept after DONE, to step it again
  assert.equal(existsSync(dest), false)
  const pages = await pageCount(db)
  assert.deepEqual((await call(backup, 'step', 0)).results, [false])
  assert.equal(statSync(dest).size, 0)
  assert.deepEqual([backup.remaining, backup.pageCount, backup.completed], [pages, pages, false])
  assert.deepEqual((await call(backup, 'step', 1)).results, [false])
  assert.deepEqual([backup.remaining, backup.pageCount, backup.completed], [pages - 1, pages, false])
  assert.deepEqual((await call(backup, 'step', 5)).results, [false])
  assert.deepEqual([backup.remaining, backup.pageCount], [pages - 6, pages])
  assert.deepEqual((await call(backup, 'step', 0)).results, [false]) // measures only
  assert.deepEqual([backup.remaining, backup.pageCount], [pages - 6, pages])
  assert.equal(statSync(dest).size, 0) // the copy is committed by the step that completes it
  assert.deepEqual((await call(backup, 'step', 2 ** 40)).results, [true]) // more than an int: all
  assert.deepEqual([backup.remaining, backup.pageCount, backup.completed, backup.failed], [0, pages, true, false])
  // Stepped again after DONE: DONE again, nothing copied.
  assert.deepEqual((await call(backup, 'step', -1)).results, [true])
  await call(backup, 'finish')
  assert.deepEqual([backup.completed, backup.failed], [true, false])
  await call(db, 'close')
  const copy = await open(dest, sqlite3.OPEN_READONLY)
  assert.deepEqual(await rows(copy, 'SELECT count(*) AS n FROM t'), [{ n: 2000 }])
  await call(copy, 'close')
})

test('a write between steps: the next step starts the copy over, and the copy holds the write', async () => {
  const db = await source()
  const dest = file()
  const backup = db.backup(dest)
  await call(backup, 'step', 10)
  const pages = await pageCount(db)
  assert.equal(backup.remaining, pages - 10)
  await call(db, 'run', 'INSERT INTO t (v) SELECT v FROM t WHERE id <= 100')
  const grown = await pageCount(db)
  assert.ok(grown > pages, `${grown} pages after the insert, ${pages} before`)
  // The backup reads from a connection of its own, so the write is another connection's: SQLite
  // starts over (sqlite3 does too for a write through another connection).
  assert.deepEqual((await call(backup, 'step', 1)).results, [false])
  assert.deepEqual([backup.remaining, backup.pageCount], [grown - 1, grown])
  assert.deepEqual((await call(backup, 'step', -(2 ** 40))).results, [true]) // any negative: all
  await call(db, 'close')
  const copy = await open(dest)
  assert.deepEqual(await rows(copy, 'SELECT count(*) AS n FROM t'), [{ n: 2100 }])
  assert.deepEqual(await rows(copy, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }])
  await call(copy, 'close')
})

test('a paused backup holds no snapshot: the WAL starts over between its steps', async () => {
  const db = await source()
  const backup = db.backup(file())
  await call(backup, 'step', 1)
  assert.ok(backup.remaining > 0)
  await call(db, 'run', "INSERT INTO t (v) VALUES ('more')")
  assert.ok(statSync(`${db.filename}-wal`).size > 0)
  // A reader's snapshot in the WAL would make TRUNCATE busy (1) and leave the WAL as it is.
  assert.deepEqual(await rows(db, 'PRAGMA wal_checkpoint(TRUNCATE)'), [{ busy: 0, log: 0, checkpointed: 0 }])
  assert.equal(statSync(`${db.filename}-wal`).size, 0)
  await call(backup, 'finish')
  await call(db, 'close')
})

test('calls without callbacks queue: step(-1) then finish() (sqlite3 documents this naive use)', async () => {
  const db = await source()
  const dest = file()
  const backup = db.backup(dest)
  backup.step(-1)
  assert.equal(backup.idle, false)
  await call(backup, 'finish')
  await new Promise(setImmediate) // idle once the finish's callback has returned, as in sqlite3
  assert.equal(backup.idle, true)
  assert.deepEqual([backup.completed, backup.failed], [true, false])
  const copy = await open(dest, sqlite3.OPEN_READONLY)
  assert.deepEqual(await rows(copy, 'SELECT count(*) AS n FROM t'), [{ n: 2000 }])
  await call(copy, 'close')
  await call(db, 'close')
})

test('finish part way leaves the destination empty, as sqlite3 does; later calls fail with SQLITE_MISUSE', async () => {
  const db = await source()
  const dest = file()
  const backup = db.backup(dest)
  await call(backup, 'step', 100)
  assert.ok(backup.remaining > 0)
  await call(backup, 'finish')
  assert.deepEqual([backup.completed, backup.failed], [false, true])
  // The copy's transaction rolled back: an empty file (an empty database) and no journal.
  assert.equal(statSync(dest).size, 0)
  assert.equal(existsSync(`${dest}-journal`), false)
  const err = await failure(backup, 'step', -1)
  assert.equal(err.message, 'SQLITE_MISUSE: Backup is already finished')
  assert.equal(err.errno, sqlite3.MISUSE)
  // Without a callback: an 'error' event on the Backup.
  const emitted = new Promise((resolve) => backup.once('error', resolve))
  backup.step(-1)
  assert.equal((await emitted).errno, sqlite3.MISUSE)
  assert.equal(statSync(dest).size, 0)
  // Finished before any step: no file at all.
  const never = file()
  await call(db.backup(never), 'finish')
  assert.equal(existsSync(never), false)
  await call(db, 'close')
  const copy = await open(dest, sqlite3.OPEN_READONLY)
  assert.deepEqual(await rows(copy, 'SELECT count(*) AS n FROM sqlite_schema'), [{ n: 0 }])
  await call(copy, 'close')
})

test('close fails with SQLITE_BUSY while a backup is unfinished, and closes after its finish', async () => {
  const db = await source()
  const backup = db.backup(file())
  let err = await failure(db, 'close')
  assert.equal(err.errno, sqlite3.BUSY)
  assert.match(err.message, /unfinished backups/)
  await call(backup, 'step', 1) // paused part way
  assert.ok(backup.remaining > 0)
  err = await failure(db, 'close')
  assert.equal(err.errno, sqlite3.BUSY)
  // retryErrors [] keeps a completed backup until finish(); [OK] finishes it after DONE.
  backup.retryErrors = []
  await call(backup, 'step', -1)
  err = await failure(db, 'close')
  assert.equal(err.errno, sqlite3.BUSY)
  await call(backup, 'finish')
  const other = db.backup(file())
  other.retryErrors = [sqlite3.OK]
  await call(other, 'step', -1)
  assert.equal(other.completed, true)
  await call(db, 'close')
})

test('close waits for a running step, and closes once the backup finished by itself', async () => {
  const db = await source()
  const dest = file()
  const backup = db.backup(dest)
  const order = []
  const stepped = call(backup, 'step', -1).then(({ results }) => order.push(`step ${results[0]}`))
  const closed = call(db, 'close').then(() => order.push('close'))
  await Promise.all([stepped, closed])
  assert.deepEqual(order, ['step true', 'close'])
  assert.ok(existsSync(dest))
})

test("the copy holds committed writes only: an open SQL transaction's are not in it", async () => {
  const db = await source()
  const dest = file()
  await call(db, 'exec', "BEGIN; INSERT INTO t (v) VALUES ('uncommitted')")
  await call(db.backup(dest), 'step', -1)
  await call(db, 'exec', 'COMMIT')
  assert.deepEqual(await rows(db, 'SELECT count(*) AS n FROM t'), [{ n: 2001 }])
  await call(db, 'close')
  const copy = await open(dest)
  assert.deepEqual(await rows(copy, 'SELECT count(*) AS n FROM t'), [{ n: 2000 }])
  await call(copy, 'close')
})

test('a destination that exists, or in a missing directory, fails the first step; nothing is touched or left', async () => {
  const db = await source()
  const dest = file()
  writeFileSync(dest, 'not a database')
  const backup = db.backup(dest)
  const err = await failure(backup, 'step', 0)
  assert.equal(err.code, 'ERR_INVALID_PATH')
  assert.equal(err.errno, sqlite3.ERROR)
  assert.match(err.message, /exists/)
  assert.deepEqual([backup.completed, backup.failed], [false, true])
  assert.equal(readFileSync(dest, 'utf8'), 'not a database')
  // The same error again for a step after the automatic finish (sqlite3 keeps the last result).
  assert.equal((await failure(backup, 'step', -1)).code, 'ERR_INVALID_PATH')
  const missing = join(dir, 'missing', 'copy.db')
  const cantOpen = await failure(db.backup(missing), 'step', 1)
  assert.equal(cantOpen.errno, sqlite3.CANTOPEN)
  assert.equal(cantOpen.code, 'SQLITE_CANTOPEN')
  assert.equal(existsSync(missing), false)
  await call(db, 'close') // the failed backups hold nothing
})

test('a Backup dropped unfinished is finished once collected, as sqlite3 finishes it: close then works', async () => {
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  const db = await source()
  const dest = file()
  await (async () => {
    const backup = db.backup(dest)
    await call(backup, 'step', 1)
    assert.ok(backup.remaining > 0)
  })()
  assert.equal((await failure(db, 'close')).errno, sqlite3.BUSY)
  // Collected, then finished by the FinalizationRegistry's callback, which runs on a later turn.
  let closed
  for (let i = 0; i < 50 && closed === undefined; i++) {
    gc()
    await new Promise(setImmediate)
    closed = await call(db, 'close').then(
      () => true,
      (e) => (e.errno === sqlite3.BUSY ? undefined : Promise.reject(e)),
    )
  }
  assert.equal(closed, true, 'the dropped Backup still kept the Database from closing')
  assert.equal(statSync(dest).size, 0) // finished part way: rolled back
})

test('closing the resqlite Database underneath finishes a paused backup; its later steps fail', async () => {
  const db = await source()
  const dest = file()
  const backup = db.backup(dest)
  await call(backup, 'step', 1)
  await db.resqlite.close()
  assert.equal(statSync(dest).size, 0)
  assert.equal(existsSync(`${dest}-journal`), false)
  const err = await failure(backup, 'step', 1)
  assert.equal(err.resqliteCode, 'ERR_DATABASE_CLOSED')
})

test('a rekey of the database finishes a paused backup (it replaces the file read); its next step fails with ERR_BACKUP', async () => {
  const db = await source()
  const backup = db.backup(file())
  await call(backup, 'step', 1)
  await db.resqlite.rekey('a new key')
  const err = await failure(backup, 'step', -1)
  assert.equal(err.resqliteCode ?? err.code, 'ERR_BACKUP')
  assert.match(err.message, /rekeyed since this backup began/)
  assert.equal(backup.failed, true) // finished by itself (not a code to retry)
  await call(db, 'close')
})

test('restoring into the open database (filenameIsDest false) is refused and leaves it intact', async () => {
  const db = await source()
  const other = await source()
  const otherPath = other.filename
  await call(other, 'close')
  await call(db, 'run', 'DELETE FROM t WHERE id > 10')
  const err = await failure(db, 'backup', otherPath, 'main', 'main', false)
  assert.equal(err.code, 'ERR_INVALID_ARG_VALUE')
  assert.match(err.message, /filenameIsDest false.*refused/)
  assert.deepEqual(await rows(db, 'SELECT count(*) AS n FROM t'), [{ n: 10 }])
  await call(db, 'close') // the refused backup holds nothing
})

test('database names other than main are refused; bad arguments throw TypeError', async () => {
  const db = await source()
  const temp = await failure(db, 'backup', file(), 'temp', 'main', true)
  assert.equal(temp.code, 'ERR_INVALID_ARG_VALUE')
  assert.match(temp.message, /'temp' into 'main'/)
  // No callback: the start's error is emitted, and the calls made meanwhile get it too.
  const backup = db.backup(file(), 'main', 'aux', true)
  const emitted = new Promise((resolve) => backup.once('error', resolve))
  const queued = failure(backup, 'step', -1)
  assert.equal((await emitted).code, 'ERR_INVALID_ARG_VALUE')
  assert.equal((await queued).code, 'ERR_INVALID_ARG_VALUE')
  assert.equal(backup.failed, true)
  assert.throws(() => db.backup(42), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })
  assert.throws(() => new sqlite3.Backup({}, file(), 'main', 'main', true), { name: 'TypeError', message: /Database/ })
  assert.throws(() => db.backup(file(), 'main', 'main', 'yes'), { name: 'TypeError', message: /filenameIsDest/ })
  const fine = db.backup(file())
  assert.throws(() => fine.step('all'), { name: 'TypeError', message: /pages must be an integer/ })
  assert.throws(() => fine.step(1, 'cb'), { name: 'TypeError', message: /callback/ })
  assert.throws(() => {
    fine.retryErrors = 5
  }, /retryErrors must be an array/)
  await call(fine, 'finish')
  await call(db, 'close')
})

test('a backup of a closed database fails with SQLITE_MISUSE', async () => {
  const db = await source()
  await call(db, 'close')
  const err = await failure(db, 'backup', file())
  assert.equal(err.errno, sqlite3.MISUSE)
  assert.match(err.message, /Database handle is closed/)
})
