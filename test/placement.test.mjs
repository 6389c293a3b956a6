// src/js-thread/placement.ts, the JS side's rules for where a call runs: the numbers it shares with the
// engine agree, and every experiment it cites for a number exists (ARCHITECTURE.md points
// readers there for the why). The rules' effects are tested where they show: inline-*.test.mjs,
// write-groups.test.mjs, functions tests.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const placement = require('../dist/cjs/js-thread/placement.js')

test('a write group holds no more writes than a COMMIT on the JS thread may follow (js_thread/runs.rs MAX_COMMIT_WRITES)', () => {
  const inlineRs = readFileSync(path.join(ROOT, 'crates/engine/src/js_thread/runs.rs'), 'utf8')
  const native = /const MAX_COMMIT_WRITES: u32 = (\d+);/.exec(inlineRs)
  assert.ok(native, 'js_thread/runs.rs defines MAX_COMMIT_WRITES')
  assert.equal(placement.MAX_GROUP_WRITES, Number(native[1]))
})

test('every experiment placement.ts cites exists', () => {
  const source = readFileSync(path.join(ROOT, 'src/js-thread/placement.ts'), 'utf8')
  const entries = new Set(readdirSync(path.join(ROOT, 'experiments')).map((f) => f.slice(0, 3)))
  // Cited as experiments/NNN, or as a list of numbers in parentheses: (032), (040, 042), (`readOn`; 054).
  const cited = new Set()
  for (const m of source.matchAll(/experiments\/(\d{3})|\(([^()]*\b\d{3}\b[^()]*)\)/g)) {
    for (const n of (m[1] ?? m[2]).match(/\b\d{3}\b/g) ?? []) cited.add(n)
  }
  assert.ok(cited.size >= 6, `found the citations (${[...cited]})`)
  for (const n of cited) assert.ok(entries.has(n), `experiments/${n}-*.md exists`)
})

test('reads that are a thread’s own job are never offered to the JS thread', () => {
  const { JobKind } = require('../dist/cjs/native.js')
  for (const kind of [JobKind.Serialize, JobKind.Columns, JobKind.Describe, JobKind.DataVersion])
    assert.equal(placement.readKindMayRunInline(kind), false, JobKind[kind])
  for (const kind of [JobKind.Select, JobKind.SelectOne, JobKind.SelectBytes])
    assert.equal(placement.readKindMayRunInline(kind), true, JobKind[kind])
})
