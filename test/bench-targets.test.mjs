// bench/targets.mjs: a ratio to a peer measured over --repeat runs carries the interval of its
// repeats, so a run on a drifting machine shows how far the ratio could move.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { rng } from '../bench/data.mjs'
import { summarize } from '../bench/stats.mjs'
import { TARGETS } from '../bench/targets.mjs'

const NAME = 'narrow table, 1,000 awaited point selects through a Statement: wall vs better-sqlite3'
const target = TARGETS.find((t) => t.name === NAME)

const noisy = (n, center, seed) => {
  const r = rng(seed)
  return Array.from({ length: n }, () => center * (1 + 0.1 * (r() - 0.5)))
}
// One library's case: its repeats' wall samples (and, with more than one repeat, each kept).
const row = (lib, repeats) => {
  const wall = repeats.flat()
  const c = { lib, id: 'narrow-point-awaited', wall: summarize(wall), js: summarize(wall) }
  if (repeats.length > 1) c.repeatSamples = { wall: repeats, js: repeats }
  return c
}

test('a single run: the ratio of medians, no interval', () => {
  const out = target.evaluate([row('resqlite', [noisy(100, 1.1, 1)]), row('better-sqlite3', [noisy(100, 1.0, 2)])])
  assert.ok(Math.abs(out.value - 1.1) < 0.02, `value ${out.value}`)
  assert.equal(out.ci, undefined)
  assert.equal(out.pass, true)
})

test('repeats: the interval holds the ratio, and widens when one run was disturbed', () => {
  const steady = target.evaluate([
    row('resqlite', [noisy(100, 1.1, 1), noisy(100, 1.1, 3), noisy(100, 1.1, 5)]),
    row('better-sqlite3', [noisy(100, 1.0, 2), noisy(100, 1.0, 4), noisy(100, 1.0, 6)]),
  ])
  assert.ok(steady.ci.lo <= steady.value && steady.value <= steady.ci.hi, JSON.stringify(steady))
  assert.ok(steady.ci.hi - steady.ci.lo < 0.05, JSON.stringify(steady.ci))
  // resqlite's second run met a machine 60 % slower; better-sqlite3's runs did not.
  const disturbed = target.evaluate([
    row('resqlite', [noisy(100, 1.1, 1), noisy(100, 1.76, 3), noisy(100, 1.1, 5)]),
    row('better-sqlite3', [noisy(100, 1.0, 2), noisy(100, 1.0, 4), noisy(100, 1.0, 6)]),
  ])
  assert.ok(disturbed.ci.hi - disturbed.ci.lo > 3 * (steady.ci.hi - steady.ci.lo), JSON.stringify(disturbed.ci))
  assert.ok(disturbed.ci.hi > 1.5, JSON.stringify(disturbed.ci))
})

test('repeats of different counts are not paired', () => {
  const out = target.evaluate([
    row('resqlite', [noisy(100, 1.1, 1), noisy(100, 1.1, 3)]),
    row('better-sqlite3', [noisy(100, 1.0, 2), noisy(100, 1.0, 4), noisy(100, 1.0, 6)]),
  ])
  assert.equal(out.ci, undefined)
})
