// A value a user keeps keeps only itself alive: not the result it came from (each result here
// is ~10 MB; one kept value is ~2 KB). Measured in a child process run with --expose-gc, for
// every path a result takes to JS (retention-child.mjs).

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { test } from 'node:test'

const LIMIT = 1024 * 1024 // 20 kept values of ~2 KB, plus the heap's noise

test('values kept from 20 large results keep under 1 MB of heap, whichever path the results took', () => {
  const child = new URL('./retention-child.mjs', import.meta.url).pathname
  const out = JSON.parse(execFileSync(process.execPath, ['--expose-gc', child], { encoding: 'utf8' }))
  assert.deepEqual(Object.keys(out), ['select', 'parts', 'short', 'inline', 'transaction', 'live', 'sliced'])
  for (const [path, bytes] of Object.entries(out)) {
    assert.ok(bytes < LIMIT, `${path}: ${(bytes / 1024 / 1024).toFixed(1)} MB kept by 20 values of ~2 KB`)
  }
})
