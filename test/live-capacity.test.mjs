// Capacity overflow in dependency tracking: a query whose reads cannot all be recorded depends
// on everything (never on nothing).

import assert from 'node:assert/strict'
import { test } from 'node:test'

import { openDb } from './helpers.mjs'
import { collect, counters, waitCounters } from './live-helpers.mjs'

test('a query with more reads than can be recorded falls back to depending on everything', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE w (id INTEGER PRIMARY KEY, c INTEGER); INSERT INTO w VALUES (1, 7)')
  await db.execute('CREATE TABLE other (id INTEGER PRIMARY KEY, x INTEGER); INSERT INTO other VALUES (1, 0)')
  const before = await counters(db)
  // 50 result columns of 100 column references each: 5,000 reads, more than the 4,096 recorded
  const refs = Array(100).fill('c').join(', ')
  const select = Array.from({ length: 50 }, (_, k) => `coalesce(${refs}) AS k${k}`).join(', ')
  const wide = collect(db.stream(`SELECT ${select} FROM w`))
  assert.equal((await wide.next())[0].k49, 7)
  assert.equal((await counters(db)).fallbackAll, before.fallbackAll + 1)
  // a table it does not read at all still re-runs it (hash-suppressed: nothing delivered)
  await db.execute('UPDATE other SET x = x + 1')
  await waitCounters(
    db,
    (s) => s.requeries === before.requeries + 1 && s.unchangedSuppressed === before.unchangedSuppressed + 1,
    'the fallback re-run',
  )
  assert.equal(wide.deliveries.length, 1)
})
