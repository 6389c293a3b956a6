// Durability (docs/api.md "Durability"): the `synchronous` option holds on every connection
// (writer, readers, the JS thread's own) and whenever one reopens (rekey, idleTimeout), a user's
// `PRAGMA synchronous` survives a rekey, and a FULL commit stays off the JS thread. And an
// encrypted database whose page 1 a power cut tore in the file, with its newest copy in the
// WAL, opens (docs/encryption.md "Options"; issue 43).

import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, tempDir } from './helpers.mjs'
import { inlineCounts, openOwnConnection, PLACEMENT } from './inline-helpers.mjs'
import { INSERT, sleep } from './tx-helpers.mjs'

const T = { timeout: 60_000 }
const NORMAL = 1
const FULL = 2
const SECRET = 'durability secret'

/** `PRAGMA synchronous` on the writer's connection. */
async function onWriter(db) {
  const { rows } = await db.execute('PRAGMA synchronous')
  return rows[0].synchronous
}

/** `PRAGMA synchronous` on a reader's connection (a database opened with `inlineBudget: 0`,
 * whose reads all run on the readers). */
async function onReader(db) {
  return (await db.selectOne('PRAGMA synchronous')).synchronous
}

/** `PRAGMA synchronous` on the JS thread's own connection (a read from outside a transaction that
 * holds the writer's, until one ran there). */
async function onOwnConnection(db) {
  return (await openOwnConnection(db, 'PRAGMA synchronous')).synchronous
}

async function waitFor(done, what) {
  for (let i = 0; i < 1000 && !done(); i++) await sleep(10)
  assert.ok(done(), what)
}

async function idleClosedSince(before) {
  await waitFor(() => Database.processDiagnostics().idleClosed > before, 'an idle connection closed')
}

async function open(t, file, options) {
  const db = await Database.open(file, options)
  t.after(() => db.close())
  return db
}

test('synchronous refuses anything but normal and full, naming the option and its values, before any file is touched', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'bad.db')
  for (const bad of ['FULL', 'extra', 'off', '', 2, true, null, {}]) {
    await expectReject(
      () => Database.open(file, { synchronous: bad }),
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      /synchronous must be 'normal' or 'full'/,
    )
  }
  assert.deepStrictEqual(fs.readdirSync(dir), [])
})

for (const [option, level] of [
  [undefined, NORMAL],
  ['normal', NORMAL],
  ['full', FULL],
]) {
  const options = option === undefined ? {} : { synchronous: option }
  test(
    `synchronous: ${option ?? '(default)'} holds on the writer, a reader and the JS thread's connection, after rekey and after an idle reopen`,
    T,
    async (t) => {
      const dir = tempDir(t)
      const file = path.join(dir, 'sync.db')
      const levels = async (db) => ({ writer: await onWriter(db), reader: await onReader(db) })
      const expected = { writer: level, reader: level }

      // writer and readers: encrypted, rekeyed (every connection closes and reopens)
      let db = await Database.open(file, { ...options, inlineBudget: 0, encryptionKey: SECRET })
      await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
      assert.deepStrictEqual(await levels(db), expected, 'as opened')
      await db.rekey(`${SECRET} 2`)
      assert.deepStrictEqual(await levels(db), expected, 'after rekey')
      await db.close()

      // the JS thread's own connection (an encrypted database opens it with the database)
      db = await Database.open(file, { ...options, ...PLACEMENT, encryptionKey: `${SECRET} 2` })
      assert.equal(await onOwnConnection(db), level, 'own connection, as opened')
      await db.rekey(SECRET)
      assert.equal(await onOwnConnection(db), level, 'own connection, after rekey')
      assert.equal(await onWriter(db), level, 'writer, after rekey')
      await db.close()

      // idle reopen: a plaintext database's readers and own connection close after idleTimeout
      const plain = path.join(dir, 'plain.db')
      db = await Database.open(plain, { ...options, inlineBudget: 0, idleTimeout: 50, readers: 1 })
      assert.equal(await onReader(db), level)
      await idleClosedSince(Database.processDiagnostics().idleClosed)
      assert.equal(await onReader(db), level, 'reader, reopened after idleTimeout')
      await db.close()
      const own = await open(t, plain, { ...options, ...PLACEMENT, idleTimeout: 50, readers: 1 })
      assert.equal(await onOwnConnection(own), level)
      await waitFor(() => Database.processDiagnostics().connections === 1, "only the writer's connection is left open")
      assert.equal(await onOwnConnection(own), level, 'own connection, reopened after idleTimeout')
      assert.equal(await onWriter(own), level)
    },
  )
}

test('synchronous holds on the connections of a read-only database and of a replica', T, async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'primary.db')
  const primary = await open(t, file, {})
  await primary.execute('CREATE TABLE t (id INTEGER PRIMARY KEY)')
  for (const options of [{ readonly: true }, { replica: true }]) {
    for (const [option, level] of [
      ['normal', NORMAL],
      ['full', FULL],
    ]) {
      const db = await open(t, file, { ...options, synchronous: option, inlineBudget: 0 })
      assert.equal(await onReader(db), level, `${JSON.stringify(options)}, synchronous: '${option}'`)
      await db.close()
    }
  }
})

test("a user's PRAGMA synchronous on the writer survives rekey, both ways", T, async (t) => {
  const dir = tempDir(t)
  for (const [option, pragma, level] of [
    ['normal', 'FULL', FULL],
    ['full', 'NORMAL', NORMAL],
  ]) {
    const db = await open(t, path.join(dir, `${option}.db`), { synchronous: option, encryptionKey: SECRET })
    await db.execute(`PRAGMA synchronous = ${pragma}`)
    assert.equal(await onWriter(db), level)
    await db.rekey(`${SECRET} 2`)
    assert.equal(await onWriter(db), level, `synchronous: '${option}', then PRAGMA synchronous = ${pragma}, then rekey`)
    await db.rekey(null)
    assert.equal(await onWriter(db), level, 'after rekey(null)')
  }
})

test("synchronous: 'full' keeps writes and COMMITs off the JS thread (they would sync there)", T, async (t) => {
  const dir = tempDir(t)
  for (const [option, ran] of [
    ['normal', { writes: 2, commits: 1 }],
    ['full', { writes: 1, commits: 0 }],
  ]) {
    const db = await open(t, path.join(dir, `${option}.db`), { synchronous: option, ...PLACEMENT })
    await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
    const before = await inlineCounts(db)
    await db.execute(INSERT, ['alone'])
    await db.transaction((tx) => tx.execute(INSERT, ['in a transaction']))
    const after = await inlineCounts(db)
    // at 'normal' the lone write and the transaction's write and COMMIT run inline; at 'full'
    // only the transaction's write (nothing syncs before its COMMIT)
    assert.deepStrictEqual(
      { writes: after.writes - before.writes, commits: after.commits - before.commits },
      ran,
      option,
    )
    assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n FROM t'), { n: 2 })
  }
})

const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')
const snapshot = (dir) =>
  Object.fromEntries(
    fs
      .readdirSync(dir)
      .sort()
      .map((f) => [f, sha256(path.join(dir, f))]),
  )

const RAW = new Uint8Array(32).fill(7)
const WRONG_RAW = new Uint8Array(32).fill(9)

for (const [cipher, key, wrong] of [
  ['chacha20', SECRET, 'not the key'],
  ['sqlcipher', SECRET, 'not the key'],
  ['aegis', SECRET, 'not the key'],
  [{ name: 'chacha20', plaintextHeaderSize: 32 }, RAW, WRONG_RAW],
]) {
  test(
    `an encrypted database (${JSON.stringify(cipher)}) whose page 1 a power cut tore in the file, its newest copy in the WAL, opens with every row and passes integrity_check; a wrong key is refused and changes no file`,
    T,
    async (t) => {
      const dir = tempDir(t)
      const file = path.join(dir, 'torn.db')
      // checkpoints: 'external': no checkpoint ever, none on close either, so page 1's newest
      // version (the table's schema) stays in the WAL and the file keeps the one WAL mode wrote
      const db = await Database.open(file, { encryptionKey: key, cipher, checkpoints: 'external' })
      await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
      await db.executeBatch(
        'INSERT INTO t (v) VALUES (?)',
        Array.from({ length: 100 }, (_, i) => [`row ${i}`]),
      )
      await db.close()
      assert.ok(fs.statSync(`${file}-wal`).size > 0, 'the WAL is kept')
      // A torn page 1: its third 512-byte sector is garbage (a write the cut left half done).
      const fd = fs.openSync(file, 'r+')
      fs.writeSync(fd, crypto.randomBytes(512), 0, 512, 1024)
      fs.closeSync(fd)

      const before = snapshot(dir)
      await expectReject(
        () => Database.open(file, { encryptionKey: wrong, cipher }),
        ResqliteError,
        'ERR_ENCRYPTION_KEY',
      )
      assert.deepStrictEqual(snapshot(dir), before, 'a wrong key leaves every file as it was')
      assert.deepStrictEqual(
        fs.readdirSync(path.dirname(dir)).filter((f) => f.startsWith(`resqlite-keycheck-${process.pid}-`)),
        [],
        'no private copy is left behind',
      )

      const reopened = await open(t, file, { encryptionKey: key, cipher })
      assert.deepStrictEqual(await reopened.selectOne('SELECT count(*) AS n FROM t'), { n: 100 })
      assert.deepStrictEqual(await reopened.select('PRAGMA integrity_check'), [{ integrity_check: 'ok' }])
    },
  )
}
