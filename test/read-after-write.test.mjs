// A read sees every standalone write (execute, executeBatch) its own async flow issued before it,
// awaited or not (docs/api.md "Reads"): as with a synchronous driver, `db.execute(insert)`
// without await, then `await db.select(…)`, shows the row, whichever path the write took (alone
// or in a write group on the JS thread, on the writer thread, queued behind a transaction). A
// read of another flow (another request of a server) does not wait for that write.
import assert from 'node:assert/strict'
import test from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb } from './helpers.mjs'

const ROUNDS = 60

async function setUp(t, options) {
  const db = await openDb(t, options)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  await db.execute('CREATE TABLE big (x)')
  await db.execute(
    'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) INSERT INTO big SELECT i FROM n',
  )
  return db
}

const READS = {
  select: async (db) => (await db.select('SELECT count(*) AS n FROM t'))[0].n,
  selectOne: async (db) => (await db.selectOne('SELECT count(*) AS n FROM t')).n,
  selectBytes: async (db) => JSON.parse(await db.selectBytes('SELECT count(*) AS n FROM t'))[0].n,
  iterate: async (db) => {
    for await (const row of db.iterate('SELECT count(*) AS n FROM t')) return row.n
  },
}

const WRITES = {
  // A bounded insert alone: on the JS thread when the writer is idle.
  'one insert': (db, i) => [db.execute('INSERT INTO t (v) VALUES (?)', [i])],
  // Several issued together: a write group (JS thread) or the writer thread's group commit.
  'three inserts': (db, i) => [
    db.execute('INSERT INTO t (v) VALUES (?)', [i]),
    db.execute('INSERT INTO t (v) VALUES (?)', [i]),
    db.execute('INSERT INTO t (v) VALUES (?)', [i]),
  ],
  // Not bounded (it scans a table): on the writer thread.
  'insert from a scan': (db, i) => [db.execute('INSERT INTO t (v) SELECT ? FROM big WHERE x = 7', [i])],
  executeBatch: (db, i) => [db.executeBatch('INSERT INTO t (v) VALUES (?)', [[i], [i]])],
}

for (const inlineBudget of [0.1, 0]) {
  for (const [writeName, write] of Object.entries(WRITES)) {
    test(`a read sees the writes issued before it, not awaited (${writeName}, inlineBudget ${inlineBudget})`, async (t) => {
      const db = await setUp(t, { inlineBudget })
      let expected = 0
      for (let i = 0; i < ROUNDS; i++) {
        for (const [readName, read] of Object.entries(READS)) {
          const writes = write(db, i)
          const changes = writeName === 'executeBatch' ? 2 : writes.length
          expected += changes
          const seen = await read(db)
          assert.equal(seen, expected, `${readName} after ${writeName}, round ${i}`)
          await Promise.all(writes)
        }
      }
    })
  }
}

test('a read sees a write queued behind a transaction that was not awaited', async (t) => {
  const db = await setUp(t)
  for (let i = 0; i < 20; i++) {
    const tx = db.transaction(async (tx) => {
      await tx.execute('INSERT INTO t (v) VALUES (?)', [i])
      await new Promise((r) => setTimeout(r, 2))
      await tx.execute('INSERT INTO t (v) VALUES (?)', [i])
    })
    const write = db.execute('INSERT INTO t (v) VALUES (?)', [-i])
    const n = (await db.selectOne('SELECT count(*) AS n FROM t')).n
    assert.equal(n, 3 * (i + 1), `round ${i}: the queued write (and so the transaction before it) was not seen`)
    await Promise.all([tx, write])
  }
})

test('columns() sees a table whose CREATE was issued before it', async (t) => {
  const db = await setUp(t)
  db.execute('CREATE TABLE later (a, b TEXT)')
  assert.deepEqual(await db.columns('SELECT * FROM later'), [
    { name: 'a', declaredType: null },
    { name: 'b', declaredType: 'TEXT' },
  ])
})

test('a read waiting for an earlier write rejects at once when its signal aborts', async (t) => {
  const db = await setUp(t, { inlineBudget: 0 })
  // A slow write on the writer thread (a cross join of 20,000 × 2,000 rows).
  let written = false
  const slow = db.execute('INSERT INTO t (v) SELECT count(*) FROM big a, (SELECT x FROM big LIMIT 2000) b').then(() => {
    written = true
  })
  const controller = new AbortController()
  const read = db.select('SELECT count(*) AS n FROM t', [], { signal: controller.signal })
  setTimeout(() => controller.abort(), 5)
  await expectReject(() => read, Error, 'ABORT_ERR')
  // In order, not timed: the read rejected while the write still ran.
  assert.equal(written, false, 'the abort waited for the write')
  await slow
  assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, 1)
})

test('a failed write issued before a read does not fail the read', async (t) => {
  const db = await setUp(t)
  const failed = db.execute('INSERT INTO t (id, v) VALUES (1, 1), (1, 2)')
  failed.catch(() => {})
  assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, 0)
  await expectReject(() => failed, ResqliteError, 'SQLITE_CONSTRAINT_PRIMARYKEY')
})

test('a write issued before a call, in the caller, is seen by a read in the callee and after a timer', async (t) => {
  const db = await setUp(t, { inlineBudget: 0 })
  const count = async () => (await db.selectOne('SELECT count(*) AS n FROM t')).n
  for (let i = 0; i < 20; i++) {
    db.execute('INSERT INTO t (v) SELECT ? FROM big WHERE x = 7', [i])
    assert.equal(await count(), 2 * i + 1)
    db.execute('INSERT INTO t (v) SELECT ? FROM big WHERE x = 7', [i])
    assert.equal(await new Promise((resolve) => setTimeout(() => resolve(count()), 0)), 2 * i + 2)
  }
})

test('a read of another flow does not wait for a long write: reads run beside the writer', async (t) => {
  const db = await setUp(t, { inlineBudget: 0 })
  let writeDone = false
  const started = deferred()
  // Another flow, as another request of a server: it began before the write was issued.
  const other = (async () => {
    await started.promise
    const n = (await db.selectOne('SELECT count(*) AS n FROM t')).n
    return { n, whileWriting: !writeDone }
  })()
  const slow = db.execute('INSERT INTO t (v) SELECT count(*) FROM big a, (SELECT x FROM big LIMIT 3000) b').then(() => {
    writeDone = true
  })
  setTimeout(() => started.resolve(), 5)
  const { n, whileWriting } = await other
  assert.equal(n, 0)
  assert.ok(whileWriting, "the other flow's read waited for the write")
  // This flow issued it: its read waits and sees it.
  assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, 1)
  await slow
})

test("a read after its flow's own write, committed in a write group, does not wait for another flow's long write that the group sent on to the writer thread", async (t) => {
  const db = await setUp(t)
  const SLOW = 'INSERT INTO t (v) SELECT count(*) FROM big a, (SELECT x FROM big LIMIT 3000) b'
  const groupsBefore = (await db.diagnostics()).inline.groups
  let slowDone = false
  const start = deferred()
  // Three flows, as three requests of a server, each writing once in the same microtask round:
  // the first write runs alone, the second opens a write group, the third (not bounded) joins it
  // and goes on to the writer thread when the group runs.
  const flow = (body) =>
    (async () => {
      await start.promise
      return body()
    })()
  const first = flow(() => db.execute('INSERT INTO t (v) VALUES (0)'))
  const own = flow(async () => {
    await db.execute('INSERT INTO t (v) VALUES (1)')
    const n = (await db.selectOne('SELECT count(*) AS n FROM t')).n
    return { n, whileSlow: !slowDone }
  })
  const slow = flow(async () => {
    await db.execute(SLOW)
    slowDone = true
  })
  start.resolve()
  const { n, whileSlow } = await own
  await Promise.all([first, slow])
  assert.equal((await db.diagnostics()).inline.groups, groupsBefore + 1, 'the second write opened a group')
  assert.equal(n, 2)
  assert.ok(whileSlow, "the read waited for another flow's write")
})

function deferred() {
  let resolve
  const promise = new Promise((r) => {
    resolve = r
  })
  return { promise, resolve }
}

test("a flow's writes to several databases, not awaited: a read of each sees that database's write (one store holds every database's mark)", async (t) => {
  // Each database's write goes to its writer thread (a scan: not bounded), so it is still
  // pending when the flow writes to the next and when it reads.
  const dbs = [await setUp(t, { inlineBudget: 0 }), await setUp(t), await setUp(t, { inlineBudget: 0 })]
  const count = async (db) => (await db.selectOne('SELECT count(*) AS n FROM t')).n
  for (let i = 0; i < 10; i++) {
    const writes = dbs.map((db) => db.execute('INSERT INTO t (v) SELECT ? FROM big WHERE x = 7', [i]))
    // The first database's mark is the oldest of the flow's: read it first, while its write
    // may still be running.
    for (const db of dbs) assert.equal(await count(db), i + 1)
    await Promise.all(writes)
  }
})
