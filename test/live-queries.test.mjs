// Live queries (db.stream): first emission, re-emission after committed writes, column-aware
// invalidation, transactions and savepoints, dedupe of identical queries, unchanged-result
// suppression, and reads through joins, views, subqueries, CTEs and aggregates.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { openDb } from './helpers.mjs'
import { assertQuiet, collect, counters, settle, waitCounters, waitUntil } from './live-helpers.mjs'

/** A database with `t (id INTEGER PRIMARY KEY, name, score, other)` holding three rows. */
async function tdb(t) {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score INTEGER, other TEXT)')
  await db.execute("INSERT INTO t (name, score, other) VALUES ('a', 1, 'x'), ('b', 2, 'y'), ('c', 3, 'z')")
  return db
}

const ALL = 'SELECT id, name FROM t ORDER BY id'

test('subscribe delivers the current rows first, to a callback or an observer', async (t) => {
  const db = await tdb(t)
  const before = await counters(db)
  const live = db.stream(ALL)
  assert.equal(live.sql, ALL)
  // lazy: nothing runs until the first subscription
  assert.equal((await counters(db)).queries, 0)

  const got = []
  let syncDelivery = true
  const stop = live.subscribe(
    (rows) => got.push(rows),
    (e) => assert.fail(`unexpected error: ${e}`),
  )
  syncDelivery = got.length > 0
  assert.equal(syncDelivery, false, 'the first rows arrive asynchronously, not during subscribe()')
  assert.equal(typeof stop, 'function')
  assert.equal(typeof stop.unsubscribe, 'function')
  assert.equal(stop.closed, false)

  const c = collect(db.stream('SELECT name, score FROM t WHERE score >= ? ORDER BY id', [2]))
  assert.deepStrictEqual(await c.next(), [
    { name: 'b', score: 2 },
    { name: 'c', score: 3 },
  ])
  await waitUntil(() => got.length > 0, 'the first rows of the callback subscriber')
  assert.deepStrictEqual(got, [
    [
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
      { id: 3, name: 'c' },
    ],
  ])
  const s = await counters(db)
  assert.equal(s.active, 2)
  assert.equal(s.queries, 2)
  assert.equal(s.requeries, 0, 'first runs are not requeries')
  assert.equal(s.emissions - before.emissions, 2)

  stop()
  assert.equal(stop.closed, true)
  c.stop.unsubscribe()
  assert.equal(c.stop.closed, true)
  stop() // idempotent
  const after = await counters(db)
  assert.equal(after.active, 0)
  assert.equal(after.queries, 0)
})

test('a committed INSERT, UPDATE or DELETE re-emits the new rows', async (t) => {
  const db = await tdb(t)
  const c = collect(db.stream(ALL))
  await c.next()

  await db.execute("INSERT INTO t (name, score, other) VALUES ('d', 4, 'w')")
  assert.deepStrictEqual(await c.next(), await db.select(ALL))
  assert.equal(c.last.length, 4)

  await db.execute("UPDATE t SET name = 'B' WHERE id = 2")
  assert.deepStrictEqual(await c.next(), await db.select(ALL))
  assert.equal(c.last[1].name, 'B')

  await db.execute('DELETE FROM t WHERE id = 1')
  assert.deepStrictEqual(await c.next(), await db.select(ALL))
  assert.equal(c.last.length, 3)

  await db.executeBatch('INSERT INTO t (name) VALUES (?)', [['e'], ['f']])
  assert.deepStrictEqual(await c.next(), await db.select(ALL))
  assert.equal(c.last.length, 5)
  assert.deepStrictEqual(c.errors, [])
  assert.equal(c.completed, 0)
})

test('an UPDATE of a column the stream does not read re-runs nothing (skippedByColumns)', async (t) => {
  const db = await tdb(t)
  const c = collect(db.stream(ALL)) // reads id, name
  await c.next()
  const before = await counters(db)

  await db.execute("UPDATE t SET other = 'changed'")
  await db.execute('UPDATE t SET score = score + 10 WHERE id = 2')
  const after = await counters(db)
  assert.equal(after.requeries, before.requeries, 'no re-query for columns the stream does not read')
  assert.equal(after.skippedByColumns, before.skippedByColumns + 2, 'each write counted as skipped by columns')
  await assertQuiet(c)

  // a column read only in WHERE or ORDER BY is read too
  const w = collect(db.stream('SELECT id FROM t WHERE score > 10'))
  assert.deepStrictEqual(await w.next(), [{ id: 2 }])
  const o = collect(db.stream('SELECT id FROM t ORDER BY other, id'))
  await o.next()
  const b2 = await counters(db)
  await db.execute('UPDATE t SET score = 100 WHERE id = 1')
  assert.deepStrictEqual(await w.next(), [{ id: 1 }, { id: 2 }])
  const a2 = await counters(db)
  // w re-runs (score is in its WHERE); ALL and o read no score: skipped
  assert.equal(a2.requeries, b2.requeries + 1)
  assert.equal(a2.skippedByColumns, b2.skippedByColumns + 2)
  await db.execute("UPDATE t SET other = 'a' WHERE id = 3")
  assert.deepStrictEqual(await o.next(), [{ id: 3 }, { id: 1 }, { id: 2 }])
  await assertQuiet(c)
})

test('an UPDATE that sets a column to the value it already has re-runs nothing', async (t) => {
  const db = await tdb(t)
  const c = collect(db.stream(ALL))
  await c.next()
  const before = await counters(db)
  const r = await db.execute('UPDATE t SET name = name, id = id')
  assert.equal(r.changes, 3, 'SQLite still counts the rows as changed')
  await db.execute("UPDATE t SET name = 'b' WHERE id = 2")
  const after = await counters(db)
  assert.equal(after.requeries, before.requeries)
  assert.equal(after.skippedByColumns, before.skippedByColumns, 'nothing changed at all: not even a skip')
  await assertQuiet(c)
})

test('count(*) does not re-run for an UPDATE, and does for an INSERT or DELETE', async (t) => {
  const db = await tdb(t)
  const c = collect(db.stream('SELECT count(*) AS n FROM t'))
  assert.deepStrictEqual(await c.next(), [{ n: 3 }])
  const before = await counters(db)
  await db.execute("UPDATE t SET name = 'zz', score = 9, other = 'q'")
  const mid = await counters(db)
  assert.equal(mid.requeries, before.requeries, 'count(*) reads no column an UPDATE changes')
  assert.equal(mid.skippedByColumns, before.skippedByColumns + 1)
  await assertQuiet(c)

  await db.execute("INSERT INTO t (name) VALUES ('n')")
  assert.deepStrictEqual(await c.next(), [{ n: 4 }])
  assert.equal((await counters(db)).requeries, mid.requeries + 1)
  await db.execute('DELETE FROM t WHERE id = 1')
  assert.deepStrictEqual(await c.next(), [{ n: 3 }])
})

test('a transaction invalidates once, at its outermost commit', async (t) => {
  const db = await tdb(t)
  const c = collect(db.stream(ALL))
  await c.next()
  const before = await counters(db)
  await db.transaction(async (tx) => {
    for (let i = 0; i < 5; i++) {
      await tx.execute('INSERT INTO t (name) VALUES (?)', [`n${i}`])
      // the write has completed: had it invalidated anything, the re-run would be queued now
      assert.equal((await counters(db)).requeries, before.requeries, 'nothing is invalidated before the commit')
    }
    await tx.transaction(async (inner) => {
      await inner.execute("UPDATE t SET name = 'nested' WHERE id = 1")
    })
    assert.equal((await counters(db)).requeries, before.requeries, 'a released savepoint is not a commit')
  })
  assert.equal((await counters(db)).requeries, before.requeries + 1, 'one re-query for the whole transaction')
  const rows = await c.next()
  assert.deepStrictEqual(rows, await db.select(ALL))
  assert.equal(rows.length, 8)
  assert.equal(rows[0].name, 'nested')
  await assertQuiet(c)
  assert.equal(c.deliveries.length, 2, 'no intermediate state was delivered')
})

test('a rolled-back transaction invalidates nothing', async (t) => {
  const db = await tdb(t)
  const c = collect(db.stream(ALL))
  const n = collect(db.stream('SELECT count(*) AS n FROM t'))
  await c.next()
  await n.next()
  const before = await counters(db)
  await assert.rejects(
    db.transaction(async (tx) => {
      await tx.execute("INSERT INTO t (name) VALUES ('gone')")
      await tx.execute("UPDATE t SET name = 'gone' WHERE id = 1")
      await tx.execute('DELETE FROM t WHERE id = 2')
      throw new Error('roll back')
    }),
    /roll back/,
  )
  // a failing autocommit statement rolls back too
  await assert.rejects(db.execute("INSERT INTO t (id, name) VALUES (1, 'dup')"), /UNIQUE|constraint/i)
  const after = await counters(db)
  assert.equal(after.requeries, before.requeries)
  assert.equal(after.skippedByColumns, before.skippedByColumns)
  await assertQuiet(c)
  await assertQuiet(n, 0)
  assert.deepStrictEqual(c.last, await db.select(ALL))
})

test('a savepoint rolled back inside a committed transaction invalidates nothing it undid', async (t) => {
  const db = await tdb(t)
  await db.execute('CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT)')
  await db.execute("INSERT INTO u (v) VALUES ('u1')")
  const baseline = await counters(db)
  const st = collect(db.stream(ALL))
  const su = collect(db.stream('SELECT id, v FROM u ORDER BY id'))
  await settle(db, [st, su], baseline)
  await st.next()
  await su.next()
  const before = await counters(db)

  await db.transaction(async (tx) => {
    await tx.execute("INSERT INTO t (name) VALUES ('kept')")
    await assert.rejects(
      tx.transaction(async (inner) => {
        await inner.execute("INSERT INTO u (v) VALUES ('undone')")
        await inner.execute("UPDATE u SET v = 'undone too'")
        throw new Error('undo the savepoint')
      }),
      /undo the savepoint/,
    )
  })
  const after = await counters(db)
  assert.equal(after.requeries, before.requeries + 1, 'only the stream on t re-runs')
  assert.deepStrictEqual(await st.next(), await db.select(ALL))
  assert.equal(st.last.at(-1).name, 'kept')
  await settle(db, [st, su], baseline)
  assert.equal(su.deliveries.length, 1, 'the stream on u was not re-run or re-delivered')
  assert.deepStrictEqual(su.last, [{ id: 1, v: 'u1' }])

  // the reverse: the outer level's change to u is rolled back with the whole transaction,
  // even though a nested savepoint touching t was released
  const b2 = await counters(db)
  await assert.rejects(
    db.transaction(async (tx) => {
      await tx.transaction(async (inner) => inner.execute("INSERT INTO t (name) VALUES ('released')"))
      await tx.execute("INSERT INTO u (v) VALUES ('x')")
      throw new Error('outer rollback')
    }),
    /outer rollback/,
  )
  assert.equal((await counters(db)).requeries, b2.requeries)

  // a savepoint rolled back, then more work on the same table that is committed: re-runs
  await db.transaction(async (tx) => {
    await tx
      .transaction(async (inner) => {
        await inner.execute("INSERT INTO u (v) VALUES ('no')")
        throw new Error('x')
      })
      .catch(() => {})
    await tx.execute("INSERT INTO u (v) VALUES ('yes')")
  })
  assert.deepStrictEqual(await su.next(), [
    { id: 1, v: 'u1' },
    { id: 2, v: 'yes' },
  ])
})

test('identical (sql, params) share one query: 100 subscribers, 1 write → 1 re-query, 100 deliveries', async (t) => {
  const db = await tdb(t)
  const before = await counters(db)
  const cs = []
  for (let i = 0; i < 100; i++) cs.push(collect(db.stream('SELECT id, name FROM t WHERE score >= ? ORDER BY id', [2])))
  await Promise.all(cs.map((c) => c.next()))
  let s = await counters(db)
  assert.equal(s.queries, 1, 'one native query')
  assert.equal(s.active, 100)
  assert.equal(s.emissions - before.emissions, 100)
  const first = cs[0].last
  for (const c of cs) assert.equal(c.last, first, 'every subscriber gets the same rows array')

  await db.execute("UPDATE t SET name = 'B' WHERE id = 2")
  await Promise.all(cs.map((c) => c.next()))
  s = await counters(db)
  assert.equal(s.requeries - before.requeries, 1, 'one re-query')
  assert.equal(s.emissions - before.emissions, 200, '100 more deliveries')
  for (const c of cs) {
    assert.deepStrictEqual(c.last, [
      { id: 2, name: 'B' },
      { id: 3, name: 'c' },
    ])
    assert.equal(c.deliveries.length, 2)
  }

  // a late subscriber joins the running query: it gets the current rows, no new run
  const late = collect(db.stream('SELECT id, name FROM t WHERE score >= ? ORDER BY id', [2]))
  assert.deepStrictEqual(await late.next(), cs[0].last)
  s = await counters(db)
  assert.equal(s.queries, 1)
  assert.equal(s.requeries - before.requeries, 1)

  // unsubscribing all but one keeps the query; the last one drops it
  for (const c of cs) c.stop()
  assert.equal((await counters(db)).queries, 1)
  late.stop()
  assert.equal((await counters(db)).queries, 0)
  assert.equal((await counters(db)).active, 0)
})

test("the dedupe key distinguishes parameter types as SQLite does: [1] and [1n] share, [1] and ['1'] do not", async (t) => {
  const db = await openDb(t)
  // k has no declared type (BLOB affinity): integer 1 and text '1' are different values
  await db.execute('CREATE TABLE p (id INTEGER PRIMARY KEY, k)')
  await db.execute("INSERT INTO p (id, k) VALUES (10, 1), (20, '1'), (30, 1.5), (40, x'01')")
  const SQL = 'SELECT id FROM p WHERE k = ? ORDER BY id'
  const before = await counters(db)
  const num = collect(db.stream(SQL, [1]))
  const big = collect(db.stream(SQL, [1n]))
  const str = collect(db.stream(SQL, ['1']))
  const flt = collect(db.stream(SQL, [1.5]))
  const blob = collect(db.stream(SQL, [new Uint8Array([1])]))
  const named = collect(db.stream('SELECT id FROM p WHERE k = :k ORDER BY id', { k: 1 }))
  assert.deepStrictEqual(await num.next(), [{ id: 10 }])
  assert.deepStrictEqual(await big.next(), [{ id: 10 }], '1n is the same SQLite integer as 1')
  assert.deepStrictEqual(await str.next(), [{ id: 20 }], "'1' is text: a different query with different rows")
  assert.deepStrictEqual(await flt.next(), [{ id: 30 }])
  assert.deepStrictEqual(await blob.next(), [{ id: 40 }])
  assert.deepStrictEqual(await named.next(), [{ id: 10 }])
  const s = await counters(db)
  assert.equal(s.active, 6)
  assert.equal(s.queries, 5, '[1] and [1n] share one query; every other one is its own')
  assert.equal(s.emissions - before.emissions, 6)

  await db.execute("INSERT INTO p (id, k) VALUES (50, '1')")
  assert.deepStrictEqual(await str.next(), [{ id: 20 }, { id: 50 }])
  await assertQuiet(num, 100)
  assert.equal(big.deliveries.length, 1)
})

test('no parameters, undefined and [] are the same (sql, params): one shared query', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE p (id INTEGER PRIMARY KEY)')
  const a = collect(db.stream('SELECT count(*) AS n FROM p'))
  const b = collect(db.stream('SELECT count(*) AS n FROM p', undefined))
  const c = collect(db.stream('SELECT count(*) AS n FROM p', []))
  for (const x of [a, b, c]) assert.deepStrictEqual(await x.next(), [{ n: 0 }])
  await db.execute('INSERT INTO p DEFAULT VALUES')
  for (const x of [a, b, c]) assert.deepStrictEqual(await x.next(), [{ n: 1 }])
  const s = await counters(db)
  assert.equal(s.active, 3)
  assert.equal(s.queries, 1, 'params.ts documents "undefined and [] mean none": they should dedupe to one query')
})

test('a re-run whose result equals the last delivered one is suppressed (unchangedSuppressed)', async (t) => {
  const db = await tdb(t)
  const baseline = await counters(db)
  const c = collect(db.stream('SELECT id, name FROM t WHERE score >= 2 ORDER BY id'))
  await settle(db, [c], baseline)
  await c.next()
  const before = await counters(db)

  // id 1 is outside the filter: the stream reads score, so it re-runs, but the result is equal
  await db.execute('UPDATE t SET score = 0 WHERE id = 1')
  assert.equal((await counters(db)).requeries, before.requeries + 1)
  const after = await settle(db, [c], baseline)
  assert.equal(after.unchangedSuppressed, before.unchangedSuppressed + 1)
  assert.equal(after.emissions, before.emissions, 'nothing emitted')
  assert.equal(c.deliveries.length, 1)

  // an insert outside the filter, and an update that changes a value back and forth
  await db.execute("INSERT INTO t (name, score) VALUES ('low', 1)")
  await db.transaction(async (tx) => {
    await tx.execute("UPDATE t SET name = 'tmp' WHERE id = 2")
    await tx.execute("UPDATE t SET name = 'b' WHERE id = 2")
  })
  const end = await settle(db, [c], baseline)
  assert.equal(end.unchangedSuppressed, before.unchangedSuppressed + 3)
  assert.equal(c.deliveries.length, 1, 'still nothing delivered')

  // a real change is delivered after suppressed runs
  await db.execute('UPDATE t SET score = 5 WHERE id = 1')
  assert.deepStrictEqual(await c.next(), [
    { id: 1, name: 'a' },
    { id: 2, name: 'b' },
    { id: 3, name: 'c' },
  ])
})

test('a subscriber joining later gets the last rows once, then every change', async (t) => {
  const db = await tdb(t)
  const first = collect(db.stream(ALL))
  await first.next()
  await db.execute("INSERT INTO t (name) VALUES ('d')")
  await first.next()
  const second = collect(db.stream(ALL))
  assert.deepStrictEqual(await second.next(), first.last)
  await assertQuiet(second, 100)
  assert.equal(second.deliveries.length, 1)
  await db.execute('DELETE FROM t WHERE id = 4')
  await Promise.all([first.next(), second.next()])
  assert.deepStrictEqual(second.last, await db.select(ALL))
  assert.equal(first.last, second.last)
})

test('joins, views, subqueries, CTEs and aggregates resolve to their base tables and columns', async (t) => {
  const db = await openDb(t)
  await db.execute(`
    CREATE TABLE author (id INTEGER PRIMARY KEY, name TEXT, bio TEXT);
    CREATE TABLE book (id INTEGER PRIMARY KEY, author_id INTEGER REFERENCES author(id), title TEXT, pages INTEGER, notes TEXT);
    CREATE VIEW book_view AS SELECT b.id, b.title, a.name AS author FROM book b JOIN author a ON a.id = b.author_id;
    CREATE VIEW nested_view AS SELECT author, count(*) AS n FROM book_view GROUP BY author;
    INSERT INTO author (id, name, bio) VALUES (1, 'ann', 'x'), (2, 'bob', 'y');
    INSERT INTO book (author_id, title, pages, notes) VALUES (1, 'a1', 100, ''), (1, 'a2', 200, ''), (2, 'b1', 300, '');
  `)
  const queries = {
    join: 'SELECT b.title, a.name FROM book b JOIN author a ON a.id = b.author_id ORDER BY b.id',
    view: 'SELECT * FROM book_view ORDER BY id',
    nestedView: 'SELECT * FROM nested_view ORDER BY author',
    subquery: 'SELECT name FROM author WHERE id IN (SELECT author_id FROM book WHERE pages > 150) ORDER BY name',
    scalarSubquery:
      'SELECT name, (SELECT sum(pages) FROM book WHERE author_id = author.id) AS pages FROM author ORDER BY id',
    cte: 'WITH big AS (SELECT author_id, title FROM book WHERE pages >= 200) SELECT a.name, big.title FROM big JOIN author a ON a.id = big.author_id ORDER BY big.title',
    recursiveCte:
      'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < (SELECT count(*) FROM book)) SELECT n FROM r',
    aggregate: 'SELECT author_id, count(*) AS n, sum(pages) AS pages FROM book GROUP BY author_id ORDER BY author_id',
    union: 'SELECT name AS x FROM author UNION ALL SELECT title FROM book ORDER BY 1',
  }
  const baseline = await counters(db)
  const cs = Object.fromEntries(Object.entries(queries).map(([k, sql]) => [k, collect(db.stream(sql))]))
  const all = Object.values(cs)
  await settle(db, all, baseline)
  for (const [k, sql] of Object.entries(queries)) assert.deepStrictEqual(cs[k].last, await db.select(sql), k)

  const expectRerun = async (write, names) => {
    const counts = Object.fromEntries(Object.entries(cs).map(([k, c]) => [k, c.deliveries.length]))
    const b = await counters(db)
    await db.execute(write)
    const a = await settle(db, all, baseline)
    const rerun = a.requeries - b.requeries
    for (const [k, sql] of Object.entries(queries)) {
      assert.deepStrictEqual(cs[k].last, await db.select(sql), `${k} after ${write}`)
      if (!names.includes(k))
        assert.equal(cs[k].deliveries.length, counts[k], `${k} must not be re-delivered after ${write}`)
    }
    return { rerun, skipped: a.skippedByColumns - b.skippedByColumns }
  }

  // author.name is read by join, view, nestedView, subquery, scalarSubquery, cte, union
  let r = await expectRerun("UPDATE author SET name = 'anne' WHERE id = 1", [
    'join',
    'view',
    'nestedView',
    'subquery',
    'scalarSubquery',
    'cte',
    'union',
  ])
  assert.equal(r.rerun, 7, 'every query reading author.name re-runs (through views, subqueries and CTEs)')
  // author.bio is read by nothing: every query reading author is skipped by columns
  r = await expectRerun("UPDATE author SET bio = 'new'", [])
  assert.equal(r.rerun, 0)
  assert.equal(r.skipped, 7)
  // book.notes is read by nothing
  r = await expectRerun("UPDATE book SET notes = 'n'", [])
  assert.equal(r.rerun, 0)
  assert.equal(r.skipped, 9, 'every query reads book')
  // book.pages: subquery, scalarSubquery, cte, aggregate (and the join reads no pages)
  r = await expectRerun('UPDATE book SET pages = 120 WHERE id = 2', ['subquery', 'scalarSubquery', 'cte', 'aggregate'])
  assert.equal(r.rerun, 4)
  // book.title
  // (nestedView may re-run too: it reads book_view, whose title column it does not use, and
  // SQLite's authorizer reports every column of a view; its result is then unchanged)
  r = await expectRerun("UPDATE book SET title = 'B1' WHERE id = 3", ['join', 'view', 'cte', 'union'])
  assert.ok(r.rerun >= 4 && r.rerun <= 5, `4 or 5 re-runs, got ${r.rerun}`)
  // an INSERT into book changes every query on book
  r = await expectRerun("INSERT INTO book (author_id, title, pages) VALUES (2, 'b2', 500)", Object.keys(queries))
  assert.equal(r.rerun, 9)
  assert.deepStrictEqual(cs.recursiveCte.last.length, 4)
})

test('a stream on a table created later works, and a stream on a constant query never re-runs', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE a (x)')
  const constant = collect(db.stream("SELECT 1 AS one, 'two' AS two"))
  assert.deepStrictEqual(await constant.next(), [{ one: 1, two: 'two' }])
  const before = await counters(db)
  await db.execute('INSERT INTO a VALUES (1)')
  await db.execute('UPDATE a SET x = 2')
  await db.execute('DELETE FROM a')
  assert.equal((await counters(db)).requeries, before.requeries, 'a query reading no table depends on nothing')
  await assertQuiet(constant)
  await waitCounters(db, (s) => s.active === 1, 'one active subscription')
})
