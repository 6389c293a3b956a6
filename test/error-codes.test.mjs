// The library's error codes the engine raises are one table (crates/engine/src/error.rs
// `code`), each a `ResqliteErrorCode` of src/errors.ts, and no other engine file spells one. Not
// every TypeScript code is the engine's: the TypeScript side raises its own (a closed database,
// bad arguments, a function's error) as well as passing the engine's on.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const { binding } = require('../dist/cjs/native.js')
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const ENGINE = path.join(ROOT, 'crates/engine/src')

/** The members of src/errors.ts's `ResqliteErrorCode` union. */
function typescriptCodes() {
  const source = readFileSync(path.join(ROOT, 'src/errors.ts'), 'utf8')
  const start = source.indexOf('export type ResqliteErrorCode =')
  assert.ok(start >= 0, 'src/errors.ts declares ResqliteErrorCode')
  const body = source.slice(start, source.indexOf('\n\n', start))
  return new Set([...body.matchAll(/^\s*\| '(ERR_[A-Z0-9_]+)'/gm)].map((m) => m[1]))
}

test('every code the engine raises is a ResqliteErrorCode of src/errors.ts', () => {
  const engine = binding.errorCodes()
  assert.ok(engine.length >= 20, `the engine lists ${engine.length} codes`)
  assert.equal(new Set(engine).size, engine.length, 'no code listed twice')
  const ts = typescriptCodes()
  assert.ok(ts.size >= engine.length, `src/errors.ts lists ${ts.size} codes`)
  assert.deepEqual(
    engine.filter((c) => !ts.has(c)),
    [],
  )
})

test('no engine file but error.rs spells a library code: each goes through the table', () => {
  const spelled = []
  for (const file of readdirSync(ENGINE, { recursive: true })) {
    if (!file.endsWith('.rs') || file === 'error.rs') continue
    const text = readFileSync(path.join(ENGINE, file), 'utf8')
    for (const m of text.matchAll(/"ERR_[A-Z0-9_]+"/g)) spelled.push(`${file}: ${m[0]}`)
  }
  assert.deepEqual(spelled, [])
  // The table itself names each code once, as its constant's name.
  const table = readFileSync(path.join(ENGINE, 'error.rs'), 'utf8')
  assert.doesNotMatch(table, /"ERR_[A-Z0-9_]+"/)
  const listed = [...table.matchAll(/^ {8}(ERR_[A-Z0-9_]+),$/gm)].map((m) => m[1])
  assert.deepEqual(listed.sort(), [...binding.errorCodes()].sort())
})
