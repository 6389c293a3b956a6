// The JS ↔ native wire protocol: its numbers are defined once, in
// crates/engine/src/napi/protocol.rs, and copied as TypeScript const enums (src/native.ts,
// src/decode.ts) so tsc can inline them. These tests check the copies against the engine's,
// name by name in both directions.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

const require = createRequire(import.meta.url)
// Internal modules: their const enums are emitted as objects too (tsconfig preserveConstEnums).
const { binding, Done, JobKind, Mailbox } = require('../dist/cjs/native.js')
const { Tag } = require('../dist/cjs/decode.js')

/** The TypeScript enums, by the group name the engine uses. */
const typescript = { Done, JobKind, Mailbox, Tag }

/** `WritesInFlight` → `WRITES_IN_FLIGHT`: how a TypeScript name is spelled in protocol.rs. */
const upperSnake = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()

/** A TypeScript enum's members as the engine names them: `Done.RowsPart` → `DONE_ROWS_PART`. */
function asEngineNames(group, tsEnum) {
  const out = {}
  // A numeric enum object also maps each value back to its name: skip those entries.
  for (const [name, value] of Object.entries(tsEnum)) {
    if (typeof value === 'number') out[`${upperSnake(group)}_${upperSnake(name)}`] = value
  }
  return out
}

test('the engine and the TypeScript define the same protocol groups', () => {
  assert.deepEqual(Object.keys(binding.protocol()).sort(), Object.keys(typescript).sort())
})

for (const group of Object.keys(typescript)) {
  test(`protocol: every ${group} name has the same value on both sides`, () => {
    const engine = binding.protocol()[group]
    assert.ok(engine, `the engine defines no ${group}`)
    const ts = asEngineNames(group, typescript[group])
    assert.ok(Object.keys(ts).length > 0, `the TypeScript ${group} has no members`)
    // deepEqual fails on a name missing on either side as well as on a differing value.
    assert.deepEqual(ts, engine)
  })
}
