// Live queries: every way a committed write can change what a stream reads (issue item 3):
// triggers, foreign-key cascades, WITHOUT ROWID tables, DELETE without WHERE, INSERT OR REPLACE,
// virtual tables (FTS5, R-Tree), attached databases, ALTER/DROP TABLE, no-op UPDATEs, and
// changes made by another connection (watchExternalChanges).

import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { Database } from '../dist/esm/index.mjs'
import { openDb, tempDir } from './helpers.mjs'
import { assertQuiet, collect, counters, settle, waitCounters, waitUntil } from './live-helpers.mjs'

/** Subscribes and waits for the first rows; returns the collector. */
async function live(db, sql, params) {
  const c = collect(db.stream(sql, params))
  await c.next()
  return c
}

/** Asserts the collector's next delivery equals a fresh select of the same SQL. */
async function nextIsFresh(db, c, sql, params, what) {
  const rows = await c.next().catch((e) => assert.fail(`${what}: ${e.message}`))
  assert.deepStrictEqual(rows, await db.select(sql, params), what)
  return rows
}

test('a trigger writing another table re-runs streams on that table', async (t) => {
  const db = await openDb(t)
  await db.execute(`
    CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);
    CREATE TABLE audit (id INTEGER PRIMARY KEY, what TEXT, ref INTEGER);
    CREATE TRIGGER t_ins AFTER INSERT ON t BEGIN INSERT INTO audit (what, ref) VALUES ('ins', new.id); END;
    CREATE TRIGGER t_upd AFTER UPDATE OF v ON t BEGIN UPDATE audit SET what = 'upd' WHERE ref = new.id; END;
  `)
  const SQL = 'SELECT what, ref FROM audit ORDER BY id'
  const c = await live(db, SQL)
  assert.deepStrictEqual(c.last, [])
  await db.execute("INSERT INTO t (v) VALUES ('a')")
  assert.deepStrictEqual(await nextIsFresh(db, c, SQL, undefined, 'after an insert firing the trigger'), [
    { what: 'ins', ref: 1 },
  ])
  await db.execute("UPDATE t SET v = 'b' WHERE id = 1")
  assert.deepStrictEqual(await nextIsFresh(db, c, SQL, undefined, 'after an update firing the trigger'), [
    { what: 'upd', ref: 1 },
  ])
})

test('a foreign-key cascade (ON DELETE CASCADE, ON UPDATE CASCADE) re-runs streams on the child table', async (t) => {
  const db = await openDb(t)
  await db.execute(`
    CREATE TABLE parent (id INTEGER PRIMARY KEY, code TEXT UNIQUE, name TEXT);
    CREATE TABLE child (id INTEGER PRIMARY KEY, parent_code TEXT REFERENCES parent(code) ON DELETE CASCADE ON UPDATE CASCADE, v TEXT);
    INSERT INTO parent (id, code, name) VALUES (1, 'p1', 'one'), (2, 'p2', 'two');
    INSERT INTO child (parent_code, v) VALUES ('p1', 'a'), ('p1', 'b'), ('p2', 'c');
  `)
  const SQL = 'SELECT parent_code, v FROM child ORDER BY id'
  const c = await live(db, SQL)
  assert.equal(c.last.length, 3)
  await db.execute("UPDATE parent SET code = 'P2' WHERE id = 2")
  assert.deepStrictEqual(await nextIsFresh(db, c, SQL, undefined, 'after ON UPDATE CASCADE'), [
    { parent_code: 'p1', v: 'a' },
    { parent_code: 'p1', v: 'b' },
    { parent_code: 'P2', v: 'c' },
  ])
  await db.execute('DELETE FROM parent WHERE id = 1')
  assert.deepStrictEqual(await nextIsFresh(db, c, SQL, undefined, 'after ON DELETE CASCADE'), [
    { parent_code: 'P2', v: 'c' },
  ])
})

test('a WITHOUT ROWID table: inserts, updates (column-filtered) and deletes', async (t) => {
  const db = await openDb(t)
  await db.execute(`
    CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT, extra TEXT) WITHOUT ROWID;
    INSERT INTO kv VALUES ('a', '1', 'x'), ('b', '2', 'y');
  `)
  const SQL = 'SELECT k, v FROM kv ORDER BY k'
  const c = await live(db, SQL)
  await db.execute("INSERT INTO kv VALUES ('c', '3', 'z')")
  assert.equal((await nextIsFresh(db, c, SQL, undefined, 'after INSERT')).length, 3)
  await db.execute("UPDATE kv SET v = 'two' WHERE k = 'b'")
  assert.equal((await nextIsFresh(db, c, SQL, undefined, 'after UPDATE of v'))[1].v, 'two')
  // changing the primary key of a WITHOUT ROWID table
  await db.execute("UPDATE kv SET k = 'aa' WHERE k = 'a'")
  assert.equal((await nextIsFresh(db, c, SQL, undefined, 'after UPDATE of the key'))[0].k, 'aa')
  const before = await counters(db)
  await db.execute("UPDATE kv SET extra = 'changed'")
  const after = await counters(db)
  assert.equal(after.requeries, before.requeries, 'a column the stream does not read')
  assert.equal(after.skippedByColumns, before.skippedByColumns + 1)
  await db.execute("DELETE FROM kv WHERE k = 'c'")
  assert.equal((await nextIsFresh(db, c, SQL, undefined, 'after DELETE')).length, 2)
})

test('DELETE FROM t without WHERE (the truncate path) re-runs streams on t', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  await db.executeBatch(
    'INSERT INTO t (v) VALUES (?)',
    Array.from({ length: 50 }, (_, i) => [`v${i}`]),
  )
  const rows = await live(db, 'SELECT id, v FROM t ORDER BY id')
  const count = await live(db, 'SELECT count(*) AS n FROM t')
  assert.equal(rows.last.length, 50)
  assert.deepStrictEqual(count.last, [{ n: 50 }])
  await db.execute('DELETE FROM t')
  assert.deepStrictEqual(await rows.next(), [])
  assert.deepStrictEqual(await count.next(), [{ n: 0 }])
})

test('INSERT OR REPLACE: the row deleted by the conflict is seen, and streams reading the deleted row re-run', async (t) => {
  const db = await openDb(t)
  await db.execute(`
    CREATE TABLE t (id INTEGER PRIMARY KEY, email TEXT UNIQUE, name TEXT);
    CREATE TABLE other (id INTEGER PRIMARY KEY);
    INSERT INTO t (id, email, name) VALUES (1, 'a@x', 'a'), (2, 'b@x', 'b');
  `)
  const SQL = 'SELECT id, email, name FROM t ORDER BY id'
  const c = await live(db, SQL)
  const byId = await live(db, 'SELECT name FROM t WHERE id = ?', [1])
  // conflicts on email: row 1 is deleted, row 3 inserted
  await db.execute("INSERT OR REPLACE INTO t (id, email, name) VALUES (3, 'a@x', 'a2')")
  assert.deepStrictEqual(await nextIsFresh(db, c, SQL, undefined, 'after INSERT OR REPLACE'), [
    { id: 2, email: 'b@x', name: 'b' },
    { id: 3, email: 'a@x', name: 'a2' },
  ])
  assert.deepStrictEqual(await byId.next(), [], 'the replaced row is gone')
  // REPLACE on the primary key (same rowid)
  await db.execute("REPLACE INTO t (id, email, name) VALUES (2, 'b@x', 'b2')")
  assert.equal((await nextIsFresh(db, c, SQL, undefined, 'after REPLACE on the key'))[0].name, 'b2')
  // UPSERT updating a read column
  await db.execute(
    "INSERT INTO t (id, email, name) VALUES (9, 'b@x', 'ignored') ON CONFLICT(email) DO UPDATE SET name = 'upserted'",
  )
  assert.equal((await nextIsFresh(db, c, SQL, undefined, 'after an UPSERT'))[0].name, 'upserted')
})

test('FTS5: an INSERT into the virtual table (autocommit) re-runs a MATCH stream', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE VIRTUAL TABLE fts USING fts5(title, body)')
  const SQL = 'SELECT rowid, title FROM fts WHERE fts MATCH ? ORDER BY rowid'
  // subscribed while the table is still empty
  const c = await live(db, SQL, ['hello'])
  assert.deepStrictEqual(c.last, [])
  await db.execute("INSERT INTO fts (title, body) VALUES ('first', 'nothing to see')")
  await assertQuiet(c, 100)
  await db.execute("INSERT INTO fts (title, body) VALUES ('greeting', 'hello world')")
  assert.deepStrictEqual(await nextIsFresh(db, c, SQL, ['hello'], 'after an autocommit INSERT into fts'), [
    { rowid: 2, title: 'greeting' },
  ])
  await db.execute("UPDATE fts SET body = 'hello again' WHERE rowid = 1")
  assert.equal((await nextIsFresh(db, c, SQL, ['hello'], 'after an autocommit UPDATE of fts')).length, 2)
  await db.execute('DELETE FROM fts WHERE rowid = 2')
  assert.deepStrictEqual(await nextIsFresh(db, c, SQL, ['hello'], 'after an autocommit DELETE from fts'), [
    { rowid: 1, title: 'first' },
  ])
})

test('FTS5: writes to the virtual table inside a transaction re-run a MATCH stream at commit', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE VIRTUAL TABLE fts USING fts5(body)')
  const SQL = 'SELECT rowid, body FROM fts WHERE fts MATCH ? ORDER BY rowid'
  const c = await live(db, SQL, ['hello'])
  await db.transaction(async (tx) => {
    await tx.execute("INSERT INTO fts (body) VALUES ('hello world')")
    await tx.execute("INSERT INTO fts (body) VALUES ('goodbye')")
  })
  assert.deepStrictEqual(await nextIsFresh(db, c, SQL, ['hello'], 'after a committed transaction'), [
    { rowid: 1, body: 'hello world' },
  ])
  // rolled back: nothing
  const before = await counters(db)
  await assert.rejects(
    db.transaction(async (tx) => {
      await tx.execute("INSERT INTO fts (body) VALUES ('hello rollback')")
      throw new Error('no')
    }),
    /no/,
  )
  assert.equal(
    (await counters(db)).requeries,
    before.requeries,
    'a rolled-back virtual-table write invalidates nothing',
  )
  await assertQuiet(c)
})

test('R-Tree: an INSERT into the virtual table re-runs a stream on it', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE VIRTUAL TABLE rt USING rtree(id, x0, x1)')
  const SQL = 'SELECT id FROM rt WHERE x0 <= ? AND x1 >= ? ORDER BY id'
  const c = await live(db, SQL, [5, 5])
  await db.execute('INSERT INTO rt VALUES (1, 0, 10)')
  assert.deepStrictEqual(await nextIsFresh(db, c, SQL, [5, 5], 'after an INSERT into rt'), [{ id: 1 }])
  await db.execute('UPDATE rt SET x1 = 4 WHERE id = 1')
  assert.deepStrictEqual(await nextIsFresh(db, c, SQL, [5, 5], 'after an UPDATE of rt'), [])
})

test('an attached database (the attach option: on every connection) is tracked by schema', async (t) => {
  const dir = tempDir(t)
  const db = await Database.open(path.join(dir, 'main.db'), { attach: { aux: path.join(dir, 'aux.db') } })
  t.after(() => db.close())
  await db.execute(`
    CREATE TABLE aux.t (id INTEGER PRIMARY KEY, v TEXT, other TEXT);
    CREATE TABLE main.t (id INTEGER PRIMARY KEY, v TEXT);
    INSERT INTO aux.t (v, other) VALUES ('aux1', 'o');
    INSERT INTO main.t (v) VALUES ('main1');
  `)
  const auxRows = await live(db, 'SELECT id, v FROM aux.t ORDER BY id')
  const mainRows = await live(db, 'SELECT id, v FROM main.t ORDER BY id')
  assert.deepStrictEqual(auxRows.last, [{ id: 1, v: 'aux1' }])
  assert.deepStrictEqual(mainRows.last, [{ id: 1, v: 'main1' }])

  const before = await counters(db)
  await db.execute("INSERT INTO aux.t (v) VALUES ('aux2')")
  assert.deepStrictEqual(await auxRows.next(), [
    { id: 1, v: 'aux1' },
    { id: 2, v: 'aux2' },
  ])
  // same table name in main: not affected by the write to aux.t
  assert.equal((await counters(db)).requeries, before.requeries + 1, 'only the stream on aux.t re-runs')
  await db.execute("UPDATE aux.t SET other = 'changed'")
  assert.equal((await counters(db)).requeries, before.requeries + 1, 'aux.t.other is not read')
  await db.execute("UPDATE main.t SET v = 'main!'")
  assert.deepStrictEqual(await mainRows.next(), [{ id: 1, v: 'main!' }])
  await assertQuiet(auxRows, 100)
  await db.close()
})

test('ALTER TABLE ADD COLUMN (autocommit) re-runs streams on the table', async (t) => {
  const db = await openDb(t)
  await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a')")
  const SQL = 'SELECT * FROM t'
  const c = await live(db, SQL)
  assert.deepStrictEqual(c.last, [{ id: 1, v: 'a' }])
  await db.execute('ALTER TABLE t ADD COLUMN w INTEGER DEFAULT 7')
  assert.deepStrictEqual(await nextIsFresh(db, c, SQL, undefined, 'after ALTER TABLE ADD COLUMN'), [
    { id: 1, v: 'a', w: 7 },
  ])
})

test('DROP TABLE (autocommit): the re-run fails to the error callback, the stream is kept and recovers when the table is recreated', async (t) => {
  const db = await openDb(t)
  await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a')")
  const SQL = 'SELECT id, v FROM t ORDER BY id'
  const c = await live(db, SQL)
  await db.execute('DROP TABLE t')
  const err = await c.nextError()
  assert.match(String(err.message), /no such table/)
  assert.equal(c.completed, 0, 'a later failure keeps the stream')
  assert.equal((await counters(db)).active, 1)
  await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('again')")
  assert.deepStrictEqual(await c.waitFor((x) => x.deliveries.length > 1).then((x) => x.last), [{ id: 1, v: 'again' }])
  assert.equal(c.completed, 0)
})

test('ALTER TABLE / DROP TABLE inside a transaction: the stream re-runs, errors, stays, and recovers', async (t) => {
  const db = await openDb(t)
  await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a')")
  const SQL = 'SELECT * FROM t ORDER BY id'
  const c = await live(db, SQL)
  await db.transaction((tx) => tx.execute('ALTER TABLE t ADD COLUMN w DEFAULT 7'))
  assert.deepStrictEqual(await c.next(), [{ id: 1, v: 'a', w: 7 }])
  await db.transaction((tx) => tx.execute('DROP TABLE t'))
  const err = await c.nextError()
  assert.match(String(err.message), /no such table/)
  assert.equal(c.completed, 0)
  // a recreated table with the same rows as the last delivery is still delivered: the failed run
  // reset the comparison
  await db.transaction(async (tx) => {
    await tx.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, w)')
    await tx.execute("INSERT INTO t (v, w) VALUES ('a', 7)")
  })
  assert.deepStrictEqual(await c.next(), [{ id: 1, v: 'a', w: 7 }])
  assert.deepStrictEqual(c.events, ['next', 'next', 'error', 'next'])
  // a schema change on a table the stream does not read still re-runs it (schema-wide), but
  // the equal result is not delivered
  const before = await counters(db)
  await db.transaction((tx) => tx.execute('CREATE TABLE unrelated (x)'))
  assert.equal((await counters(db)).requeries, before.requeries + 1)
  await waitCounters(db, (s) => s.unchangedSuppressed === before.unchangedSuppressed + 1, 'the re-run to be suppressed')
  await assertQuiet(c)
})

test('an UPDATE setting a column to its current value invalidates nothing; mixed with a real change only the changed column counts', async (t) => {
  const db = await openDb(t)
  await db.execute(
    "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b TEXT, c REAL, d BLOB); INSERT INTO t VALUES (1, 'x', 'y', 1.5, x'0102'), (2, NULL, 'y', 0.0, x'')",
  )
  const ca = await live(db, 'SELECT id, a, c, d FROM t ORDER BY id')
  const cb = await live(db, 'SELECT id, b FROM t ORDER BY id')
  const before = await counters(db)
  // every type compared with itself: text, NULL, real, blob, empty blob
  await db.execute('UPDATE t SET a = a, b = b, c = c, d = d')
  await db.execute("UPDATE t SET a = 'x', c = 1.5, d = x'0102' WHERE id = 1")
  await db.execute('UPDATE t SET a = NULL WHERE id = 2')
  let after = await counters(db)
  assert.equal(after.requeries, before.requeries, 'nothing changed value')
  assert.equal(after.skippedByColumns, before.skippedByColumns)
  // b changes, a is set to its value: only the stream reading b re-runs
  await db.execute("UPDATE t SET a = a, b = 'z'")
  after = await counters(db)
  assert.equal(after.requeries, before.requeries + 1)
  assert.equal(after.skippedByColumns, before.skippedByColumns + 1)
  assert.deepStrictEqual(await cb.next(), [
    { id: 1, b: 'z' },
    { id: 2, b: 'z' },
  ])
  // a change of type with an equal-looking value is a change (d has no affinity): 1 → '1'
  await db.execute('UPDATE t SET d = 1 WHERE id = 2')
  assert.equal((await ca.next())[1].d, 1)
  await db.execute("UPDATE t SET d = '1' WHERE id = 2")
  assert.equal((await ca.next())[1].d, '1')
  await assertQuiet(ca, 50)
  await assertQuiet(cb, 0)
})

test('watchExternalChanges: another connection committing re-runs streams (hash-suppressed)', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'shared.db')
  const db = await Database.open(file, { watchExternalChanges: { interval: 20 } })
  t.after(() => db.close())
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  const other = await Database.open(file)
  t.after(() => other.close())

  const SQL = 'SELECT id, v FROM t ORDER BY id'
  const baseline = await counters(db)
  const c = collect(db.stream(SQL))
  const unrelated = collect(db.stream('SELECT 1 AS one'))
  await settle(db, [c, unrelated], baseline)
  await c.next()
  await other.execute("INSERT INTO t (v) VALUES ('from outside')")
  assert.deepStrictEqual(await c.next(), [{ id: 1, v: 'from outside' }])
  await other.execute("UPDATE t SET v = 'again' WHERE id = 1")
  assert.deepStrictEqual(await c.next(), [{ id: 1, v: 'again' }])
  // the own writer's commits are not mistaken for external ones, and equal results are
  // suppressed: the constant stream never delivers again
  await db.execute("INSERT INTO t (v) VALUES ('own')")
  assert.deepStrictEqual(await c.next(), await db.select(SQL))
  const s = await settle(db, [c, unrelated], baseline)
  assert.ok(s.unchangedSuppressed > baseline.unchangedSuppressed, 'the re-run of the constant stream was suppressed')
  assert.equal(unrelated.deliveries.length, 1)
  assert.deepStrictEqual(c.errors, [])
})

test("without watchExternalChanges, another connection's commit re-runs nothing", async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'shared.db')
  const db = await Database.open(file)
  t.after(() => db.close())
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  const other = await Database.open(file)
  t.after(() => other.close())
  const c = await live(db, 'SELECT id, v FROM t')
  const before = await counters(db)
  await other.execute("INSERT INTO t (v) VALUES ('from outside')")
  await assertQuiet(c, 300)
  assert.equal((await counters(db)).requeries, before.requeries)
  // the data is there for a fresh select: only the stream does not know
  assert.deepStrictEqual(await db.select('SELECT v FROM t'), [{ v: 'from outside' }])
})

// experiments/027: an UPDATE compares only the columns its SET lists name (its triggers' and
// foreign-key actions' included). What else can change a column must still be seen.
test('an UPDATE re-runs streams on the columns its trigger sets, even a trigger created after the UPDATE was first run', async (t) => {
  const db = await openDb(t)
  await db.execute(
    'CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, c INTEGER); INSERT INTO t VALUES (1, 0, 0, 0)',
  )
  const UPDATE_A = 'UPDATE t SET a = ? WHERE id = 1'
  const baseline = await counters(db)
  const cb = await live(db, 'SELECT b FROM t')
  const cc = await live(db, 'SELECT c FROM t')
  // the UPDATE is prepared and cached while no trigger exists: its SET list names a only
  const before = await counters(db)
  await db.execute(UPDATE_A, [1])
  const after = await counters(db)
  assert.equal(after.requeries, before.requeries, 'b and c are unchanged')
  assert.equal(after.skippedByColumns, before.skippedByColumns + 2)
  // a trigger made by this database: the cached UPDATE now also sets b
  await db.execute(
    'CREATE TRIGGER t_b AFTER UPDATE OF a ON t BEGIN UPDATE t SET b = new.a + 100 WHERE id = new.id; END',
  )
  assert.equal((await counters(db)).requeries, after.requeries + 2, 'the schema change re-runs both streams')
  await settle(db, [cb, cc], baseline)
  // SQLite prepares the UPDATE again on its first run after the change; the second run must
  // still know the trigger's SET list
  for (const a of [2, 3]) {
    const seen = cb.deliveries.length
    await db.execute(UPDATE_A, [a])
    await waitUntil(() => cb.deliveries.length > seen, `the stream on b to re-run after the trigger set b (a = ${a})`)
    assert.deepStrictEqual(cb.deliveries.at(-1), [{ b: 100 + a }])
  }
  // a trigger made by another connection: SQLite re-prepares the cached UPDATE as it runs
  const other = await Database.open(db.path)
  t.after(() => other.close())
  await other.execute(
    'CREATE TRIGGER t_c AFTER UPDATE OF a ON t BEGIN UPDATE t SET c = new.a + 200 WHERE id = new.id; END',
  )
  for (const a of [4, 5]) {
    const seen = cc.deliveries.length
    await db.execute(UPDATE_A, [a])
    await waitUntil(
      () => cc.deliveries.length > seen,
      `the stream on c to re-run after another connection's trigger set c (a = ${a})`,
    )
    assert.deepStrictEqual(cc.deliveries.at(-1), [{ c: 200 + a }])
  }
})

test('an UPDATE of a column a generated column is computed from re-runs streams on the generated column', async (t) => {
  const db = await openDb(t)
  await db.execute(`CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER,
    v INTEGER GENERATED ALWAYS AS (a * 2) VIRTUAL, s INTEGER GENERATED ALWAYS AS (a * 3) STORED);
    INSERT INTO t (id, a, b) VALUES (1, 1, 1)`)
  const cv = await live(db, 'SELECT v FROM t')
  const cs = await live(db, 'SELECT s FROM t')
  const cb = await live(db, 'SELECT b FROM t')
  await db.execute('UPDATE t SET a = 5 WHERE id = 1')
  assert.deepStrictEqual(await nextIsFresh(db, cv, 'SELECT v FROM t', undefined, 'the virtual generated column'), [
    { v: 10 },
  ])
  assert.deepStrictEqual(await nextIsFresh(db, cs, 'SELECT s FROM t', undefined, 'the stored generated column'), [
    { s: 15 },
  ])
  await assertQuiet(cb, 50, 'the stream on b')
})
