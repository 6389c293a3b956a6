// The benchmark lanes check the work every sample does: a driver that returns fewer rows or
// issues fewer statements than the lane declares must fail the lane, not produce a number.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runLane } from '../bench/lanes/index.mjs'
import { CONFIGS, counting, measure } from '../bench/measure.mjs'

// A fake synchronous driver over no database: `SELECT * FROM t WHERE id <= ?` returns rows
// computed from the parameter, shortened by `short` rows.
function fakeDriver({ short = 0 } = {}) {
  return {
    sync: true,
    exec() {},
    prepare: () => ({
      all: ([n]) => Array.from({ length: Math.max(0, n - short) }, (_, i) => ({ id: i + 1 })),
      get: () => ({ id: 1 }),
    }),
    transaction: (body) => () => body({}),
    close() {},
  }
}

test('a driver doing the declared work passes the select lane', async () => {
  const cases = await runLane('select', fakeDriver(), CONFIGS.smoke)
  assert.deepEqual(
    cases.map((c) => [c.id, c.checkedSamples]),
    [
      ['select.10', 1],
      ['select.100', 1],
      ['select.1000', 1],
      ['select.10000', 1],
    ],
  )
})

test('a driver that drops a row fails the lane', async () => {
  await assert.rejects(
    runLane('select', fakeDriver({ short: 1 }), CONFIGS.smoke),
    /work check failed.*rows = 9, expected 10/,
  )
})

test('an op that issues fewer statements than declared fails (operation count)', async () => {
  const d = counting(fakeDriver(), { ops: 0 })
  const q = await d.prepare('SELECT * FROM t WHERE id <= ?')
  const op = () => [q.all([10])] // declares two queries, issues one
  await assert.rejects(
    measure(d, op, CONFIGS.smoke, { expect: { ops: 2, rows: 20 }, count: (rs) => ({ rows: rs.flat().length }) }),
    /ops = 1, expected 2/,
  )
})
