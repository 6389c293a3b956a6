// The `vfs` open option and Database.loadExtension (docs/api.md "Database.open" options,
// docs/replication.md "Litestream's VFS"), with SQLite's built-in VFSes and sqlite-vec: the
// option reaches every connection, an unregistered name is a typed error naming it, bad input
// is refused before any file is touched, and loading process-wide is checked and idempotent.
// Litestream's VFS itself: test/replicas-litestream.test.mjs.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import * as sqliteVec from 'sqlite-vec'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, tempDir } from './helpers.mjs'

test('a VFS that is not registered rejects the open with ERR_VFS_NOT_FOUND naming it; no file is made', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'x.db')
  for (const options of [{ vfs: 'litestream' }, { vfs: 'litestream', replica: true }]) {
    await expectReject(
      () => Database.open(file, options),
      ResqliteError,
      'ERR_VFS_NOT_FOUND',
      /no VFS named 'litestream' is registered/,
      /Database\.loadExtension/,
    )
  }
  assert.deepStrictEqual(fs.readdirSync(dir), [])
})

test("every connection opens through the named VFS: 'unix-dotfile' has no shared memory, so no WAL", async (t) => {
  const dir = tempDir(t)
  // The default VFS by its name: the database works as usual, reads and writes.
  const plain = await Database.open(path.join(dir, 'a.db'), { vfs: 'unix' })
  await plain.execute('CREATE TABLE t (x)')
  await plain.execute('INSERT INTO t VALUES (1)')
  assert.deepStrictEqual(await plain.select('SELECT x FROM t'), [{ x: 1 }])
  await plain.close()
  // unix-dotfile cannot hold a WAL index: the writer's switch to WAL fails, which it would
  // not through the default VFS.
  await expectReject(
    () => Database.open(path.join(dir, 'b.db'), { vfs: 'unix-dotfile' }),
    ResqliteError,
    'ERR_WAL_UNAVAILABLE',
  )
  const again = await Database.open(path.join(dir, 'b.db'))
  await again.close()
})

test('bad vfs options are TypeErrors naming the option, before any file is touched', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'bad.db')
  for (const [options, code, pattern] of [
    [{ vfs: 7 }, 'ERR_INVALID_ARG_TYPE', /vfs must be a VFS name, got type number/],
    [{ vfs: null }, 'ERR_INVALID_ARG_TYPE', /vfs must be a VFS name/],
    [{ vfs: '' }, 'ERR_INVALID_ARG_VALUE', /vfs is empty/],
    [{ vfs: 'a\0b' }, 'ERR_INVALID_ARG_VALUE', /NUL/],
    [{ vfs: 'unix', encryptionKey: 'k' }, 'ERR_INVALID_ARG_VALUE', /vfs cannot be combined with encryptionKey/],
  ]) {
    await expectReject(() => Database.open(file, options), TypeError, code, pattern)
  }
  assert.deepStrictEqual(fs.readdirSync(dir), [])
})

test('Database.loadExtension loads once for the process; a failure is ERR_EXTENSION naming the file', async (t) => {
  const dir = tempDir(t)
  const missing = path.join(dir, 'no-such-extension.so')
  await expectReject(
    () => Database.loadExtension(missing),
    ResqliteError,
    'ERR_EXTENSION',
    new RegExp(`cannot load extension '${missing.replaceAll('.', '\\.')}'`),
  )
  const vec = sqliteVec.getLoadablePath()
  await expectReject(
    () => Database.loadExtension({ path: vec, entryPoint: 'no_such_init' }),
    ResqliteError,
    'ERR_EXTENSION',
    /no_such_init/,
  )
  // Loaded, then asked again: nothing more happens (a VFS extension would fail registering
  // its VFS a second time).
  assert.equal(await Database.loadExtension(vec), undefined)
  assert.equal(await Database.loadExtension(vec), undefined)
  for (const [arg, code, pattern] of [
    [undefined, 'ERR_INVALID_ARG_TYPE', /extension must be a path or \{ path, entryPoint \}/],
    [[vec], 'ERR_INVALID_ARG_TYPE', /extension must be a path/],
    [{ path: vec, entry: 'x' }, 'ERR_INVALID_ARG_VALUE', /unknown extension option 'entry'/],
    [{ path: '' }, 'ERR_INVALID_ARG_VALUE', /extension\.path is empty/],
  ]) {
    await expectReject(() => Database.loadExtension(arg), TypeError, code, pattern)
  }
})
