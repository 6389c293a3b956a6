// watchExternalChanges: bad values are refused before the file is touched; diagnostics() on a
// closed database.

import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'

import { Database } from '../dist/esm/index.mjs'
import { tempDir } from './helpers.mjs'

test('watchExternalChanges: wrong types, unknown keys and out-of-range intervals are named errors; nothing is created', async (t) => {
  const file = path.join(tempDir(t), 'never.db')
  for (const [watch, code, pattern] of [
    ['yes', 'ERR_INVALID_ARG_TYPE', /watchExternalChanges must be a boolean or \{ interval \}, got type string/],
    [null, 'ERR_INVALID_ARG_TYPE', /watchExternalChanges must be/],
    [{ every: 10 }, 'ERR_INVALID_ARG_VALUE', /unknown watchExternalChanges option 'every'/],
    [{ interval: '10' }, 'ERR_INVALID_ARG_TYPE', /watchExternalChanges\.interval must be an integer/],
    [{ interval: 1.5 }, 'ERR_INVALID_ARG_TYPE', /watchExternalChanges\.interval must be an integer/],
    [{ interval: 5 }, 'ERR_OUT_OF_RANGE', /watchExternalChanges\.interval must be between 10/],
  ]) {
    await assert.rejects(
      Database.open(file, { watchExternalChanges: watch }),
      (e) => e.code === code && pattern.test(e.message),
      JSON.stringify(watch),
    )
  }
  assert.equal(existsSync(file), false)
})

test('close() with a watched live query: the subscription completes, diagnostics() then rejects', async (t) => {
  const db = await Database.open(path.join(tempDir(t), 'd.db'), { watchExternalChanges: true })
  let completed = false
  const stop = db.stream('SELECT 1 AS one').subscribe({ next() {}, complete: () => (completed = true) })
  await db.close()
  assert.equal(completed, true)
  // Every call after close rejects (docs/api.md "close"), diagnostics() too.
  await assert.rejects(db.diagnostics(), { code: 'ERR_DATABASE_CLOSED' })
  stop() // after close: a no-op
})
