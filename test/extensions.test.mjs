// Extensions (`extensions` open option) with the real sqlite-vec package: vec0 tables, KNN
// queries on every kind of connection, a live query over a vec0 table, SQL's load_extension()
// staying off, and the errors of a library that does not load.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import * as sqliteVec from 'sqlite-vec'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb, tempDir } from './helpers.mjs'

const VEC = sqliteVec.getLoadablePath()
const vector = (...xs) => Buffer.from(new Float32Array(xs).buffer)
const KNN = 'SELECT rowid, distance FROM items WHERE embedding MATCH ? ORDER BY distance LIMIT 2'

async function withItems(db) {
  await db.execute('CREATE VIRTUAL TABLE items USING vec0(embedding float[3])')
  await db.executeBatch('INSERT INTO items (rowid, embedding) VALUES (?, ?)', [
    [1, vector(1, 0, 0)],
    [2, vector(0, 1, 0)],
    [3, vector(0.9, 0.1, 0)],
  ])
}

test('sqlite-vec: a vec0 table, vectors inserted, a KNN query on the readers, the JS thread and the writer', async (t) => {
  for (const inlineBudget of [0, 10]) {
    const db = await openDb(t, { extensions: [VEC], readers: 2, inlineBudget })
    await withItems(db)
    const rows = await db.select(KNN, [vector(1, 0, 0)])
    assert.deepStrictEqual(
      rows.map((r) => r.rowid),
      [1, 3],
    )
    assert.equal(rows[0].distance, 0)
    assert.ok(rows[1].distance > 0)
    // Inside a transaction the read runs on the writer's connection.
    const inTx = await db.transaction(async (tx) => tx.select(KNN, [vector(0, 1, 0)]))
    assert.equal(inTx[0].rowid, 2)
    const diagnostics = await db.diagnostics()
    if (inlineBudget === 0) assert.equal(diagnostics.inline.runs, 0)
    else assert.ok(diagnostics.inline.runs > 0, 'a read ran on the JS thread connection')
  }
})

test('an extension given as { path, entryPoint } loads with that entry point', async (t) => {
  const db = await openDb(t, { extensions: [{ path: VEC, entryPoint: 'sqlite3_vec_init' }] })
  assert.match((await db.selectOne('SELECT vec_version() AS v')).v, /^v\d/)
})

test('a live query over a vec0 table re-emits after an insert', async (t) => {
  const db = await openDb(t, { extensions: [VEC] })
  await withItems(db)
  const results = []
  let wake
  const stop = db.stream(KNN, [vector(0, 0, 1)]).subscribe((rows) => {
    results.push(rows.map((r) => r.rowid))
    wake?.()
  })
  t.after(stop)
  const next = () => new Promise((resolve) => (wake = resolve))
  await next()
  assert.equal(results.length, 1)
  assert.ok(!results[0].includes(4))
  const changed = next()
  await db.execute('INSERT INTO items (rowid, embedding) VALUES (4, ?)', [vector(0, 0, 1)])
  await changed
  assert.equal(results.at(-1)[0], 4, 'the new nearest vector is delivered')
})

test("SQL's load_extension() stays unavailable on every connection", async (t) => {
  const db = await openDb(t, { extensions: [VEC] })
  const sql = `SELECT load_extension('${VEC}')`
  await expectReject(() => db.select(sql), ResqliteError, 'SQLITE_ERROR', /not authorized/)
  await expectReject(() => db.execute(sql), ResqliteError, 'SQLITE_ERROR', /not authorized/)
  const noInline = await openDb(t, { extensions: [VEC], inlineBudget: 0 })
  await expectReject(() => noInline.select(sql), ResqliteError, 'SQLITE_ERROR', /not authorized/)
})

test('without the option, extension functions are unknown and loading stays off', async (t) => {
  const db = await openDb(t)
  await expectReject(() => db.select('SELECT vec_version()'), ResqliteError, 'SQLITE_ERROR', /no such function/)
  await expectReject(
    () => db.select(`SELECT load_extension('${VEC}')`),
    ResqliteError,
    'SQLITE_ERROR',
    /not authorized/,
  )
})

test('a library that does not load fails the open with ERR_EXTENSION naming it; nothing stays open', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'x.db')
  const missing = path.join(dir, 'no-such-extension.so')
  await expectReject(
    () => Database.open(file, { extensions: [missing] }),
    ResqliteError,
    'ERR_EXTENSION',
    new RegExp(`cannot load extension '${missing.replaceAll('.', '\\.')}'`),
    /No such file|cannot open/,
  )
  await expectReject(
    () => Database.open(file, { extensions: [VEC, { path: VEC, entryPoint: 'no_such_init' }] }),
    ResqliteError,
    'ERR_EXTENSION',
    /no_such_init/,
  )
  const notALibrary = path.join(dir, 'not-a-library.so')
  fs.writeFileSync(notALibrary, 'text')
  await expectReject(
    () => Database.open(file, { extensions: [notALibrary] }),
    ResqliteError,
    'ERR_EXTENSION',
    /not-a-library/,
  )
  // The failed opens left no connection holding the file (Linux: this process's open files),
  // and it opens and writes normally.
  const held = fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(file)
    } catch {
      return false
    }
  })
  assert.deepStrictEqual(held, [])
  const db = await Database.open(file)
  await db.execute('CREATE TABLE t (x)')
  await db.close()
})

test('extensions are reloaded when the connections reopen after rekey', async (t) => {
  const db = await openDb(t, { extensions: [VEC], encryptionKey: 'one' })
  await withItems(db)
  await db.rekey('two')
  assert.deepStrictEqual(
    (await db.select(KNN, [vector(0, 1, 0)])).map((r) => r.rowid),
    [2, 3],
  )
})

test('bad extensions options are TypeErrors naming the option, before any file is touched', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'bad.db')
  for (const [extensions, code, pattern] of [
    [VEC, 'ERR_INVALID_ARG_TYPE', /extensions must be an array/],
    [[42], 'ERR_INVALID_ARG_TYPE', /extensions\[0\] must be a path/],
    [[null], 'ERR_INVALID_ARG_TYPE', /extensions\[0\] must be a path/],
    [[{ file: VEC }], 'ERR_INVALID_ARG_VALUE', /unknown extensions\[0\] option 'file'/],
    [[{ entryPoint: 'x' }], 'ERR_INVALID_ARG_TYPE', /extensions\[0\]\.path must be a string/],
    [[VEC, ''], 'ERR_INVALID_ARG_VALUE', /extensions\[1\]\.path is empty/],
    [['a\0b'], 'ERR_INVALID_ARG_VALUE', /NUL/],
    [[{ path: VEC, entryPoint: 7 }], 'ERR_INVALID_ARG_TYPE', /entryPoint/],
    [[{ path: VEC, entryPoint: '' }], 'ERR_INVALID_ARG_TYPE', /entryPoint/],
  ]) {
    await expectReject(() => Database.open(file, { extensions }), TypeError, code, pattern)
  }
  assert.deepStrictEqual(fs.readdirSync(dir), [])
})
