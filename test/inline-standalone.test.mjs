// Standalone writes on the JS thread and reads on the idle writer's connection (experiments/040;
// crates/engine/src/js_thread/runs.rs `write_alone`, napi/inline_calls.rs `read_inline`): an execute
// outside transactions whose statement is bounded runs on the writer's connection from the JS
// thread and commits as it ends, when nothing holds or waits for the writer. Covered: the same
// results, errors and rows as on the writer thread; the statements and moments that stay on the
// writer thread (unbounded statements, a transaction running, a BEGIN through execute,
// synchronous above NORMAL, a commit that starts the WAL over, a lock another connection
// holds); checkpoints; live queries; reads that see what was committed and nothing else; and
// inlineBudget: 0.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, NO_INLINE_RUNS, outcome, prng } from './helpers.mjs'
import {
  assertSameEnd,
  CONSTRAINT_CODES,
  inlineCounts,
  openOwnConnection,
  PLACEMENT,
  ROWS,
  randomStatements,
  SCHEMA,
  stringify,
  twoFiles,
  writeWhileLocked,
} from './inline-helpers.mjs'
import { collect, counters } from './live-helpers.mjs'
import { deferred, INSERT, openTxDb, outsideContext, T, tdb, track, turns, values } from './tx-helpers.mjs'

/** Runs `fn` and returns what it gave with how many writes and COMMITs ran on the JS thread. */
async function ranInline(db, fn) {
  const before = await inlineCounts(db)
  const result = await fn()
  const after = await inlineCounts(db)
  return { result, writes: after.writes - before.writes, commits: after.commits - before.commits }
}

/** How many writes and COMMITs of `fn` ran on the JS thread. */
async function countInline(db, fn) {
  const { writes, commits } = await ranInline(db, fn)
  return { writes, commits }
}

for (const [safeIntegers, seed] of [
  [false, 0x40a1],
  [true, 0x40b2],
]) {
  test(
    `standalone writes: the same results, errors and rows inline and on the writer thread (seeded, safeIntegers: ${safeIntegers})`,
    T,
    async (t) => {
      const rand = prng(seed)
      const { on, off } = await twoFiles(t, { safeIntegers })
      await on.execute(SCHEMA)
      await off.execute(SCHEMA)
      const statements = randomStatements(safeIntegers)
      const codes = new Set()
      const N = 400
      let alone = 0
      for (let i = 0; i < N; i++) {
        // now and then a few issued together: each still runs alone, in the order issued
        const group = []
        for (let k = rand() < 0.2 ? 2 + Math.floor(rand() * 3) : 1; k > 0; k--) {
          const [sql, params] = statements[Math.floor(rand() * statements.length)]
          group.push({ sql, params: params(rand) })
        }
        if (group.length === 1) alone++
        const run = (db) => Promise.all(group.map(({ sql, params }) => outcome(db.execute(sql, params))))
        const inline = await run(on)
        assert.deepStrictEqual(inline, await run(off), `seed ${seed}, step ${i}: ${stringify(group)}`)
        for (const { error } of inline) if (error) codes.add(error.code)
        if (rand() < 0.1) assert.deepStrictEqual(await on.select(ROWS), await off.select(ROWS), `step ${i}`)
      }
      await assertSameEnd(on, off, codes, [...CONSTRAINT_CODES, 'ERR_PARAMETER_COUNT', 'SQLITE_ERROR'])
      const counts = await inlineCounts(on)
      // `writes` counts the writes that ran alone here; those issued together count as `groups`
      assert.ok(counts.writes > alone / 2, `most of ${alone} writes issued alone ran inline (${stringify(counts)})`)
      assert.ok(counts.groups > 0, `writes issued together ran in groups (${stringify(counts)})`)
      assert.equal(counts.commits, 0, 'no transaction COMMIT')
      assert.deepStrictEqual(await inlineCounts(off), NO_INLINE_RUNS)
    },
  )
}

test(
  'a trigger, INSERT…SELECT, RETURNING, AUTOINCREMENT, > 64 KiB of parameters, executeBatch: on the writer thread, correctly',
  T,
  async (t) => {
    const db = await tdb(t, PLACEMENT)
    await db.execute(`CREATE TABLE log (v);
      CREATE TABLE fired (id INTEGER PRIMARY KEY, v);
      CREATE TRIGGER fired_log AFTER INSERT ON fired BEGIN INSERT INTO log (v) VALUES (new.v); END;
      CREATE TABLE ai (id INTEGER PRIMARY KEY AUTOINCREMENT, v)`)
    const large = Buffer.alloc(65 * 1024, 7)
    const cases = [
      [() => db.execute('INSERT INTO fired (v) VALUES (?)', ['f']), { changes: 1, lastInsertRowid: 1 }],
      [() => db.execute('INSERT INTO t (v) SELECT v FROM log WHERE v = ?', ['f']), { changes: 1, lastInsertRowid: 3 }],
      [
        () => db.execute('INSERT INTO t (v) VALUES (?) RETURNING id, v', ['r']),
        { changes: 1, lastInsertRowid: 5, rows: [{ id: 5, v: 'r' }] },
      ],
      [() => db.execute('INSERT INTO ai (v) VALUES (?)', ['a']), { changes: 1, lastInsertRowid: 1 }],
      [() => db.execute(INSERT, [large]), { changes: 1, lastInsertRowid: 8 }],
      [() => db.executeBatch(INSERT, [['b1'], ['b2']]), { changes: 2 }],
    ]
    const warmIds = [1, 2, 4, 6, 7, 9]
    for (const [i, [write, expected]] of cases.entries()) {
      // a bounded insert just before runs inline: the one after is refused for what it is
      assert.deepStrictEqual(await ranInline(db, () => db.execute(INSERT, [`warm${i}`])), {
        result: { changes: 1, lastInsertRowid: warmIds[i] },
        writes: 1,
        commits: 0,
      })
      assert.deepStrictEqual(await ranInline(db, write), { result: expected, writes: 0, commits: 0 }, `case ${i}`)
    }
    const all = await values(db)
    assert.deepStrictEqual(all, ['warm0', 'warm1', 'f', 'warm2', 'r', 'warm3', 'warm4', large, 'warm5', 'b1', 'b2'])
    assert.deepStrictEqual(await values(db, 'log'), ['f'])
    assert.deepStrictEqual(await values(db, 'ai'), ['a'])
  },
)

test('a write issued while a transaction body runs waits for the transaction and lands after it', T, async (t) => {
  const db = await tdb(t, PLACEMENT)
  await db.execute(INSERT, ['warm'])
  const runOutside = outsideContext()
  const issued = deferred()
  const release = deferred()
  let outside
  const before = await inlineCounts(db)
  const transaction = db.transaction(async (tx) => {
    await tx.execute(INSERT, ['tx1'])
    outside = track(runOutside(() => db.execute(INSERT, ['outside'])))
    issued.resolve()
    await release.promise
    await tx.execute(INSERT, ['tx2'])
  })
  await issued.promise
  await turns(20)
  assert.equal(outside.settled, false, `it waits for the transaction (${stringify(outside)})`)
  release.resolve()
  await transaction
  assert.deepStrictEqual(await outside.promise, { changes: 1, lastInsertRowid: 4 })
  assert.deepStrictEqual(await values(db), ['warm', 'tx1', 'tx2', 'outside'])
  assert.equal((await inlineCounts(db)).writes, before.writes + 2, "only the transaction's two writes ran inline")
})

test('a BEGIN through execute is rolled back and refused: the writes after it commit alone, inline', T, async (t) => {
  const { db, file } = await openTxDb(t, PLACEMENT)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  const other = await Database.open(file)
  t.after(() => other.close())
  for (const sql of ['BEGIN', 'BEGIN IMMEDIATE', 'SAVEPOINT s', 'BEGIN; INSERT INTO t (v) VALUES (1)']) {
    await expectReject(() => db.execute(sql), ResqliteError, 'ERR_OPEN_TRANSACTION')
    const wrote = await ranInline(db, () => db.execute(INSERT, [sql]))
    assert.equal(wrote.writes, 1, `the insert after ${sql} ran inline`)
    // committed: another connection sees it
    assert.deepStrictEqual(await other.selectOne('SELECT v FROM t WHERE id = ?', [wrote.result.lastInsertRowid]), {
      v: sql,
    })
  }
  await expectReject(() => db.execute('ROLLBACK'), ResqliteError, 'SQLITE_ERROR', /no transaction is active/)
  assert.deepStrictEqual(await values(db), [
    'BEGIN',
    'BEGIN IMMEDIATE',
    'SAVEPOINT s',
    'BEGIN; INSERT INTO t (v) VALUES (1)',
  ])
})

test('synchronous above NORMAL: writes and COMMITs stay on the writer thread; back to NORMAL, inline', T, async (t) => {
  const db = await tdb(t, PLACEMENT)
  const write = () => countInline(db, () => db.execute(INSERT, ['w']))
  const transaction = () => countInline(db, () => db.transaction((tx) => tx.execute(INSERT, ['tx'])))
  const inline = { writes: 1, commits: 0 }
  const committedInline = { writes: 1, commits: 1 }
  assert.deepStrictEqual(await write(), inline)
  assert.deepStrictEqual(await transaction(), committedInline)
  // (another PRAGMA between them does not hide the change: the setting is read again only after
  // one of the PRAGMAs that decide it, written any way SQLite accepts)
  for (const [level, pragma] of [
    ['FULL', 'PRAGMA main.Synchronous = FULL'],
    ['EXTRA', 'PRAGMA synchronous = EXTRA'],
  ]) {
    await db.execute(pragma)
    await db.execute('PRAGMA cache_size = -2000')
    assert.deepStrictEqual(await write(), { writes: 0, commits: 0 }, `${level}: the write`)
    // the transaction's insert runs inline (nothing is synced before its COMMIT), its COMMIT not
    assert.deepStrictEqual(await transaction(), inline, `${level}: the COMMIT`)
    await db.execute('PRAGMA synchronous = NORMAL')
    assert.deepStrictEqual(await write(), inline, `NORMAL after ${level}: the write`)
    assert.deepStrictEqual(await transaction(), committedInline, `NORMAL after ${level}: the COMMIT`)
  }
  assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n FROM t'), { n: 10 })
})

test(
  'a commit that starts the WAL over (after a TRUNCATE or PASSIVE checkpoint, on reopening with an empty WAL) runs on the writer thread, the next inline',
  T,
  async (t) => {
    const { db: first, file } = await openTxDb(t, PLACEMENT)
    await first.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
    await first.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    await first.close()
    // reopened with an empty WAL (PLACEMENT: a write overrunning the default budget on a loaded
    // machine would skip the JS thread for a while, whatever the rule checked here)
    const db = await Database.open(file, PLACEMENT)
    t.after(() => db.close())
    const write = async () => (await ranInline(db, () => db.execute(INSERT, ['w']))).writes
    const transaction = () => countInline(db, () => db.transaction((tx) => tx.execute(INSERT, ['tx'])))
    assert.equal(await write(), 0, 'the first write after reopening')
    assert.equal(await write(), 1, 'the second')
    for (const mode of ['TRUNCATE', 'PASSIVE']) {
      await db.execute(`PRAGMA wal_checkpoint(${mode})`)
      assert.equal(await write(), 0, `the first write after a ${mode} checkpoint`)
      assert.equal(await write(), 1, `the second write after a ${mode} checkpoint`)
      await db.execute(`PRAGMA wal_checkpoint(${mode})`)
      assert.deepStrictEqual(await transaction(), { writes: 1, commits: 0 }, `the first COMMIT after ${mode}`)
      assert.deepStrictEqual(await transaction(), { writes: 1, commits: 1 }, `the second COMMIT after ${mode}`)
      // a transaction that wrote nothing writes nothing to the WAL: its COMMIT runs inline
      await db.execute(`PRAGMA wal_checkpoint(${mode})`)
      const reads = () => countInline(db, () => db.transaction((tx) => tx.selectOne('SELECT count(*) AS n FROM t')))
      assert.deepStrictEqual(await reads(), { writes: 0, commits: 1 }, `a read-only COMMIT after ${mode}`)
    }
    assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n FROM t'), { n: 10 })
  },
)

test(
  "a write's first overrun skips nothing: its statement's next write runs on the JS thread; a second in a row makes it skip",
  T,
  async (t) => {
    // Skipping the JS thread at the first overrun (a preempted thread on a busy machine) sent the
    // next 16 awaited writes through the writer thread, a round trip each (experiments/077).
    // A budget of 1 µs: a row of 60 KB (15 overflow pages appended to the WAL) overruns it.
    const { db } = await openTxDb(t, { inlineBudget: 0.001 })
    await db.execute('CREATE TABLE big (id INTEGER PRIMARY KEY, v BLOB)')
    const blob = Buffer.alloc(60_000, 7)
    const write = async (id) =>
      (await ranInline(db, () => db.execute('INSERT INTO big VALUES (?, ?)', [id, blob]))).writes
    assert.deepStrictEqual([await write(1), await write(2), await write(3)], [1, 1, 0])
    assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n FROM big'), { n: 3 })
  },
)

test('3,000 standalone inline inserts: their checkpoints keep the WAL bounded, every row is there', T, async (t) => {
  const { db, file } = await openTxDb(t, PLACEMENT)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  const pageSize = (await db.selectOne('PRAGMA page_size')).page_size
  const dbBytes = fs.statSync(file).size
  const N = 3000
  const { writes } = await ranInline(db, async () => {
    for (let i = 0; i < N; i++) await db.execute(INSERT, [i])
  })
  assert.ok(writes >= N * 0.9, `most inserts ran inline (${writes})`)
  // every commit appends at least one page to the WAL: without checkpoints it would hold N pages
  const { walBytes } = await db.diagnostics()
  assert.ok(walBytes < (N * pageSize) / 2, `WAL ${walBytes} bytes after ${N} commits of ${pageSize}-byte pages`)
  assert.ok(fs.statSync(file).size > dbBytes, 'checkpoints copied pages into the database file')
  assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n, sum(v) AS s FROM t'), { n: N, s: (N * (N - 1)) / 2 })
})

test(
  'another connection holds the write lock: a standalone write waits, succeeds after it commits, on the writer thread',
  T,
  async (t) => {
    const { db, file } = await openTxDb(t, { ...PLACEMENT, busyTimeout: 20_000 })
    await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
    assert.equal((await ranInline(db, () => db.execute(INSERT, ['warm']))).writes, 1, 'the insert runs inline')
    assert.deepStrictEqual(await writeWhileLocked(t, db, file, () => db.execute(INSERT, ['waiter'])), {
      result: { changes: 1, lastInsertRowid: 3 },
      writes: 0, // on the writer thread
    })
    assert.deepStrictEqual(await values(db), ['warm', 'holder', 'waiter'])
  },
)

test('a live query re-runs after each standalone inline write, with the new rows', T, async (t) => {
  const db = await tdb(t, PLACEMENT)
  await db.execute("INSERT INTO t (v) VALUES ('x'), ('y'); CREATE TABLE other (v)")
  const c = collect(db.stream('SELECT id, v FROM t ORDER BY id'))
  assert.deepStrictEqual(await c.next(), [
    { id: 1, v: 'x' },
    { id: 2, v: 'y' },
  ])
  const writes = [
    [
      INSERT,
      ['z'],
      [
        { id: 1, v: 'x' },
        { id: 2, v: 'y' },
        { id: 3, v: 'z' },
      ],
    ],
    [
      'UPDATE t SET v = ? WHERE id = ?',
      ['X', 1],
      [
        { id: 1, v: 'X' },
        { id: 2, v: 'y' },
        { id: 3, v: 'z' },
      ],
    ],
    [
      'DELETE FROM t WHERE id = ?',
      [2],
      [
        { id: 1, v: 'X' },
        { id: 3, v: 'z' },
      ],
    ],
  ]
  const before = await counters(db)
  for (const [sql, params, rows] of writes) {
    assert.equal((await ranInline(db, () => db.execute(sql, params))).writes, 1, `${sql} ran inline`)
    assert.deepStrictEqual(await c.next(), rows, sql)
  }
  // a write to another table re-runs nothing; the next write to t re-runs it once more
  assert.equal((await ranInline(db, () => db.execute('INSERT INTO other (v) VALUES (?)', [1]))).writes, 1)
  assert.equal((await ranInline(db, () => db.execute(INSERT, ['w']))).writes, 1)
  assert.equal((await c.next()).length, 3)
  assert.equal((await counters(db)).requeries, before.requeries + 4)
  assert.equal(c.deliveries.length, 5)
  c.stop()
})

test("reads after standalone inline writes see them, and another connection's commits", T, async (t) => {
  const { db, file } = await openTxDb(t, PLACEMENT)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  const other = await Database.open(file)
  t.after(() => other.close())
  const rand = prng(0x40c3)
  const model = new Map()
  const before = await inlineCounts(db)
  const N = 300
  for (let i = 0; i < N; i++) {
    const id = 1 + Math.floor(rand() * 20)
    const r = rand()
    const by = r < 0.1 ? other : db
    if (r < 0.5) await by.execute('INSERT OR REPLACE INTO t (id, v) VALUES (?, ?)', [id, i])
    else if (r < 0.8) await by.execute('UPDATE t SET v = ? WHERE id = ?', [-i, id])
    else await by.execute('DELETE FROM t WHERE id = ?', [id])
    if (r < 0.5) model.set(id, i)
    else if (r < 0.8) model.has(id) && model.set(id, -i)
    else model.delete(id)
    assert.deepStrictEqual(
      await db.selectOne('SELECT v FROM t WHERE id = ?', [id]),
      model.has(id) ? { v: model.get(id) } : undefined,
      `step ${i}`,
    )
    if (i % 10 === 0) {
      const rows = [...model].sort(([a], [b]) => a - b).map(([id, v]) => ({ id, v }))
      assert.deepStrictEqual(await db.select('SELECT id, v FROM t ORDER BY id'), rows, `step ${i}`)
    }
  }
  const after = await inlineCounts(db)
  assert.ok(after.writes - before.writes > N * 0.6, `most writes ran inline (${after.writes - before.writes})`)
  assert.ok(after.runs - before.runs >= N, `the reads ran inline (${after.runs - before.runs})`)
})

test('a read from outside an open transaction never sees its uncommitted (inline) writes', T, async (t) => {
  const db = await tdb(t, PLACEMENT)
  await db.execute(INSERT, ['committed'])
  await openOwnConnection(db)
  const runOutside = outsideContext()
  const ALL = 'SELECT id, v FROM t ORDER BY id'
  const committed = [{ id: 1, v: 'committed' }]
  const outside = async () => {
    const before = await inlineCounts(db)
    const seen = await runOutside(() =>
      Promise.all([db.select(ALL), db.selectOne('SELECT count(*) AS n FROM t'), db.selectBytes(ALL)]),
    )
    assert.equal((await inlineCounts(db)).runs - before.runs, 3, 'the reads ran on the JS thread')
    return [seen[0], seen[1], JSON.parse(seen[2])]
  }
  const before = await inlineCounts(db)
  await db.transaction(async (tx) => {
    for (const v of ['a', 'b', 'c']) {
      await tx.execute(INSERT, [v])
      await tx.execute('UPDATE t SET v = ? WHERE id = 1', [`changed ${v}`])
      assert.deepStrictEqual(await outside(), [committed, { n: 1 }, committed], `after ${v}`)
    }
    await tx.execute('DELETE FROM t WHERE id = 1')
    assert.deepStrictEqual(await outside(), [committed, { n: 1 }, committed], 'after the delete')
  })
  assert.equal((await inlineCounts(db)).writes - before.writes, 7, "the transaction's writes ran inline")
  const final = [
    { id: 2, v: 'a' },
    { id: 3, v: 'b' },
    { id: 4, v: 'c' },
  ]
  assert.deepStrictEqual(await outside(), [final, { n: 3 }, final], 'after the commit')
})

test('inlineBudget: 0: nothing runs on the JS thread, with the same workload', T, async (t) => {
  const db = await tdb(t, { inlineBudget: 0 })
  const c = collect(db.stream('SELECT count(*) AS n FROM t'))
  assert.deepStrictEqual(await c.next(), [{ n: 0 }])
  for (let i = 0; i < 50; i++) {
    await db.execute(INSERT, [i])
    await db.execute('UPDATE t SET v = ? WHERE id = ?', [i * 2, i + 1])
    assert.deepStrictEqual(await db.selectOne('SELECT v FROM t WHERE id = ?', [i + 1]), { v: i * 2 })
  }
  await db.execute('DELETE FROM t WHERE id = ?', [1])
  await db.transaction(async (tx) => {
    await tx.execute(INSERT, ['tx'])
    assert.equal(await tx.selectOne('SELECT count(*) AS n FROM t').then((r) => r.n), 50)
  })
  await c.until([{ n: 50 }])
  c.stop()
  assert.deepStrictEqual(await inlineCounts(db), NO_INLINE_RUNS)
})

// A read outside a transaction may run on the idle writer's connection in a reader's stead, so
// nothing that makes that connection differ from a reader's may show: its temp schema, a
// database it alone attached, a PRAGMA that changes results, its own last_insert_rowid() and
// changes(). Each read is compared with the same read on a database whose reads never run on
// the JS thread (inlineBudget: 0), and with the writer busy.
test(
  "reads never see the writer's temp tables (docs/api.md, Limits), whether the writer is idle or not",
  T,
  async (t) => {
    const db = await tdb(t, PLACEMENT)
    await db.execute(`INSERT INTO t (v) VALUES ('main');
      CREATE TEMP TABLE t (id INTEGER PRIMARY KEY, v); INSERT INTO temp.t (v) VALUES ('temp');
      CREATE TEMP TABLE only_temp (v)`)
    assert.deepStrictEqual(await values(db), ['main'], 'the main table, not the temp one that shadows it')
    await expectReject(() => db.select('SELECT v FROM only_temp'), ResqliteError, 'SQLITE_ERROR', /no such table/)
    // Reads still run on the JS thread, on its own connection, which opens on an engine thread
    // when a read first needs it: under load, the next read may come before that open is done.
    assert.deepStrictEqual(
      await openOwnConnection(db, 'SELECT v FROM t'),
      { v: 'main' },
      'a read on the JS thread sees the main table',
    )
  },
)

test("a database attached through execute, and PRAGMAs that change results, stay the writer's", T, async (t) => {
  const { db, dir } = await openTxDb(t, PLACEMENT)
  await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v); INSERT INTO t (v) VALUES ('a'), ('B'), ('c')")
  const like = "SELECT v FROM t WHERE v LIKE 'b' ORDER BY id"
  assert.deepStrictEqual(await db.select(like), [{ v: 'B' }], 'LIKE ignores case')
  await db.execute('PRAGMA case_sensitive_like = ON')
  assert.deepStrictEqual(await db.select(like), [{ v: 'B' }], 'a read does not take the setting from the writer')
  const other = `${dir}/other.db`
  await db.execute(`ATTACH DATABASE '${other}' AS other; CREATE TABLE other.o (x); INSERT INTO other.o VALUES (1)`)
  await expectReject(() => db.select('SELECT x FROM other.o'), ResqliteError, 'SQLITE_ERROR', /no such table/)
})

test("last_insert_rowid() and changes() in a read are a reader's (0), never the writer's", T, async (t) => {
  const db = await tdb(t, PLACEMENT)
  const read = 'SELECT last_insert_rowid() AS id, changes() AS n, total_changes() AS total'
  for (let i = 0; i < 5; i++) {
    const wrote = await db.execute(INSERT, [`v${i}`])
    assert.ok(wrote.lastInsertRowid > 0)
    assert.deepStrictEqual(await db.selectOne(read), { id: 0, n: 0, total: 0 }, `after insert ${i}`)
    assert.deepStrictEqual(await db.selectOne('SELECT count(*) AS n FROM t'), { n: i + 1 }, 'read-your-writes')
  }
})
