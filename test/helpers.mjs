// Helpers shared by the test files (not a test file itself: npm test runs test/*.test.mjs).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Database } from '../dist/esm/index.mjs'

export function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}
export async function openDb(t, options) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-'))
  const db = await Database.open(path.join(dir, 'test.db'), options)
  t.after(async () => {
    await db.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })
  return db
}
export async function expectReject(fn, Class, code, ...patterns) {
  let promise
  try {
    promise = fn()
  } catch (e) {
    assert.fail(`expected a rejected promise, but the call threw synchronously: ${e?.stack ?? e}`)
  }
  assert.ok(promise && typeof promise.then === 'function', 'expected the call to return a promise')
  let err
  let resolved = false
  try {
    await promise
    resolved = true
  } catch (e) {
    err = e
  }
  if (resolved) assert.fail(`expected a rejection with code ${code}, but the promise resolved`)
  assert.ok(err instanceof Class, `expected ${Class.name}, got ${err?.constructor?.name}: ${err?.message}`)
  if (code instanceof RegExp) assert.match(String(err.code), code)
  else assert.equal(err.code, code, `unexpected code; message: ${err.message}`)
  for (const re of patterns) assert.match(String(err.message), re)
  return err
}

// A read whose duration scales with ?: counts to ? with a recursive CTE.
export const SLOW_SQL =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT count(*) AS n FROM c'

// A read that never ends on its own: only an abort (or close) ends it. A test that it ended
// needs no timing, so it holds whatever the machine's load: a read not stopped would never
// settle, and the test would fail at its timeout.
export const ENDLESS_SQL = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c'

export async function timeQuery(db, n) {
  const t0 = performance.now()
  const rows = await db.select(SLOW_SQL, [n])
  const ms = performance.now() - t0
  assert.deepStrictEqual(rows, [{ n }])
  return ms
}
/** Returns the bound that makes SLOW_SQL take about targetMs. */
export async function calibrate(db, targetMs) {
  let n = 50_000
  let ms = await timeQuery(db, n)
  while (ms < 50) {
    n *= 4
    ms = await timeQuery(db, n)
  }
  return Math.max(1000, Math.round((n * targetMs) / ms))
}

/** A small seeded PRNG (mulberry32): reproducible "random" data and interleavings. */
export function prng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** What a call settles with, comparable across the two paths. */
export async function outcome(promise) {
  try {
    return { value: await promise }
  } catch (error) {
    return { error: { class: error.constructor.name, code: error.code, message: error.message } }
  }
}

// A random value of every kind SQLite stores, the awkward ones often.
export function randomValue(rand, safeIntegers) {
  const r = rand()
  if (r < 0.1) return null
  if (r < 0.25) return Math.floor((rand() - 0.5) * 2 ** 40)
  if (r < 0.3) return safeIntegers ? 2n ** 62n - BigInt(Math.floor(rand() * 1000)) : 2 ** 53 - 1
  if (r < 0.45) return [0, -0, 1.5, -1e300, 5e-324, (rand() - 0.5) * 1e6][Math.floor(rand() * 6)]
  if (r < 0.75) {
    const pieces = ['a', 'é', '日本', '🎉', '\0', ' ', '"', '\\', 'x'.repeat(40)]
    let s = ''
    for (let i = Math.floor(rand() * 8); i > 0; i--) s += pieces[Math.floor(rand() * pieces.length)]
    return s
  }
  return Buffer.from(Array.from({ length: Math.floor(rand() * 20) }, () => Math.floor(rand() * 256)))
}

/** `diagnostics().inline` when nothing ran on the JS thread. */
export const NO_INLINE_RUNS = Object.freeze({
  groups: 0,
  groupReads: 0,
  runs: 0,
  moved: 0,
  skipped: 0,
  control: 0,
  writes: 0,
  commits: 0,
  live: 0,
  sliced: 0,
})
