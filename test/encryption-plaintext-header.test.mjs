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
  // Without the key, or with it but without plaintextHeaderSize: SQLite reads the plaintext
  // header, then the encrypted rest of page 1.
  for (const options of [{}, { encryptionKey: key }]) {
    await expectReject(
      () => Database.open(file, { ...options, readonly: true }),
      ResqliteError,
      'SQLITE_ERROR',
      /unsupported file format/,
    )
  }
  await expectReject(
    () => Database.open(file, { encryptionKey: crypto.randomBytes(32), cipher: CIPHER, readonly: true }),
    ResqliteError,
    'ERR_ENCRYPTION_KEY',
  )
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
