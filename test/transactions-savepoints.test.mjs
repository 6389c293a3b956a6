// Nested transactions (docs/transactions.md): savepoints at several depths, errors crossing
// levels, sibling savepoints.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { assertError, INSERT, openTxDb, rejectionOf, sleep, T, tdb, turns, values, withTimeout } from './tx-helpers.mjs'

/**
 * Runs an outermost transaction (level 0) with `depth` nested tx.transaction levels. Level k
 * inserts `in k`, runs level k+1 (catching its error), inserts `after k`, and throws if
 * k === failAt. Returns { result | error, caught: [{ level, error }] }.
 */
async function savepointChain(db, depth, failAt) {
  const thrown = new Error(`level ${failAt} fails`)
  const caught = []
  async function level(tx, k) {
    await tx.execute(INSERT, [`in ${k}`])
    let ret = `L${k}`
    if (k < depth) {
      try {
        ret += `>${await tx.transaction((inner) => level(inner, k + 1))}`
      } catch (error) {
        caught.push({ level: k, error })
        ret += '>caught'
      }
      await tx.execute(INSERT, [`after ${k}`])
    }
    if (k === failAt) throw thrown
    return ret
  }
  try {
    return { result: await db.transaction((tx) => level(tx, 0)), caught, thrown }
  } catch (error) {
    return { error, caught, thrown }
  }
}

test(
  'savepoints at depth 1-5: inner rollback keeps outer work, outer rollback discards released savepoints',
  T,
  async (t) => {
    const db = await tdb(t)
    for (let depth = 1; depth <= 5; depth++) {
      for (let failAt = -1; failAt <= depth; failAt++) {
        const label = `depth ${depth}, failing level ${failAt}`
        await db.execute('DELETE FROM t')
        const { result, error, caught, thrown } = await savepointChain(db, depth, failAt)
        const got = await values(db)
        if (failAt === 0) {
          // the outermost body throws: everything is discarded, including savepoints already released
          assert.equal(error, thrown, `${label}: the transaction must reject with the body's own error object`)
          assert.deepStrictEqual(caught, [], label)
          assert.deepStrictEqual(got, [], `${label}: nothing may be committed`)
          continue
        }
        assert.equal(error, undefined, `${label}: the transaction rejected: ${error?.stack}`)
        const kept = failAt === -1 ? depth : failAt - 1 // deepest level whose work survives
        const expected = []
        for (let k = 0; k <= kept; k++) expected.push(`in ${k}`)
        for (let k = Math.min(kept, depth - 1); k >= 0; k--) expected.push(`after ${k}`)
        assert.deepStrictEqual(got, expected, label)
        const path = Array.from({ length: kept + 1 }, (_, k) => `L${k}`).join('>')
        assert.equal(result, failAt === -1 ? path : `${path}>caught`, `${label}: return values pass through each level`)
        if (failAt === -1) assert.deepStrictEqual(caught, [], label)
        else {
          assert.equal(caught.length, 1, `${label}: exactly the parent of the failing level catches`)
          assert.equal(caught[0].level, failAt - 1, label)
          assert.equal(caught[0].error, thrown, `${label}: tx.transaction must reject with the body's own error object`)
        }
      }
    }
  },
)

test('an error thrown by an uncaught inner body reaches the outermost rejection as the same object', T, async (t) => {
  const db = await tdb(t)
  const thrown = new TypeError('deep failure')
  const seen = []
  async function level(tx, k) {
    await tx.execute(INSERT, [`in ${k}`])
    if (k === 5) throw thrown
    try {
      return await tx.transaction((inner) => level(inner, k + 1))
    } catch (e) {
      seen.push(e)
      throw e
    }
  }
  const err = await rejectionOf(db.transaction((tx) => level(tx, 0)))
  assert.equal(err, thrown)
  assert.equal(seen.length, 5)
  for (const e of seen) assert.equal(e, thrown)
  assert.deepStrictEqual(await values(db), [])
  // a non-Error value is passed through as it is
  const reason = { notAnError: true }
  assert.equal(
    await rejectionOf(db.transaction(async (tx) => tx.transaction(async () => Promise.reject(reason)))),
    reason,
  )
  assert.equal(
    await rejectionOf(
      db.transaction(async () => {
        throw 'a string'
      }),
    ),
    'a string',
  )
  await db.transaction(async (tx) => tx.execute(INSERT, ['usable']))
  assert.deepStrictEqual(await values(db), ['usable'])
})

test('a failed statement inside a savepoint rejects it; the outer body catches it and commits', T, async (t) => {
  const db = await openTxDb(t).then(({ db }) => db)
  await db.execute('CREATE TABLE u (id INTEGER PRIMARY KEY, name TEXT UNIQUE)')
  await db.execute("INSERT INTO u (name) VALUES ('taken')")
  const r = await db.transaction(async (tx) => {
    await tx.execute('INSERT INTO u (name) VALUES (?)', ['outer-1'])
    const err = await rejectionOf(
      tx.transaction(async (sp) => {
        await sp.execute('INSERT INTO u (name) VALUES (?)', ['inner-ok'])
        await sp.execute('INSERT INTO u (name) VALUES (?)', ['taken']) // UNIQUE violation, not caught
        return 'unreachable'
      }),
    )
    assertError(err, ResqliteError, 'SQLITE_CONSTRAINT_UNIQUE', /u\.name/)
    // a statement error caught directly in the outer body does not end the transaction either
    assertError(
      await rejectionOf(tx.execute('INSERT INTO u (name) VALUES (?)', ['taken'])),
      ResqliteError,
      'SQLITE_CONSTRAINT_UNIQUE',
    )
    await tx.execute('INSERT INTO u (name) VALUES (?)', ['outer-2'])
    return 'committed'
  })
  assert.equal(r, 'committed')
  assert.deepStrictEqual(
    (await db.select('SELECT name FROM u ORDER BY id')).map((x) => x.name),
    ['taken', 'outer-1', 'outer-2'],
  )
})

test('sibling savepoints started together run one after another; one rolling back leaves the others', T, async (t) => {
  const db = await tdb(t)
  const log = []
  const sp = (name, fail) => async (s) => {
    log.push(`enter ${name}`)
    await sleep(10)
    await s.execute(INSERT, [name])
    await turns(2)
    log.push(`exit ${name}`)
    if (fail) throw new Error(`${name} fails`)
    return name
  }
  const results = await withTimeout(
    db.transaction(async (tx) => {
      const all = await Promise.allSettled([
        tx.transaction(sp('a')),
        tx.transaction(sp('b', true)),
        tx.transaction(sp('c')),
      ])
      await tx.execute(INSERT, ['outer'])
      return all.map((x) => (x.status === 'fulfilled' ? x.value : x.reason.message))
    }),
    5000,
    'a transaction with sibling savepoints',
  )
  assert.deepStrictEqual(results, ['a', 'b fails', 'c'])
  assert.deepStrictEqual(log, ['enter a', 'exit a', 'enter b', 'exit b', 'enter c', 'exit c'])
  assert.deepStrictEqual(await values(db), ['a', 'c', 'outer'])
})
