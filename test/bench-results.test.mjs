// bench/results-file.mjs: a run's JSON is compact (one line, no raw samples unless asked for)
// and keeps every summary the readers use; bench/compare.mjs reads it as it is.

import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { compare } from '../bench/compare.mjs'
import { rng } from '../bench/data.mjs'
import { compactResults, resultsJson } from '../bench/results-file.mjs'
import { keepSamples, summarize } from '../bench/stats.mjs'

const FIXTURES = fileURLToPath(new URL('fixtures/bench-results', import.meta.url))

// A case as run.mjs merges it: summaries per metric, the kept samples, each repeat's samples.
const random = rng(3)
const wall = Array.from({ length: 2000 }, () => 0.004 + 0.001 * random())
const run = () => ({
  label: 'test',
  config: 'full',
  results: [
    {
      lib: 'resqlite',
      lane: 'select',
      cases: [
        {
          id: 'select.10',
          n: wall.length,
          wall: summarize(wall),
          js: summarize(wall),
          repeatMedians: [0.0045, 0.0046],
          repeatSamples: { wall: [keepSamples(wall, 100), keepSamples(wall, 100)] },
          samples: { wall: keepSamples(wall), js: keepSamples(wall) },
        },
      ],
    },
    { lib: 'libsql', lane: 'select', error: { message: 'failed' } },
  ],
})

test('by default: one line, no samples, every summary kept', () => {
  const text = resultsJson(run())
  assert.equal(text.indexOf('\n'), text.length - 1, 'one line')
  assert.doesNotMatch(text, /"samples"|"repeatSamples"/)
  const c = JSON.parse(text).results[0].cases[0]
  const full = run().results[0].cases[0]
  assert.deepEqual(Object.keys(c.wall), ['median', 'p90', 'min', 'max', 'mad', 'ci95'])
  assert.equal(c.n, 2000)
  assert.deepEqual(c.repeatMedians, full.repeatMedians)
  // Fractions to 6 significant digits: well within what any report prints.
  for (const k of Object.keys(c.wall)) assert.ok(Math.abs(c.wall[k] - full.wall[k]) <= 1e-5 * full.wall[k], k)
  // A result without cases (a failed lane) passes through.
  assert.deepEqual(JSON.parse(text).results[1], run().results[1])
})

test('with samples: true, the samples stay (npm run ab pools them over its rounds)', () => {
  const c = JSON.parse(resultsJson(run(), { samples: true })).results[0].cases[0]
  assert.equal(c.samples.wall.length, 300)
  assert.equal(c.repeatSamples.wall.length, 2)
  // compactResults itself never changes what it was given.
  const r = run()
  compactResults(r)
  assert.ok(r.results[0].cases[0].samples)
})

test('compare.mjs reads compact files: a fixture compared with itself, no wins, no regressions', () => {
  for (const f of readdirSync(FIXTURES).filter((x) => x.endsWith('.json'))) {
    const text = readFileSync(join(FIXTURES, f), 'utf8')
    assert.equal(text, resultsJson(JSON.parse(text)), `${f} is in the compact form`)
    const res = JSON.parse(text)
    const c = compare(res, res)
    assert.ok(c.rows.length >= 14, `${f}: ${c.rows.length} rows`)
    for (const [lib, t] of Object.entries(c.byLib)) assert.deepEqual([lib, t.wins, t.regressions], [lib, 0, 0])
  }
})
