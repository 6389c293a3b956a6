// A transaction's bounded writes and its COMMIT on the JS thread (crates/engine/src/js_thread/runs.rs
// `write` and `commit`, sqlite/bounded.rs; experiments/036): the same results and errors as on
// the writer thread, isolation, statements that stop being bounded (a trigger created later),
// locks held by another connection, checkpoints of commits made there, the writer thread's
// COMMIT when a transaction wrote much or elsewhere, and live queries.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { test } from 'node:test'
import { Database } from '../dist/esm/index.mjs'
import { NO_INLINE_RUNS, outcome, prng } from './helpers.mjs'
import {
  assertSameEnd,
  CONSTRAINT_CODES,
  inlineCounts,
  PLACEMENT,
  ROWS,
  randomStatements,
  SCHEMA,
  stringify,
  twoFiles,
  writeWhileLocked,
} from './inline-helpers.mjs'
import { collect, counters } from './live-helpers.mjs'
import { INSERT, openTxDb, outsideContext, T, tdb, values } from './tx-helpers.mjs'

/** A random transaction body: its statements (a few reads and savepoints among them) and
 * whether it throws. */
function randomBody(rand, statements, depth = 0) {
  const steps = []
  for (let i = 1 + Math.floor(rand() * 8); i > 0; i--) {
    const r = rand()
    if (r < 0.12) steps.push({ read: true })
    else if (r < 0.22 && depth === 0) steps.push({ nested: randomBody(rand, statements, 1) })
    else {
      // the last entry (OR ROLLBACK) rarely: it ends the transaction
      const k = Math.floor(rand() * (rand() < 0.05 ? statements.length : statements.length - 1))
      const [sql, params] = statements[k]
      steps.push({ sql, params: params(rand) })
    }
  }
  return { steps, throws: rand() < (depth === 0 ? 0.15 : 0.3) }
}

/** Runs a random body in `tx`: what each step settled with, or a throw that carries them. */
async function runBody(tx, { steps, throws }) {
  const seen = []
  for (const step of steps) {
    if (step.read) seen.push(await outcome(tx.select(ROWS)))
    else if (step.nested) seen.push(await outcome(tx.transaction((inner) => runBody(inner, step.nested))))
    else seen.push(await outcome(tx.execute(step.sql, step.params)))
  }
  if (throws) throw Object.assign(new Error('roll back'), { code: 'TEST_ROLLBACK', message: stringify(seen) })
  return seen
}

/** The error codes among what a body's steps settled with, savepoints' included. */
function errorCodes(seen, codes) {
  for (const step of seen) {
    if (step.error) codes.add(step.error.code)
    else if (Array.isArray(step.value)) errorCodes(step.value, codes)
  }
  return codes
}

for (const [safeIntegers, seed] of [
  [false, 0x13a1],
  [true, 0x13b2],
]) {
  test(
    `a transaction's writes: the same results, errors and rows inline and on the writer thread (seeded, safeIntegers: ${safeIntegers})`,
    T,
    async (t) => {
      const rand = prng(seed)
      const { on, off } = await twoFiles(t, { safeIntegers })
      await on.execute(SCHEMA)
      await off.execute(SCHEMA)
      const statements = randomStatements(safeIntegers)
      const errors = new Set()
      for (let i = 0; i < 120; i++) {
        const body = randomBody(rand, statements)
        const inline = await outcome(on.transaction((tx) => runBody(tx, body)))
        const threads = await outcome(off.transaction((tx) => runBody(tx, body)))
        assert.deepStrictEqual(inline, threads, `seed ${seed}, transaction ${i}: ${stringify(body)}`)
        if (inline.value) errorCodes(inline.value, errors)
      }
      await assertSameEnd(on, off, errors, CONSTRAINT_CODES)
      const counts = await inlineCounts(on)
      assert.ok(counts.writes > 100, `writes ran inline (${stringify(counts)})`)
      assert.ok(counts.commits > 10, `commits ran inline (${stringify(counts)})`)
      assert.deepStrictEqual(await inlineCounts(off), NO_INLINE_RUNS)
    },
  )
}

test(
  'an inline write is seen by the transaction, not outside it until the commit; a throwing body leaves nothing',
  T,
  async (t) => {
    const db = await tdb(t, PLACEMENT)
    const runOutside = outsideContext()
    const before = await inlineCounts(db)
    await db.transaction(async (tx) => {
      assert.deepStrictEqual(await tx.execute(INSERT, ['a']), { changes: 1, lastInsertRowid: 1 })
      assert.equal((await inlineCounts(db)).writes, before.writes + 1, 'the insert ran inline')
      assert.deepStrictEqual(await tx.select('SELECT v FROM t'), [{ v: 'a' }])
      assert.deepStrictEqual(await runOutside(() => db.select('SELECT v FROM t')), [], 'not committed yet')
    })
    const committed = await inlineCounts(db)
    assert.equal(committed.commits, before.commits + 1, 'the COMMIT ran inline')
    assert.deepStrictEqual(await db.select('SELECT v FROM t'), [{ v: 'a' }])

    const thrown = await outcome(
      db.transaction(async (tx) => {
        await tx.execute(INSERT, ['b'])
        await tx.execute('UPDATE t SET v = ? WHERE id = ?', ['changed', 1])
        await tx.execute('DELETE FROM t WHERE id = ?', [1])
        assert.deepStrictEqual(await tx.select('SELECT v FROM t'), [{ v: 'b' }])
        throw new Error('no')
      }),
    )
    assert.equal(thrown.error?.message, 'no')
    const after = await inlineCounts(db)
    assert.equal(after.writes, committed.writes + 3, 'the three writes ran inline')
    assert.equal(after.commits, committed.commits, 'nothing committed')
    assert.deepStrictEqual(await values(db), ['a'])
  },
)

test(
  'a COMMIT on the JS thread that fails (a deferred foreign key) rolls back as on the writer thread',
  T,
  async (t) => {
    const { on, off } = await twoFiles(t)
    const run = async (db) => {
      await db.execute(`CREATE TABLE par (id INTEGER PRIMARY KEY);
      CREATE TABLE ch (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES par (id) DEFERRABLE INITIALLY DEFERRED)`)
      const failed = await outcome(db.transaction((tx) => tx.execute('INSERT INTO ch (pid) VALUES (?)', [5])))
      const next = await outcome(db.transaction((tx) => tx.execute('INSERT INTO par (id) VALUES (?)', [5])))
      return { failed, next, ch: await db.select('SELECT * FROM ch'), par: await db.select('SELECT * FROM par') }
    }
    const before = await inlineCounts(on)
    const inline = await run(on)
    const after = await inlineCounts(on)
    assert.deepStrictEqual(inline, await run(off))
    assert.equal(inline.failed.error?.code, 'SQLITE_CONSTRAINT_FOREIGNKEY')
    assert.deepStrictEqual(inline.ch, [], 'rolled back')
    assert.deepStrictEqual(inline.par, [{ id: 5 }], 'the next transaction committed')
    assert.ok(after.commits > before.commits, `the failing COMMIT ran inline (${stringify(after)})`)
  },
)

/** A trigger on `t` writing each inserted value to `log`. */
const TRIGGER = 'CREATE TRIGGER t_log AFTER INSERT ON t BEGIN INSERT INTO log (v) VALUES (new.v); END'

for (const where of ['the same Database', 'another Database on the file', 'the same transaction']) {
  test(
    `a trigger created by ${where} after an insert ran inline: the insert fires it, on the writer thread`,
    T,
    async (t) => {
      const { db, file } = await openTxDb(t, PLACEMENT)
      await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v); CREATE TABLE log (v)')
      const insert = (tx, v) => tx.execute(INSERT, [v])
      await db.transaction((tx) => insert(tx, 'before'))
      const before = await inlineCounts(db)
      assert.ok(before.writes >= 1, 'the insert ran inline')
      if (where === 'the same transaction') {
        await db.transaction(async (tx) => {
          await tx.execute(TRIGGER)
          await insert(tx, 'after')
          assert.deepStrictEqual(await values(tx, 'log'), ['after'], 'the trigger fired inside the transaction')
        })
      } else {
        const other = where === 'the same Database' ? db : await Database.open(file)
        await other.execute(TRIGGER)
        if (other !== db) await other.close()
        await db.transaction((tx) => insert(tx, 'after'))
      }
      await db.transaction((tx) => insert(tx, 'again'))
      assert.deepStrictEqual(await values(db), ['before', 'after', 'again'])
      assert.deepStrictEqual(await values(db, 'log'), ['after', 'again'])
      assert.equal((await inlineCounts(db)).writes, before.writes, 'no insert with the trigger ran inline')
    },
  )
}

test(
  'another connection holds the write lock: the first insert of a transaction waits and succeeds after it commits',
  T,
  async (t) => {
    const { db, file } = await openTxDb(t, { ...PLACEMENT, busyTimeout: 20_000 })
    await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
    await db.transaction((tx) => tx.execute(INSERT, ['warm'])) // the insert's statement is known bounded
    const waited = await writeWhileLocked(t, db, file, () => db.transaction((tx) => tx.execute(INSERT, ['waiter'])))
    assert.equal(waited.writes, 0, 'the insert ran on the writer thread')
    assert.deepStrictEqual(await values(db), ['warm', 'holder', 'waiter'])
  },
)

test(
  '3,000 one-insert transactions commit inline, their checkpoints keep the WAL bounded, every row is there',
  T,
  async (t) => {
    const { db, file } = await openTxDb(t, PLACEMENT)
    await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
    const pageSize = (await db.selectOne('PRAGMA page_size')).page_size
    const dbBytes = fs.statSync(file).size
    const before = await inlineCounts(db)
    const N = 3000
    for (let i = 0; i < N; i++) await db.transaction((tx) => tx.execute(INSERT, [i]))
    const after = await inlineCounts(db)
    assert.ok(after.commits - before.commits >= N * 0.9, `most commits ran inline (${after.commits - before.commits})`)
    assert.equal(after.writes - before.writes, after.commits - before.commits, 'every inline commit wrote inline')
    // every commit appends at least one page to the WAL: without checkpoints it would hold N pages
    const { walBytes } = await db.diagnostics()
    assert.ok(walBytes < (N * pageSize) / 2, `WAL ${walBytes} bytes after ${N} commits of ${pageSize}-byte pages`)
    assert.ok(fs.statSync(file).size > dbBytes, 'checkpoints copied pages into the database file')
    assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n, sum(v) AS s FROM t'), {
      n: N,
      s: (N * (N - 1)) / 2,
    })
  },
)

test(
  '16 inline writes commit inline; 17, a RETURNING or an executeBatch commit on the writer thread, correctly',
  T,
  async (t) => {
    const db = await tdb(t, PLACEMENT)
    const commitsOf = async (body) => {
      const before = await inlineCounts(db)
      const result = await db.transaction(body)
      const after = await inlineCounts(db)
      return { result, writes: after.writes - before.writes, commits: after.commits - before.commits }
    }
    const inserts = (n) => async (tx) => {
      for (let i = 0; i < n; i++) await tx.execute(INSERT, [`${n}-${i}`])
    }
    assert.deepStrictEqual(await commitsOf(inserts(16)), { result: undefined, writes: 16, commits: 1 })
    assert.deepStrictEqual(await commitsOf(inserts(17)), { result: undefined, writes: 17, commits: 0 })
    assert.equal(await db.selectOne('SELECT count(*) AS n FROM t').then((r) => r.n), 33)

    const returning = await commitsOf(async (tx) => {
      await tx.execute(INSERT, ['r1'])
      return tx.execute('INSERT INTO t (v) VALUES (?) RETURNING id, v', ['r2'])
    })
    assert.deepStrictEqual(returning, {
      result: { changes: 1, lastInsertRowid: 35, rows: [{ id: 35, v: 'r2' }] },
      writes: 1,
      commits: 0,
    })
    const batch = await commitsOf(async (tx) => {
      await tx.execute(INSERT, ['b1'])
      return tx.executeBatch(INSERT, [['b2'], ['b3']])
    })
    assert.deepStrictEqual(batch, { result: { changes: 2 }, writes: 1, commits: 0 })
    // parameters over 64 KiB: the write and so the COMMIT run on the writer thread
    const large = Buffer.alloc(65 * 1024, 7)
    const big = await commitsOf((tx) => tx.execute(INSERT, [large]))
    assert.deepStrictEqual(big, { result: { changes: 1, lastInsertRowid: 39 }, writes: 0, commits: 0 })
    const all = await values(db)
    assert.equal(all.length, 39)
    assert.deepStrictEqual(all.slice(-6), ['r1', 'r2', 'b1', 'b2', 'b3', large])
  },
)

test(
  'a live query re-runs once for a transaction whose writes and commit ran inline, with the final rows',
  T,
  async (t) => {
    const db = await tdb(t, PLACEMENT)
    await db.execute("INSERT INTO t (v) VALUES ('x'), ('y'); CREATE TABLE other (v)")
    const ALL = 'SELECT id, v FROM t ORDER BY id'
    const c = collect(db.stream(ALL))
    assert.deepStrictEqual(await c.next(), [
      { id: 1, v: 'x' },
      { id: 2, v: 'y' },
    ])
    const before = await counters(db)
    const inlineBefore = await inlineCounts(db)
    await db.transaction(async (tx) => {
      await tx.execute(INSERT, ['z'])
      await tx.execute('UPDATE t SET v = ? WHERE id = ?', ['X', 1])
      await tx.execute('DELETE FROM t WHERE id = ?', [2])
      assert.equal((await counters(db)).requeries, before.requeries, 'nothing re-runs before the commit')
    })
    const inlineAfter = await inlineCounts(db)
    assert.equal(inlineAfter.writes, inlineBefore.writes + 3, 'the writes ran inline')
    assert.equal(inlineAfter.commits, inlineBefore.commits + 1, 'the COMMIT ran inline')
    assert.equal((await counters(db)).requeries, before.requeries + 1, 'one re-run for the transaction')
    assert.deepStrictEqual(await c.next(), [
      { id: 1, v: 'X' },
      { id: 3, v: 'z' },
    ])
    // a transaction whose inline writes touch another table, or change nothing, re-runs nothing
    const quiet = await inlineCounts(db)
    await db.transaction(async (tx) => {
      await tx.execute('INSERT INTO other (v) VALUES (?)', [1])
      await tx.execute('UPDATE t SET v = ? WHERE id = ?', ['nobody', 99])
    })
    assert.equal((await inlineCounts(db)).commits, quiet.commits + 1, 'that COMMIT ran inline')
    assert.equal((await counters(db)).requeries, before.requeries + 1, 'no re-run for it')
    // a later write re-runs it once more: no re-run of the transaction was left over
    await db.execute(INSERT, ['w'])
    assert.equal((await c.next()).length, 3)
    const after = await counters(db)
    assert.equal(after.requeries, before.requeries + 2)
    assert.equal(c.deliveries.length, 3)
    c.stop()
  },
)
