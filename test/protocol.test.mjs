// The JS ↔ native wire protocol: its numbers are defined once, in
// crates/engine/src/protocol.rs, and copied as TypeScript const enums (src/native.ts,
// src/decode.ts; src/params.ts packs with ParamSet and ParamTag) so tsc can inline them. These tests check the copies against the engine's,
// name by name in both directions, and that the engine refuses a job kind it does not know.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import path from 'node:path'
import { test } from 'node:test'
import { Database } from '../dist/esm/index.mjs'
import { tempDir } from './helpers.mjs'

const require = createRequire(import.meta.url)
// Internal modules: their const enums are emitted as objects too (tsconfig preserveConstEnums).
const {
  binding,
  Done,
  Inline,
  InlineResult,
  JobKind,
  Mailbox,
  ParamSet,
  ParamTag,
  ReadOn,
} = require('../dist/cjs/native.js')
const { Tag } = require('../dist/cjs/decode.js')

/** The TypeScript enums, by the group name the engine uses. */
const typescript = { Done, Inline, InlineResult, JobKind, Mailbox, ParamSet, ParamTag, ReadOn, Tag }

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

test('an unknown job kind is refused, and nothing runs', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'test.db')
  const setup = await Database.open(file)
  await setup.execute('CREATE TABLE t(x)')
  await setup.close()

  // The engine the way src/engine.ts drives it: a mailbox, a completion handler, the job calls.
  const mailbox = new ArrayBuffer(Mailbox.Bytes)
  const words = new Int32Array(mailbox, 0, Mailbox.Words)
  const slots = new Float64Array(mailbox, Mailbox.Words * 4)
  const completed = new Map() // id → kind
  const waiting = new Map() // id → resolve
  const onComplete = (batch) => {
    if (batch === undefined) return
    for (let s = 0; s < 4 * words[Mailbox.Count]; s += 4) {
      completed.set(slots[s], slots[s + 1])
      waiting.get(slots[s])?.()
    }
  }
  const completion = (id) =>
    completed.has(id) ? Promise.resolve() : new Promise((resolve) => waiting.set(id, resolve))
  const openId = 1
  const native = new binding.NativeDatabase(
    {
      path: file,
      readers: 1,
      busyTimeout: 5000,
      readonly: false,
      safeIntegers: false,
      mailbox,
      openId,
      encryption: undefined,
      attach: [],
      idleTimeout: 10_000,
    },
    onComplete,
  )
  const calls = native.jobCalls()
  calls.ref()
  const none = new Uint8Array(0)
  const unknown = (kind) => ({ name: 'TypeError', message: `kind: unknown job kind ${kind}` })
  assert.throws(() => calls.write(2, 42, 'INSERT INTO t VALUES (1)', none, 0, false), unknown(42))
  assert.throws(() => calls.write(3, 77, 'INSERT INTO t VALUES (1)', none, 0, true), unknown(77))
  assert.throws(() => calls.read(4, 100, 'SELECT * FROM t', none, 0, false), unknown(100))
  // A known kind still runs, after the refused ones.
  assert.equal(calls.write(5, JobKind.Execute, 'INSERT INTO t VALUES (2)', none, 0, false), true)
  native.close(6)
  await completion(6)
  calls.unref()
  native.release()

  assert.deepEqual([...completed.keys()].sort(), [openId, 5, 6], 'no completion for a refused job')
  assert.equal(completed.get(5), Done.Changes)
  const check = await Database.open(file)
  try {
    assert.deepEqual(await check.select('SELECT x FROM t'), [{ x: 2 }], 'the refused write did not run')
  } finally {
    await check.close()
  }
})
