// Write groups (src/js-thread/write-group.ts and js-thread.ts, experiments/049, 050): standalone
// writes issued while the writer is idle wait until the microtask queue runs dry, then run on
// the JS thread in one transaction and commit together; reads issued meanwhile run at once in
// the group's snapshot.
// Covered: writes awaited one at a time run alone; writes issued together share one commit, each
// with its own result; writes settle at the commit, in call order, reads at once with what was
// committed; a client whose reads settled at once joins the group with its next write; a commit
// by another database on this thread ends the group's snapshot; another connection's commit
// after the snapshot was taken; other connections see nothing before the commit; SQLite's own
// rollback in the middle, and statements that cannot join, leave every outcome as it is alone;
// transactions and live queries that start while a group is open; at most 16 writes a group;
// none with inlineBudget: 0.
import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { test } from 'node:test'
import { Database } from '../dist/esm/index.mjs'
import { NO_INLINE_RUNS, outcome, tempDir } from './helpers.mjs'
import { inlineCounts, PLACEMENT } from './inline-helpers.mjs'
import { collect } from './live-helpers.mjs'

const INSERT = 'INSERT INTO t (v) VALUES (?)'

/** A database with table t, whose last writes were issued together: the next writes issued
 * together group from the first (a write alone after writes one at a time runs alone). */
async function open(t, options = {}) {
  const file = path.join(tempDir(t), 'groups.db')
  const db = await Database.open(file, { ...PLACEMENT, ...options })
  t.after(() => db.close())
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v UNIQUE); CREATE TABLE warm (v)')
  await Promise.all([db.execute('INSERT INTO warm VALUES (1)'), db.execute('INSERT INTO warm VALUES (2)')])
  return { db, file }
}

/** What `fn` gave, and how many groups and writes ran on the JS thread meanwhile. */
async function counted(db, fn) {
  const before = await inlineCounts(db)
  const result = await fn()
  const after = await inlineCounts(db)
  return { result, groups: after.groups - before.groups, writes: after.writes - before.writes }
}

/** Settles `promises` recording the order they settle in, by index. */
/** Runs calls as another client would: in an async flow that began before this test's writes,
 * so its reads do not wait for them (a read waits only for its own flow's writes). */
function otherClient() {
  return AsyncLocalStorage.snapshot()
}

async function settleOrder(promises) {
  const order = []
  await Promise.allSettled(promises.map((p, i) => p.finally(() => order.push(i))))
  return order
}

test('writes issued together commit as one group on the JS thread, each with its own result', async (t) => {
  const { db } = await open(t)
  const { result, groups, writes } = await counted(db, () =>
    Promise.all(Array.from({ length: 10 }, (_, i) => db.execute(INSERT, [`v${i}`]))),
  )
  assert.deepStrictEqual(
    result,
    Array.from({ length: 10 }, (_, i) => ({ changes: 1, lastInsertRowid: i + 1 })),
  )
  assert.deepStrictEqual({ groups, writes }, { groups: 1, writes: 10 })
  assert.equal((await inlineCounts(db)).commits, 0, 'no transaction COMMIT')
  assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, 10)
})

test('writes awaited one at a time run alone; of writes issued together after them, the first runs alone', async (t) => {
  const { db } = await open(t)
  await db.execute(INSERT, ['solo']) // a group of one: writes now look one at a time
  const { groups, writes } = await counted(db, async () => {
    for (let i = 0; i < 5; i++) await db.execute(INSERT, [i])
  })
  assert.deepStrictEqual({ groups, writes }, { groups: 0, writes: 5 })
  const settledAt = []
  const before = await inlineCounts(db)
  const together = [db.execute(INSERT, ['a']), db.execute(INSERT, ['b']), db.execute(INSERT, ['c'])]
  for (const [i, p] of together.entries()) p.then(() => settledAt.push(i))
  await null
  assert.deepStrictEqual(settledAt, [0], 'the first committed alone; the other two wait for their group')
  await Promise.all(together)
  const after = await inlineCounts(db)
  assert.deepStrictEqual(
    { groups: after.groups - before.groups, writes: after.writes - before.writes },
    { groups: 1, writes: 3 },
  )
  // Those three were issued together: the next writes issued together group from the first.
  const next = await counted(db, () => Promise.all([db.execute(INSERT, ['d']), db.execute(INSERT, ['e'])]))
  assert.deepStrictEqual({ groups: next.groups, writes: next.writes }, { groups: 1, writes: 2 })
  assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, 11)
})

test('a group settles at its commit, in call order; a read issued beside it settles at once, with what was committed', async (t) => {
  const { db } = await open(t)
  const client = otherClient()
  const settledEarly = []
  const calls = [
    db.execute(INSERT, ['a']),
    client(() => db.selectOne('SELECT count(*) AS n FROM t')),
    db.execute(INSERT, ['a']), // UNIQUE: fails alone, and in the group
    db.execute(INSERT, ['b']),
    client(() => db.select('SELECT v FROM t ORDER BY id')),
  ]
  for (const [i, p] of calls.entries()) {
    const record = () => settledEarly.push(i)
    p.then(record, record)
  }
  // Within the microtasks queued before the group's commit only the reads settle.
  await null
  assert.deepStrictEqual(settledEarly, [1, 4])
  assert.deepStrictEqual(await settleOrder(calls), [1, 4, 0, 2, 3])
  const outcomes = await Promise.all(calls.map(outcome))
  assert.deepStrictEqual(outcomes[0], { value: { changes: 1, lastInsertRowid: 1 } })
  assert.deepStrictEqual(outcomes[1], { value: { n: 0 } }, 'no write of the group was acknowledged')
  assert.equal(outcomes[2].error?.code, 'SQLITE_CONSTRAINT_UNIQUE')
  assert.deepStrictEqual(outcomes[3], { value: { changes: 1, lastInsertRowid: 2 } })
  assert.deepStrictEqual(outcomes[4], { value: [] })
  assert.deepStrictEqual(await db.select('SELECT v FROM t ORDER BY id'), [{ v: 'a' }, { v: 'b' }])
})

test('beside a group, up to 16 reads issued together run on the JS thread, not 4: none waits for it to yield', async (t) => {
  const { db } = await open(t)
  await db.executeBatch(INSERT, [['a'], ['b'], ['c']])
  const before = await inlineCounts(db)
  const client = otherClient()
  const write = db.execute(INSERT, ['d'])
  const reads = Array.from({ length: 12 }, () => client(() => db.selectOne('SELECT count(*) AS n FROM t')))
  assert.deepStrictEqual(await settleOrder([write, ...reads]), [...Array.from({ length: 12 }, (_, i) => i + 1), 0])
  assert.deepStrictEqual(await Promise.all(reads), Array(12).fill({ n: 3 }))
  const after = await inlineCounts(db)
  assert.equal(after.runs - before.runs, 12, 'every read ran on the JS thread')
})

test("reads that settle at once let a client's next write join the same group", async (t) => {
  const { db } = await open(t)
  const { groups, writes } = await counted(db, () =>
    Promise.all([
      db.execute(INSERT, ['a']),
      (async () => {
        await db.selectOne('SELECT count(*) AS n FROM t')
        await db.select('SELECT * FROM t')
        return db.execute(INSERT, ['b'])
      })(),
    ]),
  )
  assert.deepStrictEqual({ groups, writes }, { groups: 1, writes: 2 })
})

test("a read beside a group sees a commit another database made on this thread since the group's snapshot", async (t) => {
  const { db, file } = await open(t)
  const other = await Database.open(file, PLACEMENT)
  t.after(() => other.close())
  await other.execute(INSERT, ['warm']) // its writes now look one at a time: the next commits at once
  const client = otherClient()
  const written = [db.execute(INSERT, ['x']), db.execute(INSERT, ['y'])]
  const before = client(() => db.selectOne('SELECT count(*) AS n FROM t')) // takes the group's snapshot
  const z = other.execute(INSERT, ['z']) // commits on this thread, while the group is open
  await z
  // The group's writes were not acknowledged: the read may see them or not; the other's, it must.
  const after = client(() => db.selectOne("SELECT count(*) AS n FROM t WHERE v = 'z'"))
  assert.deepStrictEqual(await before, { n: 1 })
  assert.deepStrictEqual(await after, { n: 1 })
  await Promise.all(written)
  const all = await db.select('SELECT v FROM t ORDER BY v')
  assert.deepStrictEqual(
    all.map((r) => r.v),
    ['warm', 'x', 'y', 'z'],
  )
})

test('a read beside a group sees what another process committed before the read was issued', async (t) => {
  const { db, file } = await open(t)
  const client = otherClient()
  const written = [db.execute(INSERT, ['x']), db.execute(INSERT, ['y'])]
  const before = client(() => db.selectOne('SELECT count(*) AS n FROM t')) // takes the group's snapshot
  // Another process commits while this one waits for it (the group stays open meanwhile).
  const index = new URL('../dist/esm/index.mjs', import.meta.url).href
  const child = `const { Database } = await import(${JSON.stringify(index)})
    const db = await Database.open(${JSON.stringify(file)})
    await db.execute("INSERT INTO t (v) VALUES ('z')")
    await db.close()`
  execFileSync(process.execPath, ['--input-type=module', '-e', child])
  const after = client(() => db.selectOne("SELECT count(*) AS n FROM t WHERE v = 'z'"))
  assert.deepStrictEqual(await before, { n: 0 })
  assert.deepStrictEqual(await after, { n: 1 })
  await Promise.all(written)
  assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, 3)
})

test("a commit by another connection after a group's read took its snapshot: the group's writes still commit, in order", async (t) => {
  const { db, file } = await open(t)
  const other = await Database.open(file, PLACEMENT)
  t.after(() => other.close())
  await other.execute(INSERT, ['warm'])
  const client = otherClient()
  const first = db.execute(INSERT, ['x'])
  assert.deepStrictEqual(await client(() => db.selectOne('SELECT count(*) AS n FROM t')), { n: 1 })
  await other.execute(INSERT, ['z'])
  const second = db.execute(INSERT, ['y'])
  const results = await Promise.all([first, second])
  // x cannot write from the group's stale snapshot (SQLITE_BUSY_SNAPSHOT): the writer thread runs it.
  assert.deepStrictEqual(
    results.map((r) => r.changes),
    [1, 1],
  )
  assert.ok(results[0].lastInsertRowid < results[1].lastInsertRowid, 'in call order')
  assert.deepStrictEqual(
    (await db.select('SELECT v FROM t ORDER BY id')).map((r) => r.v),
    ['warm', 'z', 'x', 'y'],
  )
})

test('another connection sees nothing of a group before it commits, and all of it once it settled', async (t) => {
  const { db, file } = await open(t)
  const other = await Database.open(file, PLACEMENT)
  t.after(() => other.close())
  const writes = [db.execute(INSERT, ['x']), db.execute(INSERT, ['y'])]
  // Issued before the group's commit: it runs at once, on another connection.
  const before = other.selectOne('SELECT count(*) AS n FROM t')
  await Promise.all(writes)
  assert.deepStrictEqual(await before, { n: 0 })
  assert.deepStrictEqual(await other.selectOne('SELECT count(*) AS n FROM t'), { n: 2 })
})

test("SQLite's own rollback in a group (OR ROLLBACK, RAISE(ROLLBACK)): every call settles as it does alone", async (t) => {
  const run = async (db) => {
    await db.execute(`CREATE TABLE log (v);
      CREATE TRIGGER no_bad BEFORE INSERT ON log WHEN new.v = 'bad' BEGIN SELECT RAISE(ROLLBACK, 'bad row'); END`)
    const calls = [
      db.execute(INSERT, ['p']),
      db.execute('INSERT INTO log (v) VALUES (?)', ['ok']),
      db.selectOne('SELECT count(*) AS n FROM t'),
      db.execute('INSERT OR ROLLBACK INTO t (v) VALUES (?)', ['p']),
      db.execute(INSERT, ['q']),
      db.execute('INSERT INTO log (v) VALUES (?)', ['bad']),
      db.execute(INSERT, ['r']),
    ]
    let firstSettled = false
    calls[0].finally(() => {
      firstSettled = true
    })
    await null
    const early = firstSettled // in a group, the first write cannot have settled yet
    const outcomes = (await Promise.all(calls.map(outcome))).map((o) => o.value ?? o.error.code)
    // The read was issued before the writes ahead of it were acknowledged: it may see any of them.
    const [read] = outcomes.splice(2, 1)
    assert.ok(read.n >= 0 && read.n <= 3, `the read gave ${JSON.stringify(read)}`)
    return {
      early,
      outcomes,
      t: await db.select('SELECT * FROM t ORDER BY id'),
      log: await db.select('SELECT * FROM log'),
    }
  }
  const { db: grouped } = await open(t)
  const { db: alone } = await open(t, { inlineBudget: 0 })
  const got = await run(grouped)
  const expected = await run(alone)
  assert.equal(got.early, false, 'the first write waited for its group')
  assert.deepStrictEqual({ ...got, early: undefined }, { ...expected, early: undefined })
  assert.deepStrictEqual(got.outcomes[2], 'SQLITE_CONSTRAINT_UNIQUE')
  assert.deepStrictEqual(got.outcomes[4], 'SQLITE_CONSTRAINT_TRIGGER')
})

test('a statement that cannot join ends the group: it and every call after it run after the group, in call order', async (t) => {
  const { db } = await open(t)
  const calls = [
    db.execute(INSERT, ['a']),
    db.execute('PRAGMA user_version = 7'), // not a DML statement: never inside a group
    db.execute(INSERT, ['b']),
    db.execute('INSERT INTO t (v) VALUES (?) RETURNING id', ['c']), // returns rows: the writer thread
    db.execute(INSERT, ['d']),
  ]
  assert.deepStrictEqual(await settleOrder(calls), [0, 1, 2, 3, 4])
  assert.deepStrictEqual((await Promise.all(calls))[3].rows, [{ id: 3 }])
  assert.deepStrictEqual(
    (await db.select('SELECT v FROM t ORDER BY id')).map((r) => r.v),
    ['a', 'b', 'c', 'd'],
  )
  assert.deepStrictEqual(await db.selectOne('PRAGMA user_version'), { user_version: 7 })
})

test('writes a group sends on to the writer thread settle before the writes issued after them', async (t) => {
  const { db } = await open(t)
  await db.execute('CREATE TABLE s (v)')
  // The third scans a table, so it cannot run in the group: it and the rest of the full group go
  // to the writer thread, and so do the writes issued after them (the writer is busy); those
  // went straight there, and when their completions arrive in the same batch as the group's,
  // they took fewer turns to settle (about half the rounds were out of order before the fix).
  for (let round = 0; round < 10; round++) {
    const calls = Array.from({ length: 24 }, (_, i) =>
      i === 2 ? db.execute('INSERT INTO s SELECT v FROM t') : db.execute(INSERT, [`${round}.${i}`]),
    )
    assert.deepStrictEqual(
      await settleOrder(calls),
      calls.map((_, i) => i),
      `round ${round}`,
    )
  }
  assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, 230)
})

test('writes issued together after a checkpoint emptied the WAL: the first, whose commit starts the WAL over, runs on the writer thread', async (t) => {
  const { db } = await open(t)
  await db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
  const { result, writes } = await counted(db, () =>
    Promise.all([db.execute(INSERT, ['a']), db.execute(INSERT, ['b']), db.execute(INSERT, ['c'])]),
  )
  assert.deepStrictEqual(
    result.map((r) => r.lastInsertRowid),
    [1, 2, 3],
  )
  assert.ok(writes <= 2, `the first write ran on the writer thread (${writes} of 3 inline)`)
  assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, 3)
})

test('a group holds at most 16 writes: 17 issued together commit in two', async (t) => {
  const { db } = await open(t)
  const { groups, writes } = await counted(db, () =>
    Promise.all(Array.from({ length: 17 }, (_, i) => db.execute(INSERT, [i]))),
  )
  assert.deepStrictEqual({ groups, writes }, { groups: 2, writes: 17 })
  assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, 17)
})

test('a transaction or a live query started while a group is open starts after its commit, and sees it', async (t) => {
  const { db } = await open(t)
  const written = db.execute(INSERT, ['before'])
  const seen = db.transaction((tx) => tx.selectOne('SELECT count(*) AS n FROM t'))
  assert.deepStrictEqual(await seen, { n: 1 })
  await written
  const more = db.execute(INSERT, ['live'])
  const c = collect(db.stream('SELECT v FROM t ORDER BY id'))
  t.after(() => c.stop())
  await more
  assert.deepStrictEqual(await c.next(), [{ v: 'before' }, { v: 'live' }])
})

test('inlineBudget: 0: no groups, the same results', async (t) => {
  const { db } = await open(t, { inlineBudget: 0 })
  const results = await Promise.all([db.execute(INSERT, ['a']), db.execute(INSERT, ['b'])])
  assert.deepStrictEqual(results, [
    { changes: 1, lastInsertRowid: 1 },
    { changes: 1, lastInsertRowid: 2 },
  ])
  assert.deepStrictEqual(await inlineCounts(db), NO_INLINE_RUNS)
})
