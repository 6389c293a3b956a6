// db.transaction (README "Transactions"): commit and return value, tx methods, modes, savepoints,
// AsyncLocalStorage routing, isolation from outside reads and writes, errors, abort, bad input.

import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { calibrate, expectReject, SLOW_SQL } from './helpers.mjs'
import {
  assertError,
  deferred,
  openTxDb,
  outsideContext,
  rejectionOf,
  sleep,
  T,
  track,
  transactionWithin,
  turns,
  values,
  withTimeout,
} from './tx-helpers.mjs'

const INSERT = 'INSERT INTO t (v) VALUES (?)'

/** A database with `t (id INTEGER PRIMARY KEY, v)`. */
async function tdb(t, options) {
  const { db } = await openTxDb(t, options)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  return db
}

async function count(db, table = 't') {
  return (await db.selectOne(`SELECT count(*) AS n FROM ${table}`)).n
}

// ───────────────────────────── basics ─────────────────────────────

test("transaction resolves with the body's return value after COMMIT", T, async (t) => {
  const db = await tdb(t)
  const ret = { answer: 42 }
  let runs = 0
  const r = await db.transaction(async (tx) => {
    runs++
    assert.equal(typeof tx, 'object')
    await tx.execute(INSERT, ['a'])
    await tx.execute(INSERT, ['b'])
    return ret
  })
  assert.equal(r, ret, 'the transaction must resolve with the very object the body returned')
  assert.equal(runs, 1, 'the body runs exactly once')
  // committed: a reader connection sees it as soon as the transaction has resolved
  assert.deepStrictEqual(await values(db), ['a', 'b'])
  assert.equal(await db.transaction(async () => {}), undefined)
  assert.equal(await db.transaction(async (tx) => (await tx.selectOne('SELECT count(*) AS n FROM t')).n * 10), 20)
})

// BEGIN and SAVEPOINT are sent without waiting for them (experiments/014, 031): levels that
// wait before their first statement, or send none, must still end.
test('levels that wait before their first statement, or send none, commit', T, async (t) => {
  const db = await tdb(t)
  const r = await withTimeout(
    db.transaction(async (tx) => {
      await sleep(20)
      const empty = await tx.transaction(async () => 'empty savepoint')
      const late = await tx.transaction(async (sp) => {
        await sleep(10)
        await sp.execute(INSERT, ['late'])
        return 'late'
      })
      await tx.transaction(async (sp) => sp.transaction(async () => {}))
      return [empty, late]
    }),
    5000,
    'the transaction',
  )
  assert.deepStrictEqual(r, ['empty savepoint', 'late'])
  assert.deepStrictEqual(await values(db), ['late'])
  assert.equal(
    await withTimeout(
      db.transaction(async () => 'no statement at all'),
      5000,
      'an empty transaction',
    ),
    'no statement at all',
  )
})

test("tx.select / selectOne / selectBytes / execute / executeBatch see the transaction's own writes", T, async (t) => {
  const db = await tdb(t)
  const runOutside = outsideContext()
  await db.transaction(async (tx) => {
    assert.deepStrictEqual(await tx.execute(INSERT, ['a']), { changes: 1, lastInsertRowid: 1 })
    assert.deepStrictEqual(await tx.executeBatch('INSERT INTO t (v) VALUES (:v)', [{ v: 'b' }, { v: 'c' }]), {
      changes: 2,
    })
    assert.deepStrictEqual(await tx.select('SELECT id, v FROM t ORDER BY id'), [
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
      { id: 3, v: 'c' },
    ])
    assert.deepStrictEqual(await tx.select('SELECT v FROM t WHERE id = $id', { id: 2 }), [{ v: 'b' }])
    assert.deepStrictEqual(await tx.selectOne('SELECT count(*) AS n FROM t'), { n: 3 })
    assert.equal(await tx.selectOne('SELECT v FROM t WHERE id = ?', [99]), undefined)
    const bytes = await tx.selectBytes('SELECT id, v FROM t ORDER BY id')
    assert.ok(Buffer.isBuffer(bytes))
    assert.equal(bytes.toString(), '[{"id":1,"v":"a"},{"id":2,"v":"b"},{"id":3,"v":"c"}]')
    const up = await tx.execute('UPDATE t SET v = v || ? WHERE id > ?', ['!', 1])
    assert.equal(up.changes, 2)
    // several statements without parameters run them all, inside the transaction
    await tx.execute("INSERT INTO t (v) VALUES ('d'); INSERT INTO t (v) VALUES ('e')")
    assert.deepStrictEqual(
      (await tx.select('SELECT v FROM t ORDER BY id')).map((r) => r.v),
      ['a', 'b!', 'c!', 'd', 'e'],
    )
    // nothing is visible outside before COMMIT
    assert.deepStrictEqual(await runOutside(() => db.select('SELECT count(*) AS n FROM t')), [{ n: 0 }])
  })
  assert.deepStrictEqual(await values(db), ['a', 'b!', 'c!', 'd', 'e'])
})

test('tx.select on the writer connection still refuses a statement that writes', T, async (t) => {
  const db = await tdb(t)
  await db.transaction(async (tx) => {
    await expectReject(() => tx.select("INSERT INTO t (v) VALUES ('sneaky')"), ResqliteError, 'ERR_NOT_READ_ONLY')
    await expectReject(() => tx.selectOne('DELETE FROM t'), ResqliteError, 'ERR_NOT_READ_ONLY')
    await tx.execute(INSERT, ['ok'])
  })
  assert.deepStrictEqual(await values(db), ['ok'])
})

test('tx calls issued without awaiting each one run in call order', T, async (t) => {
  const db = await tdb(t)
  const results = await db.transaction(async (tx) =>
    Promise.all([
      tx.execute(INSERT, ['1']),
      tx.execute(INSERT, ['2']),
      tx.select('SELECT v FROM t ORDER BY id'),
      tx.execute(INSERT, ['3']),
      tx.selectOne('SELECT count(*) AS n FROM t'),
    ]),
  )
  assert.deepStrictEqual(results[2], [{ v: '1' }, { v: '2' }])
  assert.deepStrictEqual(results[4], { n: 3 })
  assert.deepStrictEqual(await values(db), ['1', '2', '3'])
})

test('modes deferred, immediate, exclusive and the default all commit', T, async (t) => {
  const db = await tdb(t)
  for (const mode of [undefined, 'deferred', 'immediate', 'exclusive']) {
    const options = mode === undefined ? undefined : { mode }
    const r = await db.transaction(async (tx) => {
      await tx.execute(INSERT, [String(mode)])
      return (await tx.selectOne('SELECT count(*) AS n FROM t')).n
    }, options)
    assert.equal(typeof r, 'number', `mode ${mode}`)
  }
  // { mode } absent from a present options object, and { signal } alone
  await db.transaction(async (tx) => tx.execute(INSERT, ['empty-options']), {})
  await db.transaction(async (tx) => tx.execute(INSERT, ['signal-only']), { signal: new AbortController().signal })
  assert.deepStrictEqual(await values(db), [
    'undefined',
    'deferred',
    'immediate',
    'exclusive',
    'empty-options',
    'signal-only',
  ])
})

test('immediate and exclusive take the write lock at BEGIN; deferred (the default) does not', T, async (t) => {
  const { db, file } = await openTxDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  // a second Database on the same file: its own writer connection, failing at once on a lock
  const other = await Database.open(file, { busyTimeout: 0, readers: 1 })
  t.after(() => other.close())
  const runOutside = outsideContext()
  for (const mode of ['immediate', 'exclusive']) {
    await db.transaction(
      async (tx) => {
        // nothing written yet: the lock must already be held
        const err = await rejectionOf(
          runOutside(() => other.execute(INSERT, [`other during ${mode}`])),
          `other.execute during ${mode}`,
        )
        assertError(err, ResqliteError, /^SQLITE_BUSY/)
        await tx.execute(INSERT, [mode])
      },
      { mode },
    )
  }
  for (const options of [{ mode: 'deferred' }, undefined]) {
    const label = options ? 'deferred' : 'default'
    await db.transaction(async (tx) => {
      await runOutside(() => other.execute(INSERT, [`other during ${label}`]))
      await tx.execute(INSERT, [label])
    }, options)
  }
  assert.deepStrictEqual(await values(db), [
    'immediate',
    'exclusive',
    'other during deferred',
    'deferred',
    'other during default',
    'default',
  ])
})

// ───────────────────────────── savepoints ─────────────────────────────

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

// ───────────────────────────── routing ─────────────────────────────

test('db.* calls inside a body, directly and from helpers several awaits deep, go to the transaction', T, async (t) => {
  const db = await tdb(t)
  const runOutside = outsideContext()
  async function helper(depth) {
    if (depth > 0) {
      await turns(1)
      await sleep(1)
      await Promise.resolve()
      return helper(depth - 1)
    }
    await db.execute(INSERT, ['from helper'])
    return (await db.select('SELECT v FROM t ORDER BY id')).map((r) => r.v)
  }
  const result = await transactionWithin(
    db,
    async () => {
      await db.execute(INSERT, ['direct'])
      assert.deepStrictEqual(await db.select('SELECT v FROM t ORDER BY id'), [{ v: 'direct' }])
      assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n FROM t'), { n: 1 })
      assert.equal((await db.selectBytes('SELECT v FROM t ORDER BY id')).toString(), '[{"v":"direct"}]')
      assert.deepStrictEqual(await db.executeBatch(INSERT, [['batch 1'], ['batch 2']]), { changes: 2 })
      const seenByHelper = await helper(5)
      // from a timer callback scheduled inside the body
      const fromTimer = await new Promise((resolve, reject) =>
        setTimeout(
          () =>
            db
              .execute(INSERT, ['from timer'])
              .then(() => db.selectOne('SELECT count(*) AS n FROM t'))
              .then(resolve, reject),
          2,
        ),
      )
      // still not committed: a read outside the body sees nothing
      const outside = await runOutside(() => db.select('SELECT count(*) AS n FROM t'))
      return { seenByHelper, fromTimer, outside }
    },
    5000,
    'transaction calling db.* inside its body',
  )
  assert.deepStrictEqual(result, {
    seenByHelper: ['direct', 'batch 1', 'batch 2', 'from helper'],
    fromTimer: { n: 5 },
    outside: [{ n: 0 }],
  })
  assert.deepStrictEqual(await values(db), ['direct', 'batch 1', 'batch 2', 'from helper', 'from timer'])
})

test('db.transaction inside a body becomes a savepoint of the innermost transaction', T, async (t) => {
  const db = await tdb(t)
  const runOutside = outsideContext()
  async function deepInsert(v) {
    await turns(2)
    await sleep(1)
    return db.execute(INSERT, [v])
  }
  const r = await transactionWithin(
    db,
    async () => {
      await db.execute(INSERT, ['outer'])
      const inner = await db.transaction(async () => {
        await deepInsert('inner')
        // nested again through db.transaction, from a helper
        return db.transaction(async () => {
          await deepInsert('inner-inner')
          return 'inner-ret'
        })
      })
      assert.equal(inner, 'inner-ret')
      // a nested db.transaction is not a transaction of its own: nothing is committed yet
      assert.deepStrictEqual(await runOutside(() => db.select('SELECT count(*) AS n FROM t')), [{ n: 0 }])
      // a nested db.transaction that throws rolls back only itself, including what a helper wrote
      const boom = new Error('inner boom')
      const err = await rejectionOf(
        db.transaction(async () => {
          await deepInsert('discarded')
          await db.transaction(async () => deepInsert('discarded too'))
          throw boom
        }),
      )
      assert.equal(err, boom)
      assert.deepStrictEqual(
        (await db.select('SELECT v FROM t ORDER BY id')).map((x) => x.v),
        ['outer', 'inner', 'inner-inner'],
      )
      await deepInsert('outer again')
      return 'outer-ret'
    },
    5000,
    'transaction with nested db.transaction',
  )
  assert.equal(r, 'outer-ret')
  assert.deepStrictEqual(await values(db), ['outer', 'inner', 'inner-inner', 'outer again'])

  // an outer rollback discards what nested db.transaction calls committed into it
  const boom = new Error('outer boom')
  const err = await rejectionOf(
    transactionWithin(
      db,
      async () => {
        await db.transaction(async () => deepInsert('gone'))
        throw boom
      },
      5000,
      'transaction with a nested db.transaction, then a throw',
    ),
  )
  assert.equal(err, boom)
  assert.deepStrictEqual(await values(db), ['outer', 'inner', 'inner-inner', 'outer again'])
})

test('routing is per database: another Database used inside a body is not part of the transaction', T, async (t) => {
  const db = await tdb(t)
  const { db: other } = await openTxDb(t)
  await other.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  const boom = new Error('roll back db only')
  const err = await rejectionOf(
    transactionWithin(
      db,
      async (tx) => {
        await tx.execute(INSERT, ['db'])
        await other.execute(INSERT, ['other']) // commits on its own, at once
        assert.deepStrictEqual(await other.select('SELECT v FROM t'), [{ v: 'other' }])
        const inOther = await other.transaction(async (otx) => {
          await otx.execute(INSERT, ['other tx'])
          return 'other committed'
        })
        assert.equal(inOther, 'other committed')
        throw boom
      },
      5000,
      'transaction using a second database',
    ),
  )
  assert.equal(err, boom)
  assert.deepStrictEqual(await values(db), [])
  assert.deepStrictEqual(await values(other), ['other', 'other tx'])
})

test('two transactions started concurrently from outside any body run one after another', T, async (t) => {
  const db = await tdb(t)
  const log = []
  const body = (name) => async (tx) => {
    log.push(`enter ${name}`)
    await sleep(15)
    await tx.execute(INSERT, [name])
    await turns(2)
    const n = await tx.selectOne('SELECT count(*) AS n FROM t')
    await sleep(5)
    log.push(`exit ${name}`)
    return `${name}:${n.n}`
  }
  const results = await withTimeout(
    Promise.all([
      db.transaction(body('a')),
      db.transaction(body('b')),
      db.execute(INSERT, ['standalone']),
      db.transaction(body('c')),
    ]),
    10_000,
    'three concurrent transactions',
  )
  assert.deepStrictEqual(log, ['enter a', 'exit a', 'enter b', 'exit b', 'enter c', 'exit c'])
  assert.equal(results[0], 'a:1')
  assert.equal(results[1], 'b:2')
  assert.equal(results[3], 'c:4')
  assert.deepStrictEqual(await values(db), ['a', 'b', 'standalone', 'c'])
})

// ───────────────────────────── isolation ─────────────────────────────

test(
  'outside reads see the last committed state while a transaction is open; outside writes wait for it',
  T,
  async (t) => {
    const db = await tdb(t)
    await db.execute(INSERT, ['before'])
    const runOutside = outsideContext()
    const reached = deferred() // the body is open and has written
    const release = deferred() // the test lets the body finish
    // started outside any transaction: what they do after `reached` runs in this (outside) context
    const outsideRead = (async () => {
      await reached.promise
      return db.select('SELECT v FROM t ORDER BY id')
    })()
    let outsideWrite
    let outsideTx
    let outsideTxBodyRan = false
    const issued = (async () => {
      await reached.promise
      outsideWrite = track(db.execute("INSERT INTO t (v) SELECT 'outside:' || count(*) FROM t"))
      outsideTx = track(
        db.transaction(async (tx) => {
          outsideTxBodyRan = true
          await tx.execute("INSERT INTO t (v) SELECT 'outside tx:' || count(*) FROM t")
        }),
      )
    })()
    const txp = track(
      db.transaction(async (tx) => {
        await tx.execute(INSERT, ['in tx 1'])
        await tx.execute(INSERT, ['in tx 2'])
        reached.resolve()
        await release.promise
        await tx.execute(INSERT, ['in tx 3']) // after the outside write was queued: must not wait for it
        await db.execute(INSERT, ['in tx 4']) // routed, likewise
        return 'done'
      }),
    )
    await withTimeout(reached.promise, 5000, 'the transaction body')
    assert.deepStrictEqual(await withTimeout(outsideRead, 5000, 'an outside read'), [{ v: 'before' }])
    assert.deepStrictEqual(await runOutside(() => db.selectOne('SELECT count(*) AS n FROM t')), { n: 1 })
    assert.equal((await runOutside(() => db.selectBytes('SELECT v FROM t'))).toString(), '[{"v":"before"}]')
    await issued
    await sleep(150)
    assert.equal(
      outsideWrite.settled,
      false,
      `a standalone write issued during the transaction settled before it committed: ${outsideWrite.error ?? ''}`,
    )
    assert.equal(outsideTxBodyRan, false, 'a second transaction started while the first was open')
    assert.equal(txp.settled, false)
    assert.deepStrictEqual(await values(db), ['before'], 'the outside write must not have applied yet')

    release.resolve()
    assert.equal(await withTimeout(txp.promise, 5000, 'the transaction'), 'done')
    // after COMMIT, outside reads see the transaction's rows
    const afterCommit = await values(db)
    assert.deepStrictEqual(afterCommit.slice(0, 5), ['before', 'in tx 1', 'in tx 2', 'in tx 3', 'in tx 4'])
    await withTimeout(
      Promise.all([outsideWrite.promise, outsideTx.promise]),
      5000,
      'the queued outside write and transaction',
    )
    // the outside write ran after the commit (it counted 5 rows), then the outside transaction
    assert.deepStrictEqual(await values(db), [
      'before',
      'in tx 1',
      'in tx 2',
      'in tx 3',
      'in tx 4',
      'outside:5',
      'outside tx:6',
    ])
  },
)

// ───────────────────────────── errors ─────────────────────────────

test('a body that throws rolls back and the transaction rejects with that error', T, async (t) => {
  const db = await tdb(t)
  await db.execute(INSERT, ['kept'])
  const boom = new Error('boom')
  const err = await rejectionOf(
    db.transaction(async (tx) => {
      await tx.execute(INSERT, ['x'])
      await tx.executeBatch(INSERT, [['y'], ['z']])
      await sleep(5)
      throw boom
    }),
  )
  assert.equal(err, boom)
  assert.deepStrictEqual(await values(db), ['kept'])
  // a rejected await that the body does not catch: the transaction rejects with that ResqliteError
  await db.execute('CREATE UNIQUE INDEX t_v ON t (v)')
  const err2 = await rejectionOf(
    db.transaction(async (tx) => {
      await tx.execute(INSERT, ['new'])
      await tx.execute(INSERT, ['kept'])
    }),
  )
  assertError(err2, ResqliteError, 'SQLITE_CONSTRAINT_UNIQUE', /t\.v/)
  assert.deepStrictEqual(await values(db), ['kept'])
  // a body that throws synchronously (before any await) still gives a rejected promise
  const sync = new Error('sync throw')
  let p3
  assert.doesNotThrow(() => {
    p3 = db.transaction(() => {
      throw sync
    })
  })
  assert.equal(await rejectionOf(p3), sync)
  await db.transaction(async (tx) => tx.execute(INSERT, ['after']))
  assert.deepStrictEqual(await values(db), ['kept', 'after'])
})

test('a COMMIT that fails (deferred foreign key) rolls back and rejects with its ResqliteError', T, async (t) => {
  const { db } = await openTxDb(t)
  await db.execute(`CREATE TABLE parent (id INTEGER PRIMARY KEY);
                    CREATE TABLE child (id INTEGER PRIMARY KEY,
                                        pid INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)`)
  let bodyFinished = false
  const err = await rejectionOf(
    db.transaction(async (tx) => {
      await tx.execute('INSERT INTO parent (id) VALUES (1)')
      await tx.execute('INSERT INTO child (pid) VALUES (?)', [99]) // checked only at COMMIT
      await tx.execute('INSERT INTO child (pid) VALUES (?)', [1])
      assert.deepStrictEqual(await tx.selectOne('SELECT count(*) AS n FROM child'), { n: 2 })
      bodyFinished = true
      return 'must not resolve'
    }),
  )
  assert.equal(bodyFinished, true)
  assertError(err, ResqliteError, 'SQLITE_CONSTRAINT_FOREIGNKEY', /FOREIGN KEY/i)
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM parent'), [{ n: 0 }])
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM child'), [{ n: 0 }])
  // the writer is not left inside the failed transaction: standalone writes commit and are visible
  await db.execute('INSERT INTO parent (id) VALUES (2)')
  assert.deepStrictEqual(await db.select('SELECT id FROM parent'), [{ id: 2 }])
  await db.transaction(async (tx) => tx.execute('INSERT INTO child (pid) VALUES (2)'))
  assert.deepStrictEqual(await db.select('SELECT pid FROM child'), [{ pid: 2 }])
  // the same at depth: the violation is written inside a released savepoint
  const err2 = await rejectionOf(
    db.transaction(async (tx) => {
      await tx.transaction(async (sp) => sp.execute('INSERT INTO child (pid) VALUES (?)', [77]))
      await tx.execute('INSERT INTO parent (id) VALUES (3)')
    }),
  )
  assertError(err2, ResqliteError, 'SQLITE_CONSTRAINT_FOREIGNKEY')
  assert.deepStrictEqual(await db.select('SELECT id FROM parent ORDER BY id'), [{ id: 2 }])
  assert.deepStrictEqual(await db.select('SELECT pid FROM child'), [{ pid: 2 }])
})

/** t with a trigger that makes SQLite roll the whole transaction back on v = 'bad'. */
async function raiseDb(t) {
  const db = await tdb(t)
  await db.execute(`CREATE TRIGGER no_bad BEFORE INSERT ON t WHEN NEW.v = 'bad'
                    BEGIN SELECT RAISE(ROLLBACK, 'nope'); END`)
  await db.execute(INSERT, ['committed before'])
  return db
}

test(
  'SQLite rolling back on its own (RAISE(ROLLBACK)): later tx calls and the transaction reject ERR_TRANSACTION_ROLLED_BACK',
  T,
  async (t) => {
    const db = await raiseDb(t)
    let raised
    let nestedRan = false
    const later = {}
    const err = await rejectionOf(
      db.transaction(async (tx) => {
        await tx.execute(INSERT, ['a'])
        raised = await rejectionOf(tx.execute(INSERT, ['bad']), 'the execute that fires RAISE(ROLLBACK)')
        // the body catches everything; none of these may run (in autocommit mode they would commit)
        later.execute = await rejectionOf(tx.execute(INSERT, ['after rollback']))
        later.executeBatch = await rejectionOf(tx.executeBatch(INSERT, [['batch after rollback']]))
        later.select = await rejectionOf(tx.select('SELECT v FROM t'))
        later.selectOne = await rejectionOf(tx.selectOne('SELECT v FROM t'))
        later.selectBytes = await rejectionOf(tx.selectBytes('SELECT v FROM t'))
        later.transaction = await rejectionOf(
          tx.transaction(async (sp) => {
            nestedRan = true
            await sp.execute(INSERT, ['nested after rollback'])
          }),
        )
        later.routed = await rejectionOf(db.execute(INSERT, ['routed after rollback']))
        return 'the body caught everything'
      }),
    )
    assertError(raised, ResqliteError, /^SQLITE_CONSTRAINT/, /nope/)
    for (const [name, e] of Object.entries(later)) {
      assert.ok(e instanceof ResqliteError, `${name}: expected a ResqliteError, got ${e?.stack ?? e}`)
      assert.equal(e.code, 'ERR_TRANSACTION_ROLLED_BACK', `${name}: ${e.message}`)
    }
    assert.equal(nestedRan, false, 'a nested body must not run in a transaction SQLite already rolled back')
    assertError(err, ResqliteError, 'ERR_TRANSACTION_ROLLED_BACK', /roll/i)
    assert.ok(err.cause instanceof ResqliteError, `cause must hold the error that rolled back: ${err.cause}`)
    assert.match(err.cause.message, /nope/)
    assert.deepStrictEqual(await values(db), ['committed before'])
    // later writes work and commit
    await db.execute(INSERT, ['later'])
    await db.transaction(async (tx) => tx.execute(INSERT, ['later tx']))
    assert.deepStrictEqual(await values(db), ['committed before', 'later', 'later tx'])
  },
)

test('RAISE(ROLLBACK) inside a savepoint rolls back the whole transaction', T, async (t) => {
  const db = await raiseDb(t)
  let innerErr
  let afterErr
  const err = await rejectionOf(
    db.transaction(async (tx) => {
      await tx.execute(INSERT, ['outer'])
      innerErr = await rejectionOf(
        tx.transaction(async (sp) => {
          await sp.execute(INSERT, ['inner'])
          await sp.execute(INSERT, ['bad'])
        }),
      )
      afterErr = await rejectionOf(tx.execute(INSERT, ['outer after']))
      return 'caught'
    }),
  )
  assert.ok(innerErr instanceof ResqliteError, `${innerErr}`)
  assert.match(innerErr.code, /^(SQLITE_CONSTRAINT|ERR_TRANSACTION_ROLLED_BACK)/)
  assertError(afterErr, ResqliteError, 'ERR_TRANSACTION_ROLLED_BACK')
  assertError(err, ResqliteError, 'ERR_TRANSACTION_ROLLED_BACK')
  // and when the body does not catch it: rejected, nothing committed
  const err2 = await rejectionOf(
    db.transaction(async (tx) => {
      await tx.execute(INSERT, ['x'])
      await tx.execute(INSERT, ['bad'])
    }),
  )
  assert.ok(err2 instanceof ResqliteError, `${err2}`)
  assert.match(err2.code, /^(SQLITE_CONSTRAINT|ERR_TRANSACTION_ROLLED_BACK)/)
  assert.deepStrictEqual(await values(db), ['committed before'])
  await db.execute(INSERT, ['later'])
  assert.deepStrictEqual(await values(db), ['committed before', 'later'])
})

// ───────────────────────────── abort ─────────────────────────────

test('an already-aborted signal rejects with ABORT_ERR and the body does not run', T, async (t) => {
  const db = await tdb(t)
  const ac = new AbortController()
  const reason = new Error('not needed')
  ac.abort(reason)
  let ran = false
  const err = await expectReject(
    () =>
      db.transaction(
        async (tx) => {
          ran = true
          await tx.execute(INSERT, ['x'])
        },
        { signal: ac.signal },
      ),
    ResqliteError,
    'ABORT_ERR',
    /abort/i,
  )
  assert.equal(err.cause, reason)
  await turns()
  assert.equal(ran, false)
  assert.deepStrictEqual(await values(db), [])
  await db.transaction(async (tx) => tx.execute(INSERT, ['ok']))
  assert.deepStrictEqual(await values(db), ['ok'])
})

/** Aborts a transaction whose body (or, with `nested`, a savepoint body inside it) awaits a
 * promise the test controls; checks the rejection, the rollback and the freed writer. */
async function abortWhileAwaiting(t, nested) {
  const where = nested ? 'inside a savepoint' : 'in the outer body'
  const db = await tdb(t)
  const ac = new AbortController()
  const reached = deferred()
  const hold = deferred()
  const bodyDone = deferred()
  const later = {}
  async function wait(tx) {
    reached.resolve()
    await hold.promise // the body does not go on until the test lets it
    later.execute = await rejectionOf(tx.execute(INSERT, ['after abort']))
    later.select = await rejectionOf(tx.select('SELECT v FROM t'))
    later.transaction = await rejectionOf(tx.transaction(async (sp) => sp.execute(INSERT, ['nested after abort'])))
    later.routed = await rejectionOf(db.execute(INSERT, ['routed after abort']))
  }
  const txp = db.transaction(
    async (tx) => {
      try {
        await tx.execute(INSERT, ['a'])
        await tx.transaction(async (sp) => sp.execute(INSERT, ['released savepoint']))
        if (nested) {
          await rejectionOf(
            tx.transaction(async (sp) => {
              await sp.execute(INSERT, ['open savepoint'])
              await wait(sp)
            }),
          )
          later.outerAfterNested = await rejectionOf(tx.execute(INSERT, ['outer after abort']))
        } else {
          await wait(tx)
        }
      } finally {
        bodyDone.resolve()
      }
    },
    { signal: ac.signal },
  )
  const state = track(txp)
  await withTimeout(reached.promise, 5000, 'the body')
  const reason = new Error('user cancelled')
  const t0 = performance.now()
  ac.abort(reason)
  const err = await rejectionOf(withTimeout(txp, 5000, 'the aborted transaction'))
  const latency = performance.now() - t0
  assertError(err, ResqliteError, 'ABORT_ERR', /abort/i)
  assert.equal(err.cause, reason, where)
  assert.ok(latency < 500, `${where}: the aborted transaction took ${latency.toFixed(0)} ms to reject`)
  assert.equal(state.rejected, true)
  // rolled back, and the writer is free although the body has not finished
  assert.deepStrictEqual(await values(db), [], where)
  await withTimeout(db.execute(INSERT, ['later']), 3000, `${where}: a write after the abort`)
  await withTimeout(
    db.transaction(async (tx) => tx.execute(INSERT, ['later tx'])),
    3000,
    `${where}: a transaction after the abort`,
  )
  assert.deepStrictEqual(await values(db), ['later', 'later tx'], where)
  // the body goes on: every tx call rejects and writes nothing
  hold.resolve()
  await withTimeout(bodyDone.promise, 5000, `${where}: the rest of the aborted body`)
  assert.ok(Object.keys(later).length >= 4, where)
  for (const [name, e] of Object.entries(later)) {
    assert.ok(e instanceof ResqliteError, `${where}, ${name}: expected a ResqliteError, got ${e?.stack ?? e}`)
    assert.match(
      e.code,
      /^(ABORT_ERR|ERR_TRANSACTION_FINISHED|ERR_TRANSACTION_ROLLED_BACK)$/,
      `${where}, ${name}: ${e.message}`,
    )
  }
  await turns()
  assert.deepStrictEqual(await values(db), ['later', 'later tx'], where)
}

test(
  "aborting while the body awaits rejects promptly, rolls back, frees the writer; the body's later tx calls reject",
  T,
  async (t) => {
    await abortWhileAwaiting(t, false)
  },
)

test('aborting while a savepoint body awaits rolls back the whole transaction', T, async (t) => {
  await abortWhileAwaiting(t, true)
})

test('aborting a transaction still waiting for its turn rejects at once; the queue behind it goes on', T, async (t) => {
  const db = await tdb(t)
  const hold = deferred()
  const first = track(
    db.transaction(async (tx) => {
      await tx.execute(INSERT, ['first'])
      await hold.promise
    }),
  )
  const ac = new AbortController()
  let abortedRan = false
  const aborted = track(
    db.transaction(
      async (tx) => {
        abortedRan = true
        await tx.execute(INSERT, ['aborted'])
      },
      { signal: ac.signal },
    ),
  )
  const third = db.transaction(async (tx) => tx.execute(INSERT, ['third']))
  const fourth = db.execute(INSERT, ['fourth'])
  await sleep(20)
  const reason = new Error('gave up waiting')
  ac.abort(reason)
  const err = await rejectionOf(withTimeout(aborted.promise, 1000, 'the queued, aborted transaction'))
  assertError(err, ResqliteError, 'ABORT_ERR', /abort/i)
  assert.equal(err.cause, reason)
  assert.equal(first.settled, false, 'the first transaction is still open')
  hold.resolve()
  await withTimeout(Promise.all([first.promise, third, fourth]), 5000, 'the rest of the queue')
  assert.equal(abortedRan, false, "an aborted transaction's body must never run")
  assert.deepStrictEqual(await values(db), ['first', 'third', 'fourth'])
})

test('aborting while a long statement of the transaction runs rejects promptly and rolls back', T, async (t) => {
  const db = await tdb(t, { readers: 1 })
  const n = await calibrate(db, 3000) // ~3 s of counting if not interrupted
  const ac = new AbortController()
  const started = deferred()
  let slow
  const txp = db.transaction(
    async (tx) => {
      await tx.execute(INSERT, ['a'])
      started.resolve()
      slow = track(tx.select(SLOW_SQL, [n]))
      await slow.promise
      await tx.execute(INSERT, ['b'])
    },
    { signal: ac.signal },
  )
  await withTimeout(started.promise, 5000, 'the body')
  await sleep(150)
  assert.equal(slow.settled, false, 'the slow statement finished within 150 ms; it is not slow enough to test abort')
  const t0 = performance.now()
  ac.abort()
  const err = await rejectionOf(withTimeout(txp, 10_000, 'the aborted transaction'))
  const latency = performance.now() - t0
  assertError(err, ResqliteError, 'ABORT_ERR', /abort/i)
  assert.ok(latency < 1000, `the aborted transaction took ${latency.toFixed(0)} ms to reject`)
  await withTimeout(
    slow.promise.catch(() => {}),
    10_000,
    'the statement running at abort',
  )
  await withTimeout(db.execute(INSERT, ['later']), 5000, 'a write after the abort')
  assert.deepStrictEqual(await values(db), ['later'])
})

// ───────────────────────────── bad input ─────────────────────────────

test('a body that is not a function is a TypeError', T, async (t) => {
  const db = await tdb(t)
  for (const bad of [undefined, null, 'INSERT INTO t (v) VALUES (1)', 42, {}, Promise.resolve()]) {
    await expectReject(() => db.transaction(bad), TypeError, 'ERR_INVALID_ARG_TYPE', /body|function/i)
  }
  await db.transaction(async (tx) => {
    await expectReject(() => tx.transaction('nope'), TypeError, 'ERR_INVALID_ARG_TYPE', /body|function/i)
    await tx.execute(INSERT, ['outer still usable'])
  })
  assert.deepStrictEqual(await values(db), ['outer still usable'])
})

test('a body that does not return a promise is a TypeError and nothing is committed', T, async (t) => {
  const db = await tdb(t)
  let ran = 0
  let leakedWrite
  await expectReject(
    () =>
      db.transaction((tx) => {
        ran++
        leakedWrite = track(tx.execute(INSERT, ['from a sync body']))
        return 42
      }),
    TypeError,
    /^ERR_INVALID_(ARG_TYPE|ARG_VALUE|RETURN_VALUE)$/,
    /promise|async/i,
  )
  assert.equal(ran, 1)
  await withTimeout(
    leakedWrite.promise.catch(() => {}),
    5000,
    "the sync body's write",
  )
  await turns()
  assert.deepStrictEqual(await values(db), [], "a sync body's writes must not be committed")
  // the same for a nested body
  await db.transaction(async (tx) => {
    await expectReject(
      () => tx.transaction(() => 'not a promise'),
      TypeError,
      /^ERR_INVALID_(ARG_TYPE|ARG_VALUE|RETURN_VALUE)$/,
      /promise|async/i,
    )
    await tx.execute(INSERT, ['outer'])
  })
  assert.deepStrictEqual(await values(db), ['outer'])
  // a plain (non-async) function that returns a promise is a valid body
  assert.deepStrictEqual(await db.transaction((tx) => tx.execute(INSERT, ['plain fn'])), {
    changes: 1,
    lastInsertRowid: 2,
  })
  assert.deepStrictEqual(await values(db), ['outer', 'plain fn'])
})

test('a tx used after its body finished rejects ERR_TRANSACTION_FINISHED', T, async (t) => {
  const db = await tdb(t)
  let leaked
  await db.transaction(async (tx) => {
    leaked = tx
    await tx.execute(INSERT, ['ok'])
  })
  let nestedRan = false
  const calls = {
    execute: () => leaked.execute(INSERT, ['late']),
    executeBatch: () => leaked.executeBatch(INSERT, [['late batch']]),
    select: () => leaked.select('SELECT v FROM t'),
    selectOne: () => leaked.selectOne('SELECT v FROM t'),
    selectBytes: () => leaked.selectBytes('SELECT v FROM t'),
    transaction: () =>
      leaked.transaction(async (sp) => {
        nestedRan = true
        await sp.execute(INSERT, ['late nested'])
      }),
  }
  for (const [name, call] of Object.entries(calls)) {
    const e = await expectReject(call, ResqliteError, 'ERR_TRANSACTION_FINISHED', /finish/i)
    assert.ok(e, name)
  }
  // leaked from a rolled-back transaction
  let leaked2
  await rejectionOf(
    db.transaction(async (tx) => {
      leaked2 = tx
      throw new Error('roll back')
    }),
  )
  await expectReject(() => leaked2.execute(INSERT, ['late 2']), ResqliteError, 'ERR_TRANSACTION_FINISHED', /finish/i)
  await expectReject(
    () =>
      leaked2.transaction(async () => {
        nestedRan = true
      }),
    ResqliteError,
    'ERR_TRANSACTION_FINISHED',
    /finish/i,
  )
  // a leaked tx used while another transaction is open must not write into that one
  await db.transaction(async (tx) => {
    await expectReject(() => leaked.execute(INSERT, ['late 3']), ResqliteError, 'ERR_TRANSACTION_FINISHED', /finish/i)
    await tx.execute(INSERT, ['second'])
  })
  // a nested tx leaked while its parent is still open
  await db.transaction(async (tx) => {
    let inner
    await tx.transaction(async (sp) => {
      inner = sp
      await sp.execute(INSERT, ['inner'])
    })
    await expectReject(
      () => inner.execute(INSERT, ['late inner']),
      ResqliteError,
      'ERR_TRANSACTION_FINISHED',
      /finish/i,
    )
    await expectReject(() => inner.select('SELECT v FROM t'), ResqliteError, 'ERR_TRANSACTION_FINISHED', /finish/i)
    await expectReject(
      () =>
        inner.transaction(async () => {
          nestedRan = true
        }),
      ResqliteError,
      'ERR_TRANSACTION_FINISHED',
      /finish/i,
    )
    await tx.execute(INSERT, ['outer after inner'])
  })
  assert.equal(nestedRan, false, 'a nested body on a finished parent must not run')
  assert.deepStrictEqual(await values(db), ['ok', 'second', 'inner', 'outer after inner'])
})

test('bad options: unknown mode, mode on a nested transaction, a non-AbortSignal signal', T, async (t) => {
  const db = await tdb(t)
  let ran = false
  const body = async (tx) => {
    ran = true
    await tx.execute(INSERT, ['must not commit'])
  }
  const e = await rejectionOf(db.transaction(body, { mode: 'weird' }))
  assert.ok(e instanceof TypeError || e instanceof RangeError, `expected TypeError or RangeError, got ${e?.stack ?? e}`)
  assert.match(String(e.code), /^ERR_(INVALID_ARG_VALUE|INVALID_ARG_TYPE|OUT_OF_RANGE)$/)
  assert.match(e.message, /weird/)
  assert.match(e.message, /mode/)
  await expectReject(() => db.transaction(body, { mode: 5 }), TypeError, /^ERR_INVALID_ARG_(TYPE|VALUE)$/, /mode/)
  await expectReject(() => db.transaction(body, { signal: 'abort' }), TypeError, 'ERR_INVALID_ARG_TYPE', /signal/)
  await expectReject(() => db.transaction(body, 'immediate'), TypeError, 'ERR_INVALID_ARG_TYPE', /options/)
  assert.equal(ran, false, 'the body must not run when the options are bad')
  await db.transaction(async (tx) => {
    await expectReject(
      () =>
        tx.transaction(
          async (sp) => {
            ran = true
            await sp.execute(INSERT, ['nested must not run'])
          },
          { mode: 'immediate' },
        ),
      TypeError,
      /^ERR_INVALID_ARG_(TYPE|VALUE)$/,
      /mode/,
    )
    await tx.execute(INSERT, ['outer'])
  })
  assert.equal(ran, false)
  assert.deepStrictEqual(await values(db), ['outer'])
})

test(
  'executeBatch with a ragged parameter set: ERR_PARAMETER_COUNT naming the set, nothing from the batch applied',
  T,
  async (t) => {
    const db = await tdb(t)
    const sql = 'INSERT INTO t (id, v) VALUES (?, ?)'
    const ragged = [[1, 'a'], [2], [3, 'c']]
    const SET_2 = /parameter set 2\b|paramSets\[1\]/
    await expectReject(() => db.executeBatch(sql, ragged), ResqliteError, 'ERR_PARAMETER_COUNT', SET_2)
    assert.deepStrictEqual(await values(db), [])
    await db.transaction(async (tx) => {
      await tx.execute(sql, [10, 'before'])
      await expectReject(() => tx.executeBatch(sql, ragged), ResqliteError, 'ERR_PARAMETER_COUNT', SET_2)
      assert.deepStrictEqual(await tx.select('SELECT id FROM t ORDER BY id'), [{ id: 10 }])
      // a batch failing on its third set leaves none of its first two rows
      await expectReject(
        () =>
          tx.executeBatch(sql, [
            [1, 'a'],
            [2, 'b'],
            [10, 'dup'],
          ]),
        ResqliteError,
        'SQLITE_CONSTRAINT_PRIMARYKEY',
      )
      assert.deepStrictEqual(await tx.select('SELECT id FROM t ORDER BY id'), [{ id: 10 }])
      // routed db.executeBatch likewise
      await expectReject(() => db.executeBatch(sql, ragged), ResqliteError, 'ERR_PARAMETER_COUNT', SET_2)
      await tx.execute(sql, [11, 'after'])
    })
    assert.deepStrictEqual(await values(db), ['before', 'after'])
  },
)

test('executeBatch with no parameter sets resolves { changes: 0 }, inside and outside a transaction', T, async (t) => {
  const db = await tdb(t)
  assert.deepStrictEqual(await db.executeBatch(INSERT, []), { changes: 0 })
  const r = await db.transaction(async (tx) => {
    await tx.execute(INSERT, ['x'])
    const empty = await tx.executeBatch(INSERT, [])
    await tx.execute(INSERT, ['y'])
    return empty
  })
  assert.deepStrictEqual(r, { changes: 0 })
  assert.deepStrictEqual(await values(db), ['x', 'y'])
})

test('db.transaction after close() rejects ERR_DATABASE_CLOSED without running the body', T, async (t) => {
  const { db } = await openTxDb(t)
  await db.close()
  let ran = false
  await expectReject(
    () =>
      db.transaction(async () => {
        ran = true
      }),
    ResqliteError,
    'ERR_DATABASE_CLOSED',
    /closed/,
  )
  await turns()
  assert.equal(ran, false)
})

// ───────────────────────────── executeBatch joins the transaction ─────────────────────────────

test(
  'executeBatch inside a transaction joins it: visible to the tx, not outside until COMMIT, rolled back with it',
  T,
  async (t) => {
    const db = await tdb(t)
    const runOutside = outsideContext()
    await db.execute(INSERT, ['pre'])
    await db.transaction(async (tx) => {
      assert.deepStrictEqual(await tx.executeBatch(INSERT, [['b1'], ['b2'], ['b3']]), { changes: 3 })
      assert.deepStrictEqual(await db.executeBatch(INSERT, [['r1'], ['r2']]), { changes: 2 }) // routed
      assert.deepStrictEqual(
        (await tx.select('SELECT v FROM t ORDER BY id')).map((r) => r.v),
        ['pre', 'b1', 'b2', 'b3', 'r1', 'r2'],
      )
      assert.deepStrictEqual(await runOutside(() => values(db)), ['pre'])
      const many = Array.from({ length: 2000 }, (_, i) => [`m${i}`])
      assert.deepStrictEqual(await tx.executeBatch(INSERT, many), { changes: 2000 })
      assert.deepStrictEqual(await runOutside(() => count(db)), 1)
    })
    assert.equal(await count(db), 2006)

    const boom = new Error('roll back the batches')
    const err = await rejectionOf(
      db.transaction(async (tx) => {
        await tx.executeBatch(INSERT, [['x1'], ['x2']])
        await tx.transaction(async (sp) => sp.executeBatch(INSERT, [['x3']]))
        throw boom
      }),
    )
    assert.equal(err, boom)
    assert.equal(await count(db), 2006)
    // a batch inside a savepoint that rolls back goes with the savepoint only
    await db.transaction(async (tx) => {
      await rejectionOf(
        tx.transaction(async (sp) => {
          await sp.executeBatch(INSERT, [['sp1'], ['sp2']])
          throw new Error('savepoint only')
        }),
      )
      await tx.executeBatch(INSERT, [['kept']])
    })
    const last = await db.select('SELECT v FROM t ORDER BY id DESC LIMIT 2')
    assert.deepStrictEqual(last, [{ v: 'kept' }, { v: 'm1999' }])
  },
)

// ───────────────────────────── more edges ─────────────────────────────

test('statements and savepoints the body started but did not await are part of the transaction', T, async (t) => {
  const db = await tdb(t)
  let pending
  const r = await withTimeout(
    db.transaction(async (tx) => {
      pending = [
        tx.execute(INSERT, ['not awaited']),
        tx.transaction(async (sp) => {
          await sleep(20)
          await sp.execute(INSERT, ['savepoint not awaited'])
          return 'sp'
        }),
        db.execute(INSERT, ['routed, not awaited']),
      ]
      return 'returned early'
    }),
    5000,
    'a transaction with un-awaited statements',
  )
  assert.equal(r, 'returned early')
  const settled = await Promise.allSettled(pending)
  for (const s of settled) assert.equal(s.status, 'fulfilled', `${s.reason?.stack ?? ''}`)
  assert.equal(settled[1].value, 'sp')
  assert.deepStrictEqual(await values(db), ['not awaited', 'savepoint not awaited', 'routed, not awaited'])
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

test(
  'close() while a transaction is open waits for it to commit; calls from outside after close() reject',
  T,
  async (t) => {
    const { db, file } = await openTxDb(t)
    await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
    const reached = deferred()
    const release = deferred()
    const txp = track(
      db.transaction(async (tx) => {
        await tx.execute(INSERT, ['before close'])
        reached.resolve()
        await release.promise
        await tx.execute(INSERT, ['after close']) // the open transaction may still finish its work
        await db.execute(INSERT, ['routed after close'])
        return (await tx.selectOne('SELECT count(*) AS n FROM t')).n
      }),
    )
    await withTimeout(reached.promise, 5000, 'the body')
    const closing = track(db.close())
    await expectReject(
      () => db.execute(INSERT, ['outside after close']),
      ResqliteError,
      'ERR_DATABASE_CLOSED',
      /closed/,
    )
    await expectReject(
      () => db.transaction(async (tx) => tx.execute(INSERT, ['tx after close'])),
      ResqliteError,
      'ERR_DATABASE_CLOSED',
      /closed/,
    )
    await sleep(50)
    assert.equal(closing.settled, false, 'close() finished while a transaction was still open')
    release.resolve()
    assert.equal(await withTimeout(txp.promise, 5000, 'the transaction open at close()'), 3)
    await withTimeout(closing.promise, 5000, 'close()')
    const reopened = await Database.open(file)
    try {
      assert.deepStrictEqual(await values(reopened), ['before close', 'after close', 'routed after close'])
    } finally {
      await reopened.close()
    }
  },
)

test('db.transaction on a readonly database rejects ERR_DATABASE_READONLY without running the body', T, async (t) => {
  const { db, file } = await openTxDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  const ro = await Database.open(file, { readonly: true, readers: 1 })
  t.after(() => ro.close())
  let ran = false
  await expectReject(
    () =>
      ro.transaction(async () => {
        ran = true
      }),
    ResqliteError,
    'ERR_DATABASE_READONLY',
    /readonly|read-only/i,
  )
  await turns()
  assert.equal(ran, false)
  assert.deepStrictEqual(await ro.select('SELECT count(*) AS n FROM t'), [{ n: 0 }])
})

test('a db.* call from the async context of a finished transaction never joins a later transaction', T, async (t) => {
  const db = await tdb(t)
  let inFirstBody
  await db.transaction(async (tx) => {
    inFirstBody = AsyncLocalStorage.snapshot() // e.g. a callback scheduled in the body that runs later
    await tx.execute(INSERT, ['first'])
  })
  const boom = new Error('the second transaction rolls back')
  let leaked
  const err = await rejectionOf(
    transactionWithin(
      db,
      async (tx) => {
        leaked = track(inFirstBody(() => db.execute(INSERT, ['leaked'])))
        await sleep(20)
        assert.deepStrictEqual(
          (await tx.select('SELECT v FROM t ORDER BY id')).map((r) => r.v),
          ['first'],
          "a call from a finished transaction's context joined another transaction",
        )
        throw boom
      },
      5000,
      'the second transaction',
    ),
  )
  assert.equal(err, boom)
  await withTimeout(
    leaked.promise.catch(() => {}),
    5000,
    'the leaked call',
  )
  if (leaked.rejected) {
    assertError(leaked.error, ResqliteError, 'ERR_TRANSACTION_FINISHED')
    assert.deepStrictEqual(await values(db), ['first'])
  } else {
    assert.deepStrictEqual(await values(db), ['first', 'leaked']) // ran as a standalone write, after the rollback
  }
})
