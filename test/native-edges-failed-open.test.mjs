// A failed open (wrong key, wrong cipher, no key) leaves every file of the database byte for byte
// as it was, the -shm (WAL index) included, as docs/encryption.md promises (issue 30 item 22).

import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'

import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, tempDir } from './helpers.mjs'

const TIMEOUT = { timeout: 60_000 }

/** Every file in `dir`, -shm included, by name: its SHA-256. */
function everyFile(dir) {
  const files = fs.readdirSync(dir).filter((f) => fs.statSync(path.join(dir, f)).isFile())
  return Object.fromEntries(
    files.sort().map((f) => [
      f,
      crypto
        .createHash('sha256')
        .update(fs.readFileSync(path.join(dir, f)))
        .digest('hex'),
    ]),
  )
}

test(
  'a failed open (wrong key, wrong cipher, no key) leaves .db, -wal and -shm byte for byte, 10 tries',
  TIMEOUT,
  async (t) => {
    const dir = tempDir(t)
    const file = path.join(dir, 'c.db')
    const key = 'the right passphrase'
    const cipher = { name: 'chacha20', kdfIter: 1000 } // a cheap KDF: the test opens many times
    const db = await Database.open(file, { encryptionKey: key, cipher, readers: 2 })
    await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
    // readers that hold read marks in -shm
    await Promise.all(Array.from({ length: 8 }, () => db.select('SELECT count(*) FROM t', [], {})))
    const wrongOpens = [
      { encryptionKey: `${key}!`, cipher },
      { encryptionKey: key, cipher: { name: 'chacha20', kdfIter: 1001 } },
      { encryptionKey: key, cipher: 'sqlcipher' },
      { encryptionKey: `${key}!`, cipher, readonly: true },
      {},
      { readonly: true },
    ]
    for (let i = 0; i < 10; i++) {
      // a commit moves the WAL past every read mark: an open that begins a read takes one
      await db.execute('INSERT INTO t (v) VALUES (?)', [`row ${i}`])
      const before = everyFile(dir)
      assert.ok(before['c.db-wal'] && before['c.db-shm'], 'the WAL and its index exist')
      const options = wrongOpens[i % wrongOpens.length]
      await expectReject(
        () => Database.open(file, options),
        ResqliteError,
        options.encryptionKey ? 'ERR_ENCRYPTION_KEY' : 'SQLITE_NOTADB',
      )
      assert.deepStrictEqual(everyFile(dir), before, `try ${i}: ${JSON.stringify({ ...options, encryptionKey: '…' })}`)
    }
    assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, 10)
    await db.close()
    // the right key still opens it
    const again = await Database.open(file, { encryptionKey: key, cipher })
    assert.equal((await again.selectOne('SELECT count(*) AS n FROM t')).n, 10)
    await again.close()
  },
)

test('a failed open of a crash image (a WAL, no -shm) creates no file and changes none', TIMEOUT, async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'c.db')
  const key = 'k'
  const cipher = { name: 'chacha20', kdfIter: 1000 }
  const db = await Database.open(file, { encryptionKey: key, cipher })
  await db.execute('CREATE TABLE t (v)')
  await db.execute('INSERT INTO t VALUES (1), (2)')
  const crash = path.join(dir, 'crash')
  fs.mkdirSync(crash)
  for (const f of ['c.db', 'c.db-wal']) fs.copyFileSync(path.join(dir, f), path.join(crash, f))
  await db.close()
  const before = everyFile(crash)
  assert.deepStrictEqual(Object.keys(before), ['c.db', 'c.db-wal'])
  const crashFile = path.join(crash, 'c.db')
  await expectReject(
    () => Database.open(crashFile, { encryptionKey: 'wrong', cipher }),
    ResqliteError,
    'ERR_ENCRYPTION_KEY',
  )
  await expectReject(() => Database.open(crashFile, { readonly: true }), ResqliteError, 'SQLITE_NOTADB')
  assert.deepStrictEqual(everyFile(crash), before)
  const good = await Database.open(crashFile, { encryptionKey: key, cipher })
  assert.equal((await good.selectOne('SELECT count(*) AS n FROM t')).n, 2)
  await good.close()
})

/** With `db` open on `file` (a WAL and its index in place), a commit then an open with
 * `wrong` options, `tries` times: each open fails and every file in `dir` stays as it was. */
async function failedOpensChangeNothing(db, dir, file, wrong, tries = 3) {
  for (let i = 0; i < tries; i++) {
    await db.execute('INSERT INTO t VALUES (?)', [i])
    const before = everyFile(dir)
    assert.ok(
      Object.keys(before).some((f) => f.endsWith('-shm')),
      'the WAL index exists',
    )
    await expectReject(() => Database.open(file, wrong), ResqliteError, 'ERR_ENCRYPTION_KEY')
    assert.deepStrictEqual(everyFile(dir), before, `try ${i}`)
  }
}

test('the key check before the open takes paths that a URI would misread, and relative ones', TIMEOUT, async (t) => {
  const dir = path.join(tempDir(t), 'a%20b?c#d')
  fs.mkdirSync(dir)
  const file = path.join(dir, 'x.db')
  const cipher = { name: 'chacha20', kdfIter: 1000 }
  const db = await Database.open(file, { encryptionKey: 'k', cipher })
  await db.execute('CREATE TABLE t (v)')
  await failedOpensChangeNothing(db, dir, file, { encryptionKey: 'not k', cipher })
  const second = await Database.open(file, { encryptionKey: 'k', cipher, readonly: true })
  assert.equal((await second.selectOne('SELECT count(*) AS n FROM t')).n, 3)
  await second.close()
  const cwd = process.cwd()
  process.chdir(dir)
  try {
    await failedOpensChangeNothing(db, dir, 'x.db', { encryptionKey: 'no', cipher })
  } finally {
    process.chdir(cwd)
  }
  await db.close()
})
