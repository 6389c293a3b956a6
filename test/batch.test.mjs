// executeBatch: one transaction, all-or-nothing, { changes } = number of rows changed.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb } from './helpers.mjs'

async function usersDb(t) {
  const db = await openDb(t)
  await db.execute('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT UNIQUE, score REAL)')
  return db
}

test('executeBatch inserts every set and returns { changes } equal to the row count', async (t) => {
  const db = await usersDb(t)
  const r = await db.executeBatch('INSERT INTO users (name, score) VALUES (:name, :score)', [
    { name: 'ada', score: 9.5 },
    { name: 'bob', score: 1 },
    { name: 'cy', score: 2 },
  ])
  assert.equal(r.changes, 3)
  const r2 = await db.executeBatch('INSERT INTO users (name, score) VALUES (?, ?)', [
    ['dee', 4],
    ['eve', null],
  ])
  assert.equal(r2.changes, 2)
  assert.deepStrictEqual(await db.select('SELECT id, name, score FROM users ORDER BY id'), [
    { id: 1, name: 'ada', score: 9.5 },
    { id: 2, name: 'bob', score: 1 },
    { id: 3, name: 'cy', score: 2 },
    { id: 4, name: 'dee', score: 4 },
    { id: 5, name: 'eve', score: null },
  ])
  // UPDATE sets: changes is the total of rows changed
  const up = await db.executeBatch('UPDATE users SET score = score + 1 WHERE score >= ?', [[2], [100]])
  assert.equal(up.changes, 3)
})

test('executeBatch with many sets', async (t) => {
  const db = await usersDb(t)
  const sets = Array.from({ length: 5000 }, (_, i) => [`user${i}`, i / 4])
  const r = await db.executeBatch('INSERT INTO users (name, score) VALUES (?, ?)', sets)
  assert.equal(r.changes, 5000)
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n, sum(score) AS s FROM users'), [
    { n: 5000, s: sets.reduce((a, [, s]) => a + s, 0) },
  ])
})

test('a failing set rolls back the whole batch', async (t) => {
  const db = await usersDb(t)
  await db.execute("INSERT INTO users (name) VALUES ('existing')")
  const sql = 'INSERT INTO users (name, score) VALUES (?, ?)'
  const err = await expectReject(
    () =>
      db.executeBatch(sql, [
        ['a', 1],
        ['b', 2],
        ['a', 3],
        ['d', 4],
      ]),
    ResqliteError,
    'SQLITE_CONSTRAINT_UNIQUE',
    /users\.name/,
  )
  assert.equal(err.sql, sql)
  assert.deepStrictEqual(await db.select('SELECT name FROM users ORDER BY id'), [{ name: 'existing' }])

  // conflicting with a pre-existing row in the last set
  await expectReject(
    () =>
      db.executeBatch(sql, [
        ['x', 1],
        ['existing', 2],
      ]),
    ResqliteError,
    'SQLITE_CONSTRAINT_UNIQUE',
    /users\.name/,
  )
  assert.deepStrictEqual(await db.select('SELECT name FROM users ORDER BY id'), [{ name: 'existing' }])

  // the writer is usable afterwards and not stuck inside a transaction
  const ok = await db.executeBatch(sql, [
    ['a', 1],
    ['b', 2],
  ])
  assert.equal(ok.changes, 2)
  await db.execute("BEGIN; INSERT INTO users (name) VALUES ('in-tx'); COMMIT;")
  assert.deepStrictEqual(await db.select('SELECT name FROM users ORDER BY id'), [
    { name: 'existing' },
    { name: 'a' },
    { name: 'b' },
    { name: 'in-tx' },
  ])
})

test('a bad parameter in a later set rejects and nothing is written', async (t) => {
  const db = await usersDb(t)
  const sql = 'INSERT INTO users (name, score) VALUES (?, ?)'
  await expectReject(
    () =>
      db.executeBatch(sql, [
        ['a', 1],
        ['b', 2],
        ['c', true],
      ]),
    TypeError,
    /^ERR_INVALID_ARG_(TYPE|VALUE)$/,
    /boolean/,
  )
  await expectReject(() => db.executeBatch(sql, [['a', 1], ['b']]), ResqliteError, 'ERR_PARAMETER_COUNT', /2/)
  await expectReject(
    () =>
      db.executeBatch('INSERT INTO users (name, score) VALUES (:name, :score)', [
        { name: 'a', score: 1 },
        { name: 'b' },
      ]),
    ResqliteError,
    'ERR_PARAMETER_NAME',
    /score/,
  )
  await expectReject(
    () => db.executeBatch(sql, [['a', 1], 'not-a-set']),
    TypeError,
    /^ERR_INVALID_ARG_(TYPE|VALUE)$/,
    /array|object/i,
  )
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM users'), [{ n: 0 }])
})

test('executeBatch with paramSets that is not an array is a TypeError', async (t) => {
  const db = await usersDb(t)
  const sql = 'INSERT INTO users (name, score) VALUES (?, ?)'
  for (const bad of [undefined, null, 'abc', 5, { 0: ['a', 1], length: 1 }, { name: 'a', score: 1 }]) {
    await expectReject(() => db.executeBatch(sql, bad), TypeError, /^ERR_INVALID_ARG_(TYPE|VALUE)$/, /paramSets|param/i)
  }
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM users'), [{ n: 0 }])
})

test('executeBatch with an empty list changes nothing', async (t) => {
  const db = await usersDb(t)
  const r = await db.executeBatch('INSERT INTO users (name, score) VALUES (?, ?)', [])
  assert.equal(r.changes, 0)
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM users'), [{ n: 0 }])
})
