// The writer owns checkpoints (ARCHITECTURE.md "Checkpoints"): the WAL may grow while a long read
// holds its snapshot, and is cut back to 16 MiB once readers let go and writes go on.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { Database } from '../dist/esm/index.mjs'
import { calibrate, expectReject, tempDir } from './helpers.mjs'
import { PLACEMENT } from './inline-helpers.mjs'

const LIMIT = 16 * 2 ** 20

test('the WAL grows under a long read and is truncated to 16 MiB after it', async (t) => {
  const file = path.join(tempDir(t), 'wal.db')
  const db = await Database.open(file)
  t.after(() => db.close())
  const walSize = () => fs.statSync(`${file}-wal`).size
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, payload TEXT)')
  const sets = Array.from({ length: 2000 }, () => ['x'.repeat(400)])
  // Long enough for ~48 MiB of writes, and the writer's bounded waits for it (one per
  // checkpoint's worth of frames, doubling: threads/checkpoint.rs).
  const n = await calibrate(db, 3000)
  // Reads the table first, so its snapshot is held while the slow part runs.
  const longRead = db.select(
    `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?)
     SELECT (SELECT count(*) FROM t) AS rows, (SELECT count(*) FROM c) AS n`,
    [n],
  )
  let grown = 0
  // ~48 MiB of writes while the read holds its snapshot: no checkpoint can restart the WAL.
  for (let i = 0; i < 60 && grown <= 2 * LIMIT; i++) {
    await db.executeBatch('INSERT INTO t (payload) VALUES (?)', sets)
    grown = Math.max(grown, walSize())
  }
  assert.ok(grown > 2 * LIMIT, `the WAL only reached ${grown} bytes; the test needs it above ${2 * LIMIT}`)
  assert.deepEqual(await longRead, [{ rows: 0, n }])
  // Readers are done: the next commits checkpoint, the WAL starts over and is truncated.
  for (let i = 0; i < 5; i++) {
    await db.execute('DELETE FROM t WHERE id <= ?', [(i + 1) * 20000])
  }
  assert.ok(walSize() <= LIMIT, `the WAL is still ${walSize()} bytes after the read ended (limit ${LIMIT})`)
  assert.deepEqual(await db.select('PRAGMA integrity_check'), [{ integrity_check: 'ok' }])
})

test("checkpoints: 'external' leaves every checkpoint to another process", async (t) => {
  const dir = tempDir(t)
  const sets = Array.from({ length: 2000 }, () => ['x'.repeat(400)])
  const sizes = {}
  for (const checkpoints of ['auto', 'external']) {
    const file = path.join(dir, `${checkpoints}.db`)
    const db = await Database.open(file, { checkpoints, readers: 2 })
    await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, payload TEXT)')
    const before = fs.statSync(file).size
    // ~8 MiB of commits: past the 1,000-page threshold twice.
    for (let i = 0; i < 10; i++) await db.executeBatch('INSERT INTO t (payload) VALUES (?)', sets)
    // On a reader (select) and on the writer (inside a transaction).
    const readerPages = await db.selectOne('PRAGMA wal_autocheckpoint')
    const writerPages = await db.transaction((tx) => tx.selectOne('PRAGMA wal_autocheckpoint'))
    sizes[checkpoints] = { grew: fs.statSync(file).size - before, readerPages, writerPages }
    await db.close()
    // Closing does not checkpoint either: the WAL holds every commit still.
    if (checkpoints === 'external') assert.equal(fs.statSync(file).size, before)
  }
  assert.deepEqual(sizes.auto.readerPages, { wal_autocheckpoint: 1000 })
  assert.deepEqual(sizes.auto.writerPages, { wal_autocheckpoint: 1000 })
  assert.ok(sizes.auto.grew > 4 * 2 ** 20, `'auto' checkpointed only ${sizes.auto.grew} bytes into the file`)
  assert.deepEqual(sizes.external.readerPages, { wal_autocheckpoint: 0 })
  assert.deepEqual(sizes.external.writerPages, { wal_autocheckpoint: 0 })
  assert.equal(sizes.external.grew, 0, "'external' checkpointed into the database file")
  const reopened = await Database.open(path.join(dir, 'external.db'))
  t.after(() => reopened.close())
  assert.deepEqual(await reopened.select('SELECT count(*) AS n FROM t'), [{ n: 20000 }])
})

test('a PRAGMA wal_autocheckpoint run with execute() stays set through the commits that follow on the JS thread', async (t) => {
  // PLACEMENT: on a slow machine (arm64 under qemu) a write overrunning the default budget would
  // skip the JS thread for a while, and the commits this is about would not run there.
  const db = await Database.open(path.join(tempDir(t), 'pragma.db'), PLACEMENT)
  t.after(() => db.close())
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  const pages = async () => (await db.transaction((tx) => tx.selectOne('PRAGMA wal_autocheckpoint'))).wal_autocheckpoint
  const inline = async () => (await db.diagnostics()).inline
  assert.equal(await pages(), 1000)
  for (const setting of [0, 500, 1000]) {
    await db.execute(`PRAGMA wal_autocheckpoint = ${setting}`)
    const before = await inline()
    for (let i = 0; i < 3; i++) {
      await db.execute('INSERT INTO t (v) VALUES (?)', [i])
      await db.transaction((tx) => tx.execute('INSERT INTO t (v) VALUES (?)', [i]))
    }
    const after = await inline()
    // The commits ran on the JS thread, where the setting is set aside around each commit.
    assert.ok(after.writes > before.writes && after.commits > before.commits, JSON.stringify({ before, after }))
    assert.equal(await pages(), setting, `wal_autocheckpoint ${setting} after commits on the JS thread`)
  }
})

test('checkpoints takes only auto or external', async (t) => {
  const file = path.join(tempDir(t), 'bad.db')
  for (const checkpoints of ['off', 0, true]) {
    await expectReject(
      () => Database.open(file, { checkpoints }),
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      /checkpoints must be 'auto' or 'external'/,
    )
  }
  assert.equal(fs.existsSync(file), false)
})

// Issue 43: with readers reading back to back one of them is always in the WAL, so the PASSIVE
// checkpoint never lets it start over; past the checkpoint size the writer runs a RESTART
// checkpoint that waits (at most 100 ms) for the reads in flight (threads/checkpoint.rs,
// experiments/070).
test('the WAL stays under 16 MiB while six clients read back to back and one inserts row by row', async (t) => {
  const file = path.join(tempDir(t), 'readers.db')
  const db = await Database.open(file)
  t.after(() => db.close())
  const walSize = () => fs.statSync(`${file}-wal`).size
  await db.execute('CREATE TABLE r (id INTEGER PRIMARY KEY, name TEXT, value REAL)')
  await db.execute('CREATE TABLE w (id INTEGER PRIMARY KEY, payload TEXT)')
  await db.executeBatch(
    'INSERT INTO r (name, value) VALUES (?, ?)',
    Array.from({ length: 20000 }, (_, i) => [`name-${i}`, i]),
  )
  // Each insert fills a page of its own: 8,000 of them append over 32 MiB to a WAL that never
  // starts over.
  const INSERTS = 8000
  const payload = 'x'.repeat(3000)
  let writing = true
  let reads = 0
  const reader = async () => {
    while (writing) {
      await db.select("SELECT count(*) AS n, sum(value) AS s FROM r WHERE name LIKE '%7%'")
      reads++
    }
  }
  const readers = Array.from({ length: 6 }, reader)
  let largest = 0
  try {
    for (let i = 0; i < INSERTS; i++) {
      await db.execute('INSERT INTO w (payload) VALUES (?)', [payload])
      largest = Math.max(largest, walSize())
    }
  } finally {
    writing = false
    await Promise.all(readers)
  }
  const { n } = await db.selectOne('SELECT count(*) AS n FROM w')
  assert.equal(n, INSERTS)
  assert.ok(reads > 6 * 10, `the readers read only ${reads} times`)
  assert.ok(largest <= LIMIT, `the WAL reached ${largest} bytes (bound ${LIMIT})`)
  assert.equal((await db.diagnostics()).walHeldMs, 0)
  assert.deepEqual(await db.select('PRAGMA integrity_check'), [{ integrity_check: 'ok' }])
})

test('an open iteration holds the WAL: diagnostics() says for how long, and writes go on', async (t) => {
  const file = path.join(tempDir(t), 'held.db')
  const db = await Database.open(file)
  t.after(() => db.close())
  const walSize = () => fs.statSync(`${file}-wal`).size
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, payload TEXT)')
  const sets = Array.from({ length: 2000 }, () => ['x'.repeat(400)])
  await db.executeBatch('INSERT INTO t (payload) VALUES (?)', sets)
  assert.equal((await db.diagnostics()).walHeldMs, 0)
  const rows = db.iterate('SELECT id FROM t', [], { pageRows: 1 })[Symbol.asyncIterator]()
  assert.deepEqual((await rows.next()).value, { id: 1 }) // its snapshot is held from here
  // ~24 MiB of commits: past the bound (1,000 frames), which the iteration keeps the WAL above.
  for (let i = 0; i < 30; i++) await db.executeBatch('INSERT INTO t (payload) VALUES (?)', sets)
  assert.ok(walSize() > LIMIT, `the WAL is only ${walSize()} bytes`)
  await new Promise((resolve) => setTimeout(resolve, 20))
  const held = (await db.diagnostics()).walHeldMs
  assert.ok(held > 0, `walHeldMs ${held} while an iteration holds the WAL`)
  await rows.return()
  // The iteration's connection ends its read as it frees the statement, which may come just
  // after return() settles: within a few commits the writer's checkpoint starts the WAL over.
  let commits = 0
  while ((await db.diagnostics()).walHeldMs > 0 && commits < 5) {
    await db.executeBatch('INSERT INTO t (payload) VALUES (?)', sets)
    commits++
  }
  assert.equal((await db.diagnostics()).walHeldMs, 0, `still held after ${commits} commits`)
  await db.executeBatch('INSERT INTO t (payload) VALUES (?)', sets)
  assert.ok(walSize() <= LIMIT, `the WAL is still ${walSize()} bytes after the iteration ended`)
  assert.deepEqual(await db.selectOne('SELECT count(*) AS n FROM t'), { n: (32 + commits) * 2000 })
})
