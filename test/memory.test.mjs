// ':memory:': one private database shared by every connection of one Database (a temporary
// WAL file removed at close), two opens are two databases, readers keep their snapshots.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject } from './helpers.mjs'

/** The private directories ':memory:' databases keep their file in, now. */
const memoryDirs = () => new Set(fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith('resqlite-memory-')))

/** Opens ':memory:' and returns it with the directory it made. */
async function openMemory(t, options) {
  const before = memoryDirs()
  const db = await Database.open(':memory:', options)
  t.after(() => db.close())
  const made = [...memoryDirs()].filter((d) => !before.has(d))
  assert.equal(made.length, 1, 'one private directory per open')
  return { db, dir: path.join(os.tmpdir(), made[0]) }
}

test("':memory:' is one database for the writer, the readers, the JS thread and live queries", async (t) => {
  const { db } = await openMemory(t, { readers: 2 })
  assert.equal(db.path, ':memory:')
  await db.execute('CREATE TABLE t (v INTEGER)')
  await db.executeBatch('INSERT INTO t VALUES (?)', [[1], [2], [3]])
  // Several reads at once go to the readers; one alone runs on the JS thread's connection.
  const parallel = await Promise.all(Array.from({ length: 8 }, () => db.select('SELECT sum(v) AS s FROM t')))
  assert.deepStrictEqual(parallel, Array(8).fill([{ s: 6 }]))
  assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n FROM t'), { n: 3 })
  const seen = []
  let wake
  const stop = db.stream('SELECT count(*) AS n FROM t').subscribe((rows) => {
    seen.push(rows[0].n)
    wake?.()
  })
  t.after(stop)
  await new Promise((resolve) => (wake = resolve))
  const changed = new Promise((resolve) => (wake = resolve))
  await db.execute('INSERT INTO t VALUES (4)')
  await changed
  assert.deepStrictEqual(seen, [3, 4])
  const d = await db.diagnostics()
  assert.ok(d.walBytes > 0, 'the private file is in WAL mode')
})

test("two ':memory:' opens are two databases", async (t) => {
  const a = (await openMemory(t)).db
  const b = (await openMemory(t)).db
  await a.execute('CREATE TABLE only_in_a (x)')
  await expectReject(() => b.select('SELECT * FROM only_in_a'), ResqliteError, 'SQLITE_ERROR', /no such table/)
})

test("':memory:' readers keep their snapshot while a transaction writes, and do not block it", async (t) => {
  const { db } = await openMemory(t, { inlineBudget: 0 })
  await db.execute('CREATE TABLE t (v)')
  await db.execute('INSERT INTO t VALUES (1)')
  await db.transaction(async (tx) => {
    await tx.execute('INSERT INTO t VALUES (2)')
    // A read outside the transaction (not through tx) runs on a reader: committed data only.
    const outside = await new Promise((resolve, reject) =>
      setImmediate(() => db.select('SELECT count(*) AS n FROM t').then(resolve, reject)),
    )
    assert.ok(outside, 'the reader answered while the transaction held the writer')
    assert.deepStrictEqual(await tx.selectOne('SELECT count(*) AS n FROM t'), { n: 2 })
  })
  assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n FROM t'), { n: 2 })
})

test("close() removes the ':memory:' database's file; a failed open removes it too", async (t) => {
  const { db, dir } = await openMemory(t)
  await db.execute('CREATE TABLE t (v)')
  assert.ok(fs.existsSync(path.join(dir, 'db')))
  await db.close()
  assert.ok(!fs.existsSync(dir), 'the private directory is gone after close')
  const before = memoryDirs()
  await expectReject(
    () => Database.open(':memory:', { extensions: ['/no/such/lib.so'] }),
    ResqliteError,
    'ERR_EXTENSION',
  )
  assert.deepStrictEqual(
    [...memoryDirs()].filter((d) => !before.has(d)),
    [],
  )
})

test("':memory:' with an encryption key encrypts its temporary file", async (t) => {
  const { db, dir } = await openMemory(t, { encryptionKey: 'memory secret' })
  await db.execute('CREATE TABLE t (v TEXT)')
  await db.execute("INSERT INTO t VALUES ('plain words')")
  assert.deepStrictEqual(await db.select('SELECT v FROM t'), [{ v: 'plain words' }])
  await db.rekey('another')
  const header = fs.readFileSync(path.join(dir, 'db')).subarray(0, 16).toString('latin1')
  assert.notEqual(header, 'SQLite format 3\0')
})

test("':memory:' cannot be opened readonly; '' stays refused", async () => {
  await expectReject(() => Database.open(':memory:', { readonly: true }), ResqliteError, 'ERR_INVALID_PATH', /readonly/)
  await expectReject(() => Database.open(''), ResqliteError, 'ERR_INVALID_PATH')
})
