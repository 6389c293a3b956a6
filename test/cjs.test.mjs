// The CommonJS entry works and shares its classes with the ESM entry.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import * as esm from '../dist/esm/index.mjs'

const require = createRequire(import.meta.url)

test('require() exposes Database and ResqliteError, the same classes as the ESM entry', async (t) => {
  const cjs = require('../dist/cjs/index.js')
  assert.equal(typeof cjs.Database, 'function')
  assert.equal(typeof cjs.ResqliteError, 'function')
  assert.equal(cjs.ResqliteError, esm.ResqliteError, 'ResqliteError must be the same class from both entries')
  assert.ok(cjs.ResqliteError.prototype instanceof Error, 'ResqliteError must extend Error')

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const db = await cjs.Database.open(path.join(dir, 'cjs.db'))
  try {
    await db.execute('CREATE TABLE t (v TEXT)')
    await db.execute('INSERT INTO t VALUES (?)', ['from cjs'])
    assert.deepStrictEqual(await db.select('SELECT v FROM t'), [{ v: 'from cjs' }])
    // an error raised through the CJS entry is an instance of the ESM class
    let err
    try {
      await db.select('SELEC 1')
    } catch (e) {
      err = e
    }
    assert.ok(err instanceof esm.ResqliteError, `expected the ESM ResqliteError, got ${err?.constructor?.name}`)
    assert.ok(err instanceof cjs.ResqliteError)
    assert.equal(err.code, 'SQLITE_ERROR')
  } finally {
    await db.close()
  }
})

test('every subpath export resolves to ESM, CommonJS and types, one implementation behind both', async () => {
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url)))
  for (const [subpath, entry] of Object.entries(pkg.exports)) {
    for (const file of [entry.import.types, entry.import.default, entry.require.types, entry.require.default]) {
      assert.ok(fs.existsSync(new URL(`../${file}`, import.meta.url)), `${subpath}: ${file} is built`)
    }
    // The package's own name resolves through its exports (self-reference), as users import it.
    const specifier = path.posix.join(pkg.name, subpath)
    const fromEsm = await import(specifier)
    const fromCjs = require(specifier)
    assert.deepStrictEqual(Object.keys(fromEsm).sort(), Object.keys(fromCjs).sort(), `${specifier}: same exports`)
    for (const name of Object.keys(fromCjs)) assert.equal(fromEsm[name], fromCjs[name], `${specifier}: ${name}`)
  }
})
