// Live queries across a rekey: every reader reopens with the new key, the writer reopens too;
// a stream subscribed before keeps updating afterwards.

import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'

import { Database } from '../dist/esm/index.mjs'
import { tempDir } from './helpers.mjs'
import { collect, counters } from './live-helpers.mjs'

test('a stream keeps updating after rekey (plain → encrypted → other key → plain)', async (t) => {
  const file = path.join(tempDir(t), 'rekey.db')
  const db = await Database.open(file)
  t.after(() => db.close())
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, w INTEGER)')
  const c = collect(db.stream('SELECT id, v FROM t ORDER BY id'))
  assert.deepEqual(await c.next(), [])
  let n = 0
  for (const key of ['first key', 'second key', null]) {
    await db.rekey(key)
    await db.execute('INSERT INTO t (v) VALUES (?)', [`row ${++n}`])
    const rows = await c.next()
    assert.equal(rows.length, n, `after rekey to ${key === null ? 'plaintext' : 'a new key'}`)
    assert.deepEqual(rows, await db.select('SELECT id, v FROM t ORDER BY id'))
  }
  // the reopened writer still tracks changes by column
  const before = await counters(db)
  await db.execute('UPDATE t SET w = 1')
  const after = await counters(db)
  assert.equal(after.requeries, before.requeries)
  assert.equal(after.skippedByColumns, before.skippedByColumns + 1)
})
