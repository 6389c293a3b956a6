// db.backup (SQLite's online backup API, in steps off the JS thread) and db.serialize.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb, tempDir } from './helpers.mjs'

/** Rows of about 1 KiB: `n` of them make about n KiB, several backup steps (1 MiB each). */
async function fill(db, n) {
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  await db.executeBatch(
    'INSERT INTO t (v) VALUES (?)',
    Array.from({ length: n }, (_, i) => [`${i}`.padEnd(1000, 'x')]),
  )
}

async function checkCopy(file, options, rows) {
  const copy = await Database.open(file, { ...options, readonly: true })
  try {
    assert.deepStrictEqual(await copy.select('PRAGMA integrity_check'), [{ integrity_check: 'ok' }])
    assert.deepStrictEqual(await copy.selectOne('SELECT count(*) AS n FROM t'), { n: rows })
  } finally {
    await copy.close()
  }
}

const leftovers = (dir) => fs.readdirSync(dir).filter((f) => f.includes('resqlite-backup'))

test('backup copies the database in steps while reads and writes go on; the copy is the state it began with', async (t) => {
  const db = await openDb(t, { readers: 1 })
  await fill(db, 12_000)
  const dir = tempDir(t)
  const dest = path.join(dir, 'copy.db')
  const steps = []
  let during
  await db.backup(dest, {
    progress: (p) => {
      steps.push(p)
      // Issued while the copy runs: neither waits for it, and the write is not in the copy.
      during ??= Promise.all([
        db.execute("INSERT INTO t (v) VALUES ('during')"),
        db.select('SELECT count(*) AS n FROM t'),
      ])
    },
  })
  const [write, [read]] = await during
  assert.equal(write.changes, 1)
  assert.ok(read.n >= 12_000)
  assert.ok(steps.length >= 3, `several steps (${steps.length})`)
  assert.ok(steps.every((s) => s.total === steps[0].total && s.total > 0))
  assert.ok(
    steps.every((s, i) => i === 0 || s.remaining < steps[i - 1].remaining),
    'remaining goes down',
  )
  assert.equal(steps.at(-1).remaining, 0)
  await checkCopy(dest, {}, 12_000)
  assert.deepStrictEqual(leftovers(dir), [])
  assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n FROM t'), { n: 12_001 })
})

test('an encrypted database backs up with its key and cipher: the copy opens with them, not without', async (t) => {
  for (const cipher of ['chacha20', 'aes256cbc']) {
    const options = { encryptionKey: 'backup key', cipher }
    const db = await openDb(t, options)
    await fill(db, 100)
    const dir = tempDir(t)
    const dest = path.join(dir, 'copy.db')
    await db.backup(dest)
    await checkCopy(dest, options, 100)
    await expectReject(() => Database.open(dest, { readonly: true }), ResqliteError, 'SQLITE_NOTADB')
    await expectReject(
      () => Database.open(dest, { encryptionKey: 'wrong', readonly: true }),
      ResqliteError,
      'ERR_ENCRYPTION_KEY',
    )
    const other = cipher === 'chacha20' ? 'aes256cbc' : 'chacha20'
    await expectReject(
      () => Database.open(dest, { encryptionKey: 'backup key', cipher: other, readonly: true }),
      ResqliteError,
      'ERR_ENCRYPTION_KEY',
    )
  }
})

test('an aborted backup rejects with ABORT_ERR and leaves nothing; the database and the destination stay usable', async (t) => {
  const db = await openDb(t)
  await fill(db, 12_000)
  const dir = tempDir(t)
  const dest = path.join(dir, 'copy.db')
  const ac = new AbortController()
  const pending = db.backup(dest, { signal: ac.signal })
  ac.abort(new Error('stop'))
  const err = await expectReject(() => pending, ResqliteError, 'ABORT_ERR')
  assert.equal(err.cause.message, 'stop')
  assert.deepStrictEqual(fs.readdirSync(dir), [])
  await expectReject(() => db.backup(dest, { signal: ac.signal }), ResqliteError, 'ABORT_ERR')
  assert.deepStrictEqual(fs.readdirSync(dir), [])
  await db.execute("INSERT INTO t (v) VALUES ('after')")
  await db.backup(dest)
  await checkCopy(dest, {}, 12_001)
})

test('a progress callback that throws stops the backup; the promise rejects with what it threw', async (t) => {
  const db = await openDb(t)
  await fill(db, 12_000)
  const dir = tempDir(t)
  const thrown = new Error('from progress')
  let calls = 0
  await assert.rejects(
    db.backup(path.join(dir, 'copy.db'), {
      progress: () => {
        calls++
        throw thrown
      },
    }),
    (e) => e === thrown,
  )
  assert.ok(calls >= 1)
  assert.deepStrictEqual(leftovers(dir), [])
})

test("close() waits for a running backup; ':memory:' backs up to a file", async (t) => {
  const db = await Database.open(':memory:')
  await fill(db, 3000)
  const dir = tempDir(t)
  const dest = path.join(dir, 'saved.db')
  let finished = false
  const backup = db.backup(dest).then(() => (finished = true))
  await db.close()
  assert.ok(finished, 'the backup finished before close resolved')
  await backup
  await checkCopy(dest, {}, 3000)
})

test('backup: bad arguments, an existing or unreachable destination, a closed database', async (t) => {
  const db = await openDb(t)
  await fill(db, 10)
  const dir = tempDir(t)
  const dest = path.join(dir, 'copy.db')
  for (const bad of [undefined, 42, {}, null]) {
    await expectReject(() => db.backup(bad), TypeError, 'ERR_INVALID_ARG_TYPE', /destination must be a string/)
  }
  for (const bad of ['', ':memory:', 'a\0b']) {
    await expectReject(() => db.backup(bad), ResqliteError, 'ERR_INVALID_PATH')
  }
  for (const [options, code, pattern] of [
    [42, 'ERR_INVALID_ARG_TYPE', /options must be an object/],
    [{ signals: 1 }, 'ERR_INVALID_ARG_VALUE', /unknown backup option 'signals'/],
    [{ progress: 'yes' }, 'ERR_INVALID_ARG_TYPE', /progress must be a function/],
    [{ signal: {} }, 'ERR_INVALID_ARG_TYPE', /signal must be an AbortSignal/],
  ]) {
    await expectReject(() => db.backup(dest, options), TypeError, code, pattern)
  }
  fs.writeFileSync(dest, 'not to be replaced')
  await expectReject(() => db.backup(dest), ResqliteError, 'ERR_INVALID_PATH', /exists/)
  assert.equal(fs.readFileSync(dest, 'utf8'), 'not to be replaced')
  await expectReject(() => db.backup(db.path), ResqliteError, 'ERR_INVALID_PATH', /exists/)
  const missing = path.join(dir, 'no', 'such', 'dir', 'copy.db')
  await expectReject(() => db.backup(missing), ResqliteError, /^SQLITE_CANTOPEN/, /no\/such\/dir/)
  assert.deepStrictEqual(fs.readdirSync(dir), ['copy.db'])
  await db.close()
  await expectReject(() => db.backup(path.join(dir, 'late.db')), ResqliteError, 'ERR_DATABASE_CLOSED')
})

test('serialize gives the committed database as one image that opens as a database', async (t) => {
  const db = await openDb(t, { encryptionKey: 'image key' })
  await fill(db, 50)
  const dir = tempDir(t)
  const image = await db.transaction(async (tx) => {
    await tx.execute("INSERT INTO t (v) VALUES ('uncommitted')")
    return db.serialize() // on a reader: the committed state
  })
  assert.ok(Buffer.isBuffer(image))
  // An encrypted database's image is plaintext: the pages as SQLite reads them.
  assert.equal(image.subarray(0, 16).toString('latin1'), 'SQLite format 3\0')
  const file = path.join(dir, 'image.db')
  fs.writeFileSync(file, image)
  await checkCopy(file, {}, 50)
  await db.close()
  await expectReject(() => db.serialize(), ResqliteError, 'ERR_DATABASE_CLOSED')
})

test('a rekey called during a backup waits for it; the copy keeps the key it began with', async (t) => {
  const db = await openDb(t, { encryptionKey: 'old key' })
  await fill(db, 12_000)
  const dir = tempDir(t)
  const dest = path.join(dir, 'copy.db')
  let rekeyed
  let backupDone = false
  await db.backup(dest, {
    progress: () => {
      rekeyed ??= db.rekey('new key').then(() => backupDone)
    },
  })
  backupDone = true
  assert.equal(await rekeyed, true, 'the rekey finished after the backup')
  await checkCopy(dest, { encryptionKey: 'old key' }, 12_000)
  assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n FROM t'), { n: 12_000 })
})
