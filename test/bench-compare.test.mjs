// bench/compare.mjs: the noise rule that decides wins and regressions between two results files.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { compare, compareCase } from '../bench/compare.mjs'
import { rng } from '../bench/data.mjs'
import { summarize } from '../bench/stats.mjs'

// A results object with one async library and one case whose wall samples are given.
const file = (wall) => ({
  results: [
    {
      lib: 'resqlite',
      sync: false,
      cases: [{ id: 'select.1000', title: 't', wall: summarize(wall), js: summarize(wall.map((x) => x / 4)) }],
    },
  ],
})
const noisy = (n, center, spread, seed) => {
  const r = rng(seed)
  return Array.from({ length: n }, () => center * (1 + spread * (r() - 0.5)))
}

test('a file compared with itself: no wins, no regressions', () => {
  const f = file(noisy(200, 1.0, 0.2, 1))
  const c = compare(f, f)
  assert.equal(c.rows.length, 2) // wall and JS-thread
  assert.deepEqual(c.byLib.resqlite, { wins: 0, regressions: 0, noise: 2 })
})

test('a 50 % slowdown is a regression, a 3 % one is noise, a 40 % speed-up a win', () => {
  const base = noisy(200, 1.0, 0.2, 1)
  assert.equal(
    compareCase(file(base).results[0].cases[0], file(base.map((x) => x * 1.5)).results[0].cases[0], 'wall').verdict,
    'regression',
  )
  assert.equal(
    compareCase(file(base).results[0].cases[0], file(noisy(200, 1.03, 0.2, 2)).results[0].cases[0], 'wall').verdict,
    'noise',
  )
  assert.equal(
    compareCase(file(base).results[0].cases[0], file(base.map((x) => x * 0.6)).results[0].cases[0], 'wall').verdict,
    'win',
  )
})

test('the threshold widens with noise: 3 × MAD wins over 10 %', () => {
  const wide = noisy(200, 1.0, 1.5, 3) // MAD ≈ 37 % of the median
  const c = compareCase(file(wide).results[0].cases[0], file(wide.map((x) => x * 1.3)).results[0].cases[0], 'wall')
  assert.ok(c.thresholdPct > 30, `threshold ${c.thresholdPct}`)
  assert.equal(c.verdict, 'noise')
})

test('changes below 0.02 ms never count', () => {
  const tiny = noisy(200, 0.01, 0.01, 4)
  const c = compareCase(file(tiny).results[0].cases[0], file(tiny.map((x) => x * 1.8)).results[0].cases[0], 'wall')
  assert.equal(c.verdict, 'noise')
})
