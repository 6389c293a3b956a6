// Reads awaited one after another in one turn of the event loop (js-thread/placement.ts `readFollowsRead`,
// experiments/061): from the second on, they open a write group and read in its snapshot, so
// SQLite's WAL read lock is taken once for the run instead of once a read. Covered: such a run
// shares one group; a read alone in its turn opens none; each read still sees every commit
// completed before it was issued (another database's on this thread, another process's); a
// write in the run commits the group first and runs as it would alone. (Reads issued together
// keep their rules: inline-after-thread.test.mjs, inline.test.mjs.)
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { test } from 'node:test'
import { setImmediate as turn } from 'node:timers/promises'
import { Database } from '../dist/esm/index.mjs'
import { tempDir } from './helpers.mjs'
import { inlineCounts, PLACEMENT } from './inline-helpers.mjs'

const COUNT = 'SELECT count(*) AS n FROM t'

async function open(t) {
  const file = path.join(tempDir(t), 'row.db')
  const db = await Database.open(file, PLACEMENT)
  t.after(() => db.close())
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  await db.execute("INSERT INTO t (v) VALUES ('a')")
  return { db, file }
}

/** What `fn` gave, and the inline runs and groups meanwhile. */
async function counted(db, fn) {
  const before = await inlineCounts(db)
  const result = await fn()
  const after = await inlineCounts(db)
  return { result, runs: after.runs - before.runs, groupReads: after.groupReads - before.groupReads }
}

test('100 reads awaited in a row run on the JS thread in one group', async (t) => {
  const { db } = await open(t)
  const { result, runs, groupReads } = await counted(db, async () => {
    const seen = []
    for (let i = 0; i < 100; i++) seen.push((await db.selectOne(COUNT)).n)
    return seen
  })
  assert.deepStrictEqual(result, Array(100).fill(1))
  assert.equal(runs, 100, 'every read ran on the JS thread')
  // The first read runs alone; the second opens a group, which runs after 64 microtask rounds
  // (or one that issued no call), and the next read opens another.
  assert.equal(groupReads, 99)
})

test('a read alone in its turn of the event loop opens no group', async (t) => {
  const { db } = await open(t)
  const { runs, groupReads } = await counted(db, async () => {
    for (let i = 0; i < 20; i++) {
      assert.deepStrictEqual(await db.selectOne(COUNT), { n: 1 })
      await turn()
    }
  })
  assert.equal(runs, 20)
  assert.equal(groupReads, 0)
})

test('a read in a row sees what another database on this thread committed before it was issued', async (t) => {
  const { db, file } = await open(t)
  const other = await Database.open(file, PLACEMENT)
  t.after(() => other.close())
  await other.execute("INSERT INTO t (v) VALUES ('warm')") // the other's writes now run alone, inline
  const { result, groupReads } = await counted(db, async () => {
    const seen = []
    for (let i = 0; i < 6; i++) {
      seen.push((await db.selectOne(COUNT)).n)
      // Committed at once, in this turn: the group's snapshot no longer shows everything.
      if (i % 2 === 1) await other.execute("INSERT INTO t (v) VALUES ('x')")
    }
    return seen
  })
  assert.deepStrictEqual(result, [2, 2, 3, 3, 4, 4])
  assert.ok(groupReads >= 3, `${groupReads} reads in a group`)
})

test('a read in a row sees what another process committed before it was issued', async (t) => {
  const { db, file } = await open(t)
  const index = new URL('../dist/esm/index.mjs', import.meta.url).href
  const child = `const { Database } = await import(${JSON.stringify(index)})
    const db = await Database.open(${JSON.stringify(file)})
    await db.execute("INSERT INTO t (v) VALUES ('z')")
    await db.close()`
  const { result, groupReads } = await counted(db, async () => {
    const first = (await db.selectOne(COUNT)).n
    const second = (await db.selectOne(COUNT)).n // opens the group: its snapshot is taken here
    // The other process commits while this one waits for it, in the same turn.
    execFileSync(process.execPath, ['--input-type=module', '-e', child])
    const third = (await db.selectOne(COUNT)).n
    return [first, second, third]
  })
  assert.deepStrictEqual(result, [1, 1, 2])
  assert.equal(groupReads, 2)
})

test("a write in a run of reads commits the reads' group first and runs as it would alone; the next read sees it", async (t) => {
  const { db } = await open(t)
  const { result, groupReads } = await counted(db, async () => {
    const a = (await db.selectOne(COUNT)).n
    const b = (await db.selectOne(COUNT)).n // opens a group of reads
    const before = await inlineCounts(db)
    const written = await db.execute("INSERT INTO t (v) VALUES ('b')")
    const after = await inlineCounts(db)
    const c = (await db.selectOne(COUNT)).n
    return [a, b, written.changes, after.writes - before.writes, after.groups - before.groups, c]
  })
  // The write ran alone on the JS thread (1 write, no group committed with it).
  assert.deepStrictEqual(result, [1, 1, 1, 1, 0, 2])
  assert.equal(groupReads, 1)
})

test('awaited reads rotating over more databases than FOLLOW_WITHIN open no group; two interleaved in a row still do', async (t) => {
  // Tenants read in turn (experiments/074): each database's last read is 8 reads back, so its
  // group would hold one read and cost a BEGIN and a COMMIT more than it saves.
  const tenants = []
  for (let i = 0; i < 8; i++) tenants.push((await open(t)).db)
  const before = await Promise.all(tenants.map(inlineCounts))
  const seen = []
  for (let round = 0; round < 5; round++) for (const db of tenants) seen.push((await db.selectOne(COUNT)).n)
  const after = await Promise.all(tenants.map(inlineCounts))
  assert.deepStrictEqual(seen, Array(40).fill(1))
  const runs = after.reduce((n, a, i) => n + a.runs - before[i].runs, 0)
  const groupReads = after.reduce((n, a, i) => n + a.groupReads - before[i].groupReads, 0)
  assert.equal(runs, 40, 'every read ran on the JS thread')
  assert.equal(groupReads, 0)

  // Two databases read in turn: each one's last read is 2 reads back, so each run shares a group.
  const [a, b] = tenants
  const [a0, b0] = [await inlineCounts(a), await inlineCounts(b)]
  for (let i = 0; i < 10; i++) for (const db of [a, b]) assert.deepStrictEqual(await db.selectOne(COUNT), { n: 1 })
  const [a1, b1] = [await inlineCounts(a), await inlineCounts(b)]
  assert.ok(a1.groupReads - a0.groupReads >= 8, `${a1.groupReads - a0.groupReads} of a's reads in a group`)
  assert.ok(b1.groupReads - b0.groupReads >= 8, `${b1.groupReads - b0.groupReads} of b's reads in a group`)
})
