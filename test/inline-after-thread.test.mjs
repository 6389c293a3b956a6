// Inline work once the writer thread has finished its jobs, before their completions reach the
// JS thread (experiments/042; src/js-thread/js-thread.ts `writeInline`, the mailbox's WritesRunning word): a
// standalone write then runs inline and still settles after the writes sent before it; a read
// then runs on the writer's connection. And the rule that keeps reads off the readers while
// writes drop their page caches (`AFTER_WRITE_READS`).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { inlineCounts, PLACEMENT } from './inline-helpers.mjs'
import { assertError, rejectionOf, T, tdb } from './tx-helpers.mjs'

/** Holds the JS thread for `ms`: the engine's threads finish their jobs meanwhile, but nothing
 * they complete can reach this thread before it returns to the event loop. */
function holdThread(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/** Pushes `label` to `order` once `promise` settles, either way. */
function settleOrder(order, label, promise) {
  return promise.then(
    () => order.push(label),
    () => order.push(label),
  )
}

test(
  'a write issued after the writer thread finished, before its completion arrives, runs inline and settles after it',
  T,
  async (t) => {
    const db = await tdb(t, PLACEMENT)
    const before = await inlineCounts(db)
    const order = []
    // executeBatch always runs on the writer thread.
    const batch = db.executeBatch('INSERT INTO t (id, v) VALUES (?, ?)', [
      [1, 'a'],
      [2, 'b'],
    ])
    holdThread(200)
    const alone = db.execute('INSERT INTO t (id, v) VALUES (?, ?)', [3, 'c'])
    const settled = Promise.all([settleOrder(order, 'batch', batch), settleOrder(order, 'alone', alone)])
    assert.equal((await inlineCounts(db)).writes - before.writes, 1, 'the write ran on the JS thread')
    await settled
    assert.deepEqual(order, ['batch', 'alone'], 'writes settle in call order')
    assert.deepEqual(await batch, { changes: 2 })
    assert.deepEqual(await alone, { changes: 1, lastInsertRowid: 3 })
    assert.deepEqual(await db.select('SELECT id, v FROM t ORDER BY id'), [
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
      { id: 3, v: 'c' },
    ])
  },
)

test('such a write that fails rejects after the earlier write settles, with its own error', T, async (t) => {
  const db = await tdb(t, PLACEMENT)
  await db.execute('INSERT INTO t (id, v) VALUES (1, ?)', ['a'])
  const before = await inlineCounts(db)
  const order = []
  const batch = db.executeBatch('INSERT INTO t (id, v) VALUES (?, ?)', [[2, 'b']])
  holdThread(200)
  const failing = db.execute('INSERT INTO t (id, v) VALUES (?, ?)', [1, 'again'])
  const settled = Promise.all([settleOrder(order, 'batch', batch), settleOrder(order, 'failing', failing)])
  assert.equal((await inlineCounts(db)).writes - before.writes, 1, 'the failing write ran on the JS thread')
  await settled
  assert.deepEqual(order, ['batch', 'failing'])
  assertError(await rejectionOf(failing, 'the duplicate key'), ResqliteError, 'SQLITE_CONSTRAINT_PRIMARYKEY')
  assert.deepEqual(await batch, { changes: 1 })
  assert.deepEqual(await db.select('SELECT id, v FROM t ORDER BY id'), [
    { id: 1, v: 'a' },
    { id: 2, v: 'b' },
  ])
})

test('a read issued after the writer thread finished runs inline and sees the writes', T, async (t) => {
  const db = await tdb(t, PLACEMENT)
  const before = await inlineCounts(db)
  const batch = db.executeBatch('INSERT INTO t (id, v) VALUES (?, ?)', [
    [1, 'a'],
    [2, 'b'],
  ])
  holdThread(200)
  const read = db.selectOne('SELECT count(*) AS n FROM t')
  assert.equal((await inlineCounts(db)).runs - before.runs, 1, 'the read ran on the JS thread')
  assert.deepEqual(await read, { n: 2 })
  await batch
})

test('reads in flight on the readers keep new reads inline only for a while after a write', T, async (t) => {
  const db = await tdb(t, PLACEMENT)
  await db.execute('INSERT INTO t (id, v) VALUES (1, ?)', ['a'])
  const sql = 'SELECT v FROM t WHERE id = ?'
  /** Whether one read, issued while reads are in flight on the readers, runs on the JS thread. */
  const readWhileInFlight = async () => {
    const before = await inlineCounts(db)
    // 4 of these run inline, the rest on the readers; none of those completes before the
    // event loop turns, and the microtask below does not turn it.
    const together = Array.from({ length: 8 }, () => db.selectOne(sql, [1]))
    await Promise.resolve()
    const one = db.selectOne(sql, [1])
    assert.deepEqual(await Promise.all([...together, one]), Array(9).fill({ v: 'a' }))
    const runs = (await inlineCounts(db)).runs - before.runs
    assert.ok(runs === 4 || runs === 5, `4 of 8 reads issued together ran inline, then the one: ${runs} runs`)
    return runs === 5
  }
  assert.equal(await readWhileInFlight(), true, 'right after a write: inline (the readers caches are cold)')
  for (let i = 0; i < 40; i++) await db.selectOne(sql, [1])
  assert.equal(await readWhileInFlight(), false, '40 reads after the write: on the readers, beside the others')
  await db.execute('UPDATE t SET v = ? WHERE id = 1', ['a'])
  assert.equal(await readWhileInFlight(), true, 'after another write: inline again')
})

test(
  'every kind of writer job is counted out as it finishes: a write alone still runs inline after them',
  T,
  async (t) => {
    const db = await tdb(t, PLACEMENT)
    await db.executeBatch('INSERT INTO t (id, v) VALUES (?, ?)', [
      [1, 'a'],
      [2, 'b'],
    ])
    // An iteration inside a transaction (its pages are writer jobs), a failing batch, a
    // transaction rolled back by its body, a checkpoint through execute, and a rekey.
    await db.transaction(async (tx) => {
      const seen = []
      for await (const row of tx.iterate('SELECT id FROM t ORDER BY id', [], { pageRows: 1 })) seen.push(row.id)
      assert.deepEqual(seen, [1, 2])
    })
    await assert.rejects(db.executeBatch('INSERT INTO t (id, v) VALUES (?, ?)', [[1, 'again']]), ResqliteError)
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.execute('INSERT INTO t (id, v) VALUES (3, ?)', ['c'])
        throw new Error('roll back')
      }),
      /roll back/,
    )
    await db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    await db.rekey('a key')
    await db.rekey(null)
    // The first write after the TRUNCATE checkpoint starts the WAL over, on the writer thread.
    await db.execute('INSERT INTO t (id, v) VALUES (?, ?)', [4, 'd'])
    const before = await inlineCounts(db)
    await db.execute('INSERT INTO t (id, v) VALUES (?, ?)', [5, 'e'])
    assert.equal((await inlineCounts(db)).writes - before.writes, 1, 'the write ran on the JS thread')
    assert.deepEqual(await db.select('SELECT id FROM t ORDER BY id'), [{ id: 1 }, { id: 2 }, { id: 4 }, { id: 5 }])
  },
)
