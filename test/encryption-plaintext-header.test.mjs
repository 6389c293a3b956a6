// cipher: { name: 'chacha20', plaintextHeaderSize: N }: the first N bytes of the file stay
// plaintext (SQLite's header: page size, file format, page count), everything else is encrypted.
// LiteFS needs it to replicate an encrypted database (docs/replication.md, test/replicas.test.mjs).

import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, tempDir } from './helpers.mjs'

const CIPHER = { name: 'chacha20', plaintextHeaderSize: 32 }

test('plaintextHeaderSize: 32 leaves SQLite header plaintext, encrypts the rest, and reopens with the same settings', async (t) => {
  const file = path.join(tempDir(t), 'header.db')
  const key = crypto.randomBytes(32)
  const db = await Database.open(file, { encryptionKey: key, cipher: CIPHER })
  await db.execute('CREATE TABLE t (v TEXT)')
  await db.execute("INSERT INTO t VALUES ('a secret row')")
  await db.close()

  const bytes = fs.readFileSync(file)
  assert.equal(bytes.subarray(0, 16).toString('latin1'), 'SQLite format 3\0', 'the header is plaintext')
  assert.equal(bytes.readUInt16BE(16), 4096, 'the page size is readable')
  assert.equal(bytes[18], 2, 'WAL mode is readable')
  assert.ok(!bytes.includes('a secret row'), 'the rows are encrypted')
  assert.ok(!bytes.includes('CREATE TABLE'), 'the schema is encrypted')

  const again = await Database.open(file, { encryptionKey: key, cipher: CIPHER, readonly: true })
  assert.deepEqual(await again.select('SELECT v FROM t'), [{ v: 'a secret row' }])
  await again.close()
  await expectReject(
    () => Database.open(file, { encryptionKey: crypto.randomBytes(32), cipher: CIPHER, readonly: true }),
    ResqliteError,
    'ERR_ENCRYPTION_KEY',
  )
})

// With the header on disk in plaintext, wrong settings reach SQLite as garbage rather than as a
// failed MAC, and which check SQLite trips first depends on the garbage's bytes (it said
// SQLITE_ERROR or SQLITE_CORRUPT, about 1 file in 35, before the engine named the mismatch).
// So many files, each with its own key and nonces, and every way of opening each.
test('wrong settings for a plaintext header are named the same way whatever the encrypted bytes are', async (t) => {
  const dir = tempDir(t)
  for (let i = 0; i < 60; i++) {
    const file = path.join(dir, `header-${i}.db`)
    const key = crypto.randomBytes(32)
    const db = await Database.open(file, { encryptionKey: key, cipher: CIPHER })
    await db.execute('CREATE TABLE t (v TEXT)')
    await db.execute('INSERT INTO t VALUES (?)', [`row ${i}`])
    await db.close()
    for (const readonly of [true, false]) {
      // Without the key: as any encrypted database opened without its key.
      await expectReject(
        () => Database.open(file, { readonly }),
        ResqliteError,
        'SQLITE_NOTADB',
        /header is plaintext but its pages keep 32 reserved bytes/,
        /open it with its encryptionKey and cipher/,
      )
      // With the key but without plaintextHeaderSize: the settings do not match.
      await expectReject(
        () => Database.open(file, { encryptionKey: key, readonly }),
        ResqliteError,
        'ERR_ENCRYPTION_KEY',
        /header is plaintext, so it was written without encryption or with cipher plaintextHeaderSize/,
      )
    }
    // The file was left as it was: it still opens with its settings.
    const again = await Database.open(file, { encryptionKey: key, cipher: CIPHER, readonly: true })
    assert.deepEqual(await again.select('SELECT v FROM t'), [{ v: `row ${i}` }])
    await again.close()
  }
})

test('plaintextHeaderSize given for a database encrypted whole rejects with ERR_ENCRYPTION_KEY', async (t) => {
  const file = path.join(tempDir(t), 'whole.db')
  const key = crypto.randomBytes(32)
  const db = await Database.open(file, { encryptionKey: key })
  await db.execute('CREATE TABLE t (v TEXT)')
  await db.close()
  await expectReject(
    () => Database.open(file, { encryptionKey: key, cipher: CIPHER }),
    ResqliteError,
    'ERR_ENCRYPTION_KEY',
  )
  const again = await Database.open(file, { encryptionKey: key })
  assert.deepEqual(await again.select('SELECT count(*) AS n FROM t'), [{ n: 0 }])
  await again.close()
})

test('plaintextHeaderSize needs raw key bytes, and 0–100', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'refused.db')
  await expectReject(
    () => Database.open(file, { encryptionKey: 'a passphrase', cipher: CIPHER }),
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    /plaintextHeaderSize needs raw key bytes/,
  )
  await expectReject(
    () =>
      Database.open(file, {
        encryptionKey: crypto.randomBytes(32),
        cipher: { name: 'chacha20', plaintextHeaderSize: 101 },
      }),
    RangeError,
    'ERR_OUT_OF_RANGE',
    /plaintextHeaderSize/,
  )
  assert.deepEqual(fs.readdirSync(dir), [], 'no file was created')
})
