// scripts/check-layers.mjs (in `npm run lint`) holds the engine's layers as lib.rs states them.
// It passes on the engine as it is, and fails on a copy of it with a violation planted: a use
// against the order (as a `use` and as a path in code), a cycle between two files, a module in no
// layer; what is in a comment or a string is not a use.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { appendFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { checkLayers } from '../scripts/check-layers.mjs'
import { tempDir } from './helpers.mjs'

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const SRC = path.join(ROOT, 'crates/engine/src')

/** A copy of the engine's sources with `plant(dir)` applied, and what the check finds there. */
function checkPlanted(t, plant) {
  const dir = path.join(tempDir(t), 'src')
  cpSync(SRC, dir, { recursive: true })
  plant(dir)
  return checkLayers(dir).problems
}

/** `problems` has one matching `pattern` (a planted use against the order is also a cycle). */
function assertFound(problems, pattern) {
  assert.ok(
    problems.some((p) => pattern.test(p)),
    `no problem matches ${pattern}:\n${problems.join('\n')}`,
  )
}

/** Inserts `line` after the last `use` line at the top of `file`. */
function addUse(dir, file, line) {
  const full = path.join(dir, file)
  const text = readFileSync(full, 'utf8')
  const at = text.lastIndexOf('\nuse ')
  const end = text.indexOf('\n', at + 1)
  writeFileSync(full, `${text.slice(0, end + 1)}${line}\n${text.slice(end + 1)}`)
}

test('the engine holds the layers lib.rs states, with no cycle between files', () => {
  const { problems, layers } = checkLayers(SRC)
  assert.deepEqual(problems, [])
  assert.ok(layers.length >= 5, `lib.rs states ${layers.length} layers`)
  assert.deepEqual(layers[0].slice(0, 2), ['error', 'protocol'])
  assert.deepEqual(layers.at(-1), ['napi'])
  const out = execFileSync(process.execPath, [path.join(ROOT, 'scripts/check-layers.mjs')], { encoding: 'utf8' })
  assert.match(out, /holds its \d+ layers/)
})

test('a use of a layer above fails, as a use and as a path in code', (t) => {
  const byUse = checkPlanted(t, (dir) => addUse(dir, 'sqlite/step.rs', 'use crate::threads::Shared;'))
  assertFound(byUse, /^sqlite\/step\.rs:\d+: `sqlite::step` uses `threads::shared`, a layer above it$/)

  const byPath = checkPlanted(t, (dir) =>
    appendFileSync(
      path.join(dir, 'encode/pages.rs'),
      '\nfn planted() -> usize {\n    crate::napi::database::planted()\n}\n',
    ),
  )
  assertFound(byPath, /`encode::pages` uses `napi::database`, a layer above it/)

  const grouped = checkPlanted(t, (dir) =>
    addUse(dir, 'functions/values.rs', 'use crate::{error::DbError, live::hooks::Hooks};'),
  )
  assertFound(grouped, /`functions::values` uses `live::hooks`/)
})

test('a cycle between two files fails, within one layer too', (t) => {
  const problems = checkPlanted(t, (dir) => addUse(dir, 'sqlite/connection.rs', 'use super::step::cell;'))
  assert.equal(problems.length, 1, problems.join('\n'))
  assert.match(problems[0], /^files in a cycle: sqlite::connection, sqlite::step \(/)
})

test('a module lib.rs puts in no layer fails, and so does a layer naming no module', (t) => {
  const unplaced = checkPlanted(t, (dir) => {
    appendFileSync(path.join(dir, 'lib.rs'), '\nmod planted;\n')
    writeFileSync(path.join(dir, 'planted.rs'), '')
  })
  assert.deepEqual(unplaced, ['lib.rs: module `planted` is in no layer'])

  const ghost = checkPlanted(t, (dir) => {
    const lib = path.join(dir, 'lib.rs')
    writeFileSync(lib, readFileSync(lib, 'utf8').replace('//! - `napi`:', '//! - `napi`, `ghost`:'))
  })
  assert.deepEqual(ghost, ['lib.rs: layer names `ghost`, no such module'])
})

test('a path in a comment or a string is not a use', (t) => {
  const problems = checkPlanted(t, (dir) =>
    appendFileSync(
      path.join(dir, 'sqlite/step.rs'),
      '\n// use crate::napi::database;\n/* crate::threads::Shared */\nconst _PLANTED: &str = "crate::napi::database";\n',
    ),
  )
  assert.deepEqual(problems, [])
})
