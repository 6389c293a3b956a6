// Parallel readers, a free event loop, and concurrent writes.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { barrierExtension } from './barrier.mjs'
import { openDb } from './helpers.mjs'

// What runs at the same time is shown by test/barrier.mjs's barrier(n, ms), not timed: n
// statements inside it at once all get 1; a statement that waited for another's end would
// time out waiting for it and get 0. So these hold whatever the machine's load (the speed of
// parallel reads is the benchmark's: bench/lanes/reads.mjs "concurrent"). inlineBudget: 0 keeps
// every call off the JS thread, where a barrier would hold the event loop.
const WAIT_MS = 20_000
const barrierDb = (t, options) => openDb(t, { extensions: [barrierExtension()], inlineBudget: 0, ...options })
const barrier = (n, ms = WAIT_MS) => `SELECT barrier(${n}, ${ms}) AS met`

test('two reads with readers: 2 run at the same time', async (t) => {
  const db = await barrierDb(t, { readers: 2 })
  const both = await Promise.all([db.selectOne(barrier(2)), db.selectOne(barrier(2))])
  assert.deepStrictEqual(both, [{ met: 1 }, { met: 1 }])
})

test('with readers: 1, reads run one after the other (what the barrier check tells apart)', async (t) => {
  const db = await barrierDb(t, { readers: 1 })
  const both = await Promise.all([db.selectOne(barrier(2, 100)), db.selectOne(barrier(2, 100))])
  assert.deepStrictEqual(both, [{ met: 0 }, { met: 0 }])
})

test('a quick read is not queued behind slow reads while a reader is free', async (t) => {
  const db = await barrierDb(t, { readers: 3 })
  // Two reads that cannot finish until a third statement joins them hold two of the readers.
  let slowDone = 0
  const slow = [db.selectOne(barrier(3)), db.selectOne(barrier(3))].map((p) => p.then((r) => (slowDone++, r)))
  assert.deepStrictEqual(await db.select('SELECT 42 AS answer'), [{ answer: 42 }])
  assert.equal(slowDone, 0, 'the quick read waited for the slow ones')
  assert.deepStrictEqual(await db.selectOne(barrier(3)), { met: 1 })
  assert.deepStrictEqual(await Promise.all(slow), [{ met: 1 }, { met: 1 }])
})

/** Resolves after `count` turns of the event loop's timers, each a setTimeout of 1 ms. */
async function timerTurns(count) {
  for (let i = 0; i < count; i++) await sleep(1)
}

test('the event loop keeps running during a long read', async (t) => {
  const db = await barrierDb(t, { readers: 2 })
  let done = false
  const read = db.selectOne(barrier(2)).then((r) => {
    done = true
    return r
  })
  // The read cannot end until the statement below joins it: meanwhile timers run.
  await timerTurns(20)
  assert.equal(done, false)
  assert.deepStrictEqual(await db.selectOne(barrier(2)), { met: 1 })
  assert.deepStrictEqual(await read, { met: 1 })
})

test('the event loop keeps running during a long write, and reads are not blocked by it', async (t) => {
  const db = await barrierDb(t, { readers: 2 })
  await db.execute('CREATE TABLE small (v); INSERT INTO small VALUES (1), (2); CREATE TABLE big (x INTEGER)')
  let writeDone = false
  // A reader of its own, as another request of a server: started before the write, it does not
  // wait for it (a read waits only for the writes its own flow issued: test/read-after-write).
  let go
  const gate = new Promise((resolve) => {
    go = resolve
  })
  const reading = (async () => {
    await gate
    return db.selectOne(
      `SELECT (SELECT count(*) FROM small) AS s, (SELECT count(*) FROM big) AS b, barrier(2, ${WAIT_MS}) AS met`,
    )
  })()
  // The write cannot commit until the read joins its barrier: the read answers while the writer
  // is busy, from the last committed state, and timers run meanwhile.
  const write = db.execute(`INSERT INTO big (x) ${barrier(2)}`).then((r) => {
    writeDone = true
    return r
  })
  await timerTurns(20)
  assert.equal(writeDone, false)
  go()
  const during = await reading
  assert.deepStrictEqual(during, { s: 2, b: 0, met: 1 })
  assert.equal((await write).changes, 1)
  assert.deepStrictEqual(await db.select('SELECT x FROM big'), [{ x: 1 }])
})

test('many concurrent execute calls all resolve with distinct lastInsertRowid', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)')
  const N = 300
  const results = await Promise.all(
    Array.from({ length: N }, (_, i) => db.execute('INSERT INTO t (v) VALUES (?)', [i])),
  )
  for (const r of results) assert.equal(r.changes, 1)
  const ids = results.map((r) => r.lastInsertRowid)
  assert.equal(new Set(ids).size, N, 'lastInsertRowid values must be distinct')
  assert.deepStrictEqual(
    [...ids].sort((a, b) => a - b),
    Array.from({ length: N }, (_, i) => i + 1),
  )
  // each call's rowid is the row holding its own value
  const rows = await db.select('SELECT id, v FROM t ORDER BY id')
  assert.equal(rows.length, N)
  const byId = new Map(rows.map((r) => [r.id, r.v]))
  results.forEach((r, i) => {
    assert.equal(byId.get(r.lastInsertRowid), i, `call ${i} got rowid ${r.lastInsertRowid}`)
  })
})

test('writes issued without awaiting apply in call order', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)')
  const calls = []
  for (let i = 0; i < 100; i++) {
    calls.push(
      i % 10 === 9
        ? db.executeBatch('INSERT INTO t (v) VALUES (?)', [[i]])
        : db.execute('INSERT INTO t (v) VALUES (?)', [i]),
    )
  }
  await Promise.all(calls)
  const rows = await db.select('SELECT v FROM t ORDER BY id')
  assert.deepStrictEqual(
    rows.map((r) => r.v),
    Array.from({ length: 100 }, (_, i) => i),
  )
})

test('a read issued after a write resolved sees that write', async (t) => {
  const db = await openDb(t, { readers: 2 })
  await db.execute('CREATE TABLE t (v INTEGER)')
  for (let i = 1; i <= 40; i++) {
    await db.execute('INSERT INTO t (v) VALUES (?)', [i])
    const [a, b] = await Promise.all([
      db.selectOne('SELECT count(*) AS n FROM t'),
      db.selectOne('SELECT max(v) AS m FROM t'),
    ])
    assert.deepStrictEqual([a, b], [{ n: i }, { m: i }])
  }
})

test('many concurrent reads of different shapes all resolve correctly', async (t) => {
  const db = await openDb(t, { readers: 2 })
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT)')
  await db.executeBatch(
    'INSERT INTO t (s) VALUES (?)',
    Array.from({ length: 200 }, (_, i) => [`s${i}`]),
  )
  const calls = []
  for (let i = 0; i < 200; i++) {
    const k = i % 3
    if (k === 0)
      calls.push(
        db
          .select('SELECT id, s FROM t WHERE id = ?', [i + 1])
          .then((r) => assert.deepStrictEqual(r, [{ id: i + 1, s: `s${i}` }])),
      )
    if (k === 1)
      calls.push(
        db.selectOne('SELECT s FROM t WHERE id = ?', [i + 1]).then((r) => assert.deepStrictEqual(r, { s: `s${i}` })),
      )
    if (k === 2)
      calls.push(
        db
          .selectBytes('SELECT id FROM t WHERE id <= ?', [i])
          .then((b) => assert.equal(JSON.parse(b.toString()).length, i)),
      )
  }
  await Promise.all(calls)
})

test('large results decode correctly, also several at once', async (t) => {
  const db = await openDb(t, { readers: 2 })
  const N = 60_000
  await db.execute(`CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT, r REAL, b BLOB);
    WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${N})
    INSERT INTO t SELECT x, 'row' || x, x / 8.0, CASE WHEN x % 1000 = 0 THEN randomblob(4) END FROM c;`)
  const [a, b, c, bytes] = await Promise.all([
    db.select('SELECT id, s, r FROM t ORDER BY id'),
    db.select('SELECT r AS rr, id AS i FROM t ORDER BY id DESC'),
    db.select('SELECT s AS only FROM t WHERE id % 2 = 0 ORDER BY id'),
    db.selectBytes('SELECT id, s FROM t ORDER BY id'),
  ])
  assert.equal(a.length, N)
  assert.equal(b.length, N)
  assert.equal(c.length, N / 2)
  for (let i = 0; i < N; i++) {
    const id = i + 1
    const ra = a[i]
    if (ra.id !== id || ra.s !== `row${id}` || ra.r !== id / 8 || Object.keys(ra).join() !== 'id,s,r') {
      assert.fail(`select #1 row ${i}: ${JSON.stringify(ra)}`)
    }
    const rb = b[i]
    if (rb.i !== N - i || rb.rr !== (N - i) / 8 || Object.keys(rb).join() !== 'rr,i') {
      assert.fail(`select #2 row ${i}: ${JSON.stringify(rb)}`)
    }
  }
  for (let i = 0; i < N / 2; i++) {
    if (c[i].only !== `row${2 * (i + 1)}` || Object.keys(c[i]).join() !== 'only')
      assert.fail(`select #3 row ${i}: ${JSON.stringify(c[i])}`)
  }
  assert.equal(bytes.toString(), JSON.stringify(a.map(({ id, s }) => ({ id, s }))))
  // a large result with BLOBs, and selectOne of a large result
  const blobs = await db.select('SELECT id, b FROM t')
  assert.equal(blobs.filter((r) => Buffer.isBuffer(r.b) && r.b.length === 4).length, N / 1000)
  assert.deepStrictEqual(await db.selectOne('SELECT id, s FROM t ORDER BY id'), { id: 1, s: 'row1' })
})
