// The bad-input suite's harness (issue 30): not a test file itself (npm test runs
// test/*.test.mjs; the cases are in test/bad-input-*.test.mjs).
//
// A case is { name, run, and one expectation }:
//   run(ctx)                       the call; ctx = { db, dir, file(name), fresh(options), closed() }
//   rejects: [Class, code, re…]    run returns a promise that rejects with an instance of Class
//                                  whose `code` is code (a string or RegExp) and whose message
//                                  matches each re; never a synchronous throw
//   throws: [Class, code, re…]     run throws synchronously (live queries' subscribe only)
//   rejectsWith: value             run's promise rejects with exactly this value (a user's own
//                                  error, thrown by a getter or a body, passed through)
//   resolves: value                run's promise resolves with a value deep-equal to this
//   check(result, ctx)             run's promise resolves; check asserts on the result
// Each case runs as its own test with a timeout (a hang fails it). After each case a probe
// writes a row and reads the count back on the shared database, so a case that broke the
// database fails there; the last test of each file runs PRAGMA integrity_check.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { Database } from '../dist/esm/index.mjs'

/** Per-case limit: a case that hangs fails here instead of stalling the file. A hang guard, not a
 * speed claim: the slowest case (item 22, ten opens with a wrong key) took 15 s at load 15. */
const CASE_TIMEOUT = 60_000

/** Reads every row of an iteration (a RowIterator is not an array). */
export async function drain(iterator) {
  const rows = []
  for await (const row of iterator) rows.push(row)
  return rows
}

/** Settles `promise` or fails after `ms` (for a promise a case keeps to look at later). */
export function within(promise, ms = 5_000, what = 'the call') {
  let timer
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms)
    }),
  ])
}

function checkError(error, [Class, code, ...patterns], name) {
  assert.ok(
    error instanceof Class,
    `${name}: expected ${Class.name}, got ${error?.constructor?.name}: ${error?.message ?? error}`,
  )
  if (code instanceof RegExp) assert.match(String(error.code), code, `${name}: code; message: ${error.message}`)
  else assert.equal(error.code, code, `${name}: code; message: ${error.message}`)
  for (const re of patterns) assert.match(String(error.message), re, `${name}: message`)
}

/** Runs `cases` as tests on one shared database (opened with `options`). */
export function runCases(cases, { label, options = {} } = {}) {
  let dir
  let db
  let probes = 0
  const extra = []
  const ctx = {
    get db() {
      return db
    },
    get dir() {
      return dir
    },
    /** A path in the file's temporary directory. */
    file: (name) => path.join(dir, name),
    /** Another database, closed at the end of the file. */
    async fresh(options2 = {}, name = `fresh-${extra.length}.db`) {
      const other = await Database.open(path.join(dir, name), options2)
      extra.push(other)
      return other
    },
    /** A database that was opened, given a table t, and closed. */
    async closed() {
      const other = await ctx.fresh()
      await other.execute('CREATE TABLE t (a, b)')
      await other.close()
      return other
    },
  }

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-bad-input-'))
    db = await Database.open(path.join(dir, 'shared.db'), { busyTimeout: 500, ...options })
    await db.execute(`
      CREATE TABLE probe (id INTEGER PRIMARY KEY, note TEXT);
      CREATE TABLE t (a, b);
      CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);
      INSERT INTO items (name) VALUES ('one'), ('two'), ('three');
    `)
  })

  after(async () => {
    for (const other of extra) await other.close().catch(() => {})
    await db?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  const names = new Set()
  for (const c of cases) {
    assert.ok(!names.has(c.name), `duplicate case name: ${c.name}`)
    names.add(c.name)
    const kinds = ['rejects', 'throws', 'rejectsWith', 'resolves', 'check'].filter((k) => k in c)
    assert.equal(kinds.length, 1, `${c.name}: give exactly one expectation`)
    test(`${label}: ${c.name}`, { timeout: CASE_TIMEOUT }, async () => {
      if (c.throws) {
        let threw
        try {
          c.run(ctx)
        } catch (error) {
          threw = { error }
        }
        assert.ok(threw, `${c.name}: expected a synchronous throw`)
        checkError(threw.error, c.throws, c.name)
      } else {
        let promise
        try {
          promise = c.run(ctx)
        } catch (error) {
          assert.fail(`${c.name}: threw synchronously instead of returning a promise: ${error?.stack ?? error}`)
        }
        assert.equal(typeof promise?.then, 'function', `${c.name}: expected a promise`)
        const outcome = await promise.then(
          (value) => ({ ok: true, value }),
          (error) => ({ ok: false, error }),
        )
        if (c.rejects || 'rejectsWith' in c) {
          assert.ok(!outcome.ok, `${c.name}: expected a rejection, resolved with ${safe(outcome.value)}`)
          if (c.rejects) checkError(outcome.error, c.rejects, c.name)
          else assert.equal(outcome.error, c.rejectsWith, `${c.name}: rejected with another error: ${outcome.error}`)
        } else {
          assert.ok(outcome.ok, `${c.name}: expected a result, rejected with ${outcome.error?.stack ?? outcome.error}`)
          if ('resolves' in c) assert.deepStrictEqual(outcome.value, c.resolves, c.name)
          else await c.check(outcome.value, ctx)
        }
      }
      // The probe: the shared database still reads and writes.
      probes++
      await within(db.execute('INSERT INTO probe (note) VALUES (?)', [c.name]), 5_000, 'the probe write')
      const row = await within(db.selectOne('SELECT count(*) AS n FROM probe'), 5_000, 'the probe read')
      assert.equal(row.n, probes, `${c.name}: the probe read a wrong count`)
    })
  }

  test(`${label}: the shared database passes PRAGMA integrity_check after every case`, async () => {
    assert.deepStrictEqual(await db.select('PRAGMA integrity_check'), [{ integrity_check: 'ok' }])
    assert.equal(probes, cases.length)
  })
}

function safe(value) {
  try {
    return JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))?.slice(0, 200)
  } catch {
    return String(value)
  }
}
