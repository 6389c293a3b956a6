// Edges of the public API (issue 30): re-entrant parameter packing, read-only properties,
// diagnostics after close, live-query subscribe checks, one AbortSignal shared by many calls,
// and options that are refused rather than ignored.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb } from './helpers.mjs'

const T = { timeout: 20_000 }

test('a parameter getter that calls the library binds each call its own values', T, async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (a TEXT, b TEXT)')
  let inner
  const params = {
    get a() {
      // Packed while the outer call is half packed: the nested call must not overwrite it.
      inner = db.select('SELECT :x AS x, :y AS y', { x: 'INJ-1', y: 'INJ-2' })
      return 'first'
    },
    b: 'second',
  }
  await db.execute('INSERT INTO t (a, b) VALUES (:a, :b)', params)
  assert.deepStrictEqual(await inner, [{ x: 'INJ-1', y: 'INJ-2' }])
  assert.deepStrictEqual(await db.select('SELECT a, b FROM t'), [{ a: 'first', b: 'second' }])

  // Positional, and executeBatch, with a nested write in an array element's getter.
  const row = ['p1', 'p2']
  Object.defineProperty(row, 0, {
    get() {
      inner = db.execute('INSERT INTO t (a, b) VALUES (?, ?)', ['nested-a', 'nested-b'])
      return 'p1'
    },
  })
  await db.executeBatch('INSERT INTO t (a, b) VALUES (?, ?)', [row, ['q1', 'q2']])
  await inner
  assert.deepStrictEqual(await db.select("SELECT a, b FROM t WHERE a <> 'first' ORDER BY a"), [
    { a: 'nested-a', b: 'nested-b' },
    { a: 'p1', b: 'p2' },
    { a: 'q1', b: 'q2' },
  ])

  // A nested call whose packing fails (undefined is refused) leaves the outer packing intact.
  let nestedError
  const outer = {
    get a() {
      db.select('SELECT :v AS v', { v: 'x', w: undefined }).catch((e) => (nestedError = e))
      return 'after-throw'
    },
    b: 'ok',
  }
  await db.execute('INSERT INTO t (a, b) VALUES (:a, :b)', outer)
  assert.deepStrictEqual(await db.select("SELECT b FROM t WHERE a = 'after-throw'"), [{ b: 'ok' }])
  assert.equal(nestedError?.code, 'ERR_INVALID_ARG_TYPE')
})

test('db.path, db.readers, db.readonly and live.sql cannot be assigned', T, async (t) => {
  const db = await openDb(t, { readers: 2 })
  const before = { path: db.path, readers: db.readers, readonly: db.readonly }
  // This module is strict: assignment throws.
  for (const key of ['path', 'readers', 'readonly']) {
    assert.throws(
      () => {
        db[key] = 'changed'
      },
      TypeError,
      key,
    )
  }
  assert.deepStrictEqual({ path: db.path, readers: db.readers, readonly: db.readonly }, before)
  assert.equal(before.readers, 2)
  const live = db.stream('SELECT 1 AS one')
  assert.throws(() => {
    live.sql = 'SELECT 2'
  }, TypeError)
  assert.equal(live.sql, 'SELECT 1 AS one')
  // Sloppy-mode code (a Function body is sloppy): the assignment does nothing.
  new Function('db', 'db.readonly = true; db.path = "x"; db.readers = 9')(db)
  assert.deepStrictEqual({ path: db.path, readers: db.readers, readonly: db.readonly }, before)
})

test('a read-only database whose readonly is assigned false still refuses writes', T, async (t) => {
  const rw = await openDb(t)
  await rw.execute('CREATE TABLE t (x)')
  const ro = await Database.open(rw.path, { readonly: true })
  t.after(() => ro.close())
  new Function('ro', 'ro.readonly = false')(ro)
  assert.equal(ro.readonly, true)
  await expectReject(() => ro.execute('INSERT INTO t VALUES (1)'), ResqliteError, 'ERR_DATABASE_READONLY')
  await expectReject(() => ro.transaction(async () => {}), ResqliteError, 'ERR_DATABASE_READONLY')
})

test('diagnostics() rejects with ERR_DATABASE_CLOSED once close() was called', T, async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (x)')
  const open = await db.diagnostics()
  assert.equal(typeof open.walBytes, 'number')
  const closing = db.close()
  // Called while closing, and after: both reject, neither reports zeroed counters.
  await expectReject(() => db.diagnostics(), ResqliteError, 'ERR_DATABASE_CLOSED', /closed/)
  await closing
  await expectReject(() => db.diagnostics(), ResqliteError, 'ERR_DATABASE_CLOSED', /closed/)
})
