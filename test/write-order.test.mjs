// Write ordering (docs/transactions.md): every write — standalone execute/executeBatch calls and
// transactions, from anywhere — runs in call order (FIFO) and nothing is lost or duplicated.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { deferred, openTxDb, prng, sleep, T, track, turns, withTimeout } from './tx-helpers.mjs'

const INSERT = 'INSERT INTO log (seq, part, kind) VALUES (?, ?, ?)'

async function logDb(t) {
  const { db } = await openTxDb(t)
  await db.execute(
    'CREATE TABLE log (id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, part INTEGER NOT NULL, kind TEXT NOT NULL)',
  )
  return db
}

test(
  '200 interleaved transactions and standalone writes from 20 concurrent tasks commit in call order',
  T,
  async (t) => {
    const db = await logDb(t)
    const seed = (Date.now() ^ (process.pid << 8)) >>> 0
    const rand = prng(seed)
    const where = `(seed ${seed})`
    async function pause() {
      const r = rand()
      if (r < 0.25) return
      if (r < 0.5) await Promise.resolve()
      else if (r < 0.8) await turns(1)
      else await sleep(rand() * 2)
    }
    let next = 0
    const issued = [] // { seq, rows: [[seq, part, kind]] } for each op expected to commit
    const rolledBack = []
    let nestedCount = 0

    async function task() {
      const pending = []
      for (let i = 0; i < 10; i++) {
        await pause()
        const seq = next++ // taken at call time: the op is issued right below, synchronously
        const r = rand()
        let p
        if (r < 0.3) {
          p = db.execute(INSERT, [seq, 0, 'execute'])
          issued.push({ seq, rows: [[seq, 0, 'execute']] })
        } else if (r < 0.45) {
          const sets = Array.from({ length: 1 + Math.floor(rand() * 5) }, (_, k) => [seq, k, 'batch'])
          p = db.executeBatch(INSERT, sets)
          issued.push({ seq, rows: sets })
        } else if (r < 0.9) {
          const parts = 1 + Math.floor(rand() * 3)
          const nested = rand() < 0.3
          const rows = Array.from({ length: parts }, (_, k) => [seq, k, 'tx'])
          if (nested) rows.push([seq, parts, 'tx nested'])
          p = db
            .transaction(async (tx) => {
              for (let k = 0; k < parts; k++) {
                await pause()
                await tx.execute(INSERT, [seq, k, 'tx'])
              }
              if (nested) {
                nestedCount++
                await tx.transaction(async (sp) => {
                  await pause()
                  await sp.execute(INSERT, [seq, parts, 'tx nested'])
                })
              }
              await pause()
              return seq
            })
            .then((v) => assert.equal(v, seq, `transaction ${seq} resolved with ${v}`))
          issued.push({ seq, rows })
        } else {
          p = db
            .transaction(async (tx) => {
              await tx.execute(INSERT, [seq, 0, 'rolled back'])
              await pause()
              throw new Error(`rollback ${seq}`)
            })
            .then(
              () => assert.fail(`transaction ${seq} should have rejected`),
              (e) => assert.equal(e.message, `rollback ${seq}`),
            )
          rolledBack.push(seq)
        }
        if (rand() < 0.5) await p
        else pending.push(p)
      }
      await Promise.all(pending)
    }

    await withTimeout(Promise.all(Array.from({ length: 20 }, () => task())), 25_000, `200 concurrent writes ${where}`)
    assert.equal(next, 200)
    assert.ok(issued.length > 100 && rolledBack.length > 0 && nestedCount > 0, `a poor mix of operations ${where}`)
    const expected = issued
      .sort((a, b) => a.seq - b.seq)
      .flatMap((op) => op.rows.map(([seq, part, kind]) => ({ seq, part, kind })))
    const rows = await db.select('SELECT seq, part, kind FROM log ORDER BY id')
    if (rows.length !== expected.length) {
      const got = new Map()
      for (const r of rows) got.set(`${r.seq}/${r.part}`, (got.get(`${r.seq}/${r.part}`) ?? 0) + 1)
      const lost = expected.filter((e) => !got.has(`${e.seq}/${e.part}`)).map((e) => `${e.seq}/${e.part}`)
      const dup = [...got].filter(([, n]) => n > 1).map(([k]) => k)
      assert.fail(
        `${rows.length} rows, expected ${expected.length} ${where}; lost: ${lost.join(' ')}; duplicated: ${dup.join(' ')}`,
      )
    }
    for (let i = 0; i < rows.length; i++) {
      if (rows[i].seq !== expected[i].seq || rows[i].part !== expected[i].part || rows[i].kind !== expected[i].kind) {
        assert.fail(
          `row ${i} is ${JSON.stringify(rows[i])}, expected ${JSON.stringify(expected[i])} ${where}: writes did not commit in call order\n` +
            `around it: ${JSON.stringify(rows.slice(Math.max(0, i - 3), i + 4))}`,
        )
      }
    }
    assert.deepStrictEqual(rows, expected)
  },
)

test('writes issued while a transaction body runs wait for it and then run in call order', T, async (t) => {
  const db = await logDb(t)
  const reached = deferred()
  const release = deferred()
  const log = []
  const outside = (async () => {
    await reached.promise // resumes in this (outside) context
    const ops = [
      db.execute(INSERT, [1, 0, 'execute']),
      db.transaction(async (tx) => {
        log.push('tx 2 enter')
        await sleep(5)
        await tx.execute(INSERT, [2, 0, 'tx'])
        log.push('tx 2 exit')
      }),
      db.executeBatch(INSERT, [
        [3, 0, 'batch'],
        [3, 1, 'batch'],
      ]),
      db.transaction(async (tx) => {
        log.push('tx 4 enter')
        await tx.execute(INSERT, [4, 0, 'tx'])
        log.push('tx 4 exit')
      }),
      db.execute(INSERT, [5, 0, 'execute']),
    ]
    return ops.map(track)
  })()
  const first = db.transaction(async (tx) => {
    log.push('tx 0 enter')
    await tx.execute(INSERT, [0, 0, 'tx'])
    reached.resolve()
    await release.promise
    await tx.execute(INSERT, [0, 1, 'tx'])
    log.push('tx 0 exit')
  })
  const ops = await withTimeout(outside, 5000, 'the outside writer task')
  await sleep(100)
  assert.deepStrictEqual(
    ops.map((o) => o.settled),
    [false, false, false, false, false],
    'writes settled while the transaction was open',
  )
  assert.deepStrictEqual(log, ['tx 0 enter'])
  release.resolve()
  await withTimeout(Promise.all([first, ...ops.map((o) => o.promise)]), 5000, 'the queued writes')
  assert.deepStrictEqual(log, ['tx 0 enter', 'tx 0 exit', 'tx 2 enter', 'tx 2 exit', 'tx 4 enter', 'tx 4 exit'])
  assert.deepStrictEqual(
    (await db.select('SELECT seq, part FROM log ORDER BY id')).map((r) => `${r.seq}/${r.part}`),
    ['0/0', '0/1', '1/0', '2/0', '3/0', '3/1', '4/0', '5/0'],
  )
})

test('writes queued behind a transaction settle before the writes issued once it committed', T, async (t) => {
  const db = await logDb(t)
  // The queued writes go to the writer thread as the transaction ends, and so do the later
  // ones; their completions can arrive in one batch, where the queued ones took more turns to
  // settle (10 of 30 rounds settled 4 and 5 first before the fix).
  for (let round = 0; round < 30; round++) {
    const settled = []
    const write = (seq) => db.execute(INSERT, [seq, round, 'execute']).then(() => settled.push(seq))
    const tx = db.transaction((tx) => tx.execute(INSERT, [0, round, 'tx']))
    const queued = [1, 2, 3].map(write)
    const later = tx.then(() => Promise.all([4, 5].map(write)))
    await Promise.all([...queued, later])
    assert.deepStrictEqual(settled, [1, 2, 3, 4, 5], `round ${round}`)
  }
})
