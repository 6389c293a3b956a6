// docs/api.md is a contract: each test below checks one promise of the page that no other test
// file checked, and names the promise and its section. (Promises other files already check are
// listed, with the test that checks each, in the lead's record of issue 30, not here.)

import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, test } from 'node:test'
import * as sqliteVec from 'sqlite-vec'
import * as esm from '../dist/esm/index.mjs'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { calibrate, expectReject, openDb, SLOW_SQL, tempDir } from './helpers.mjs'
import { collect, sleep, waitUntil } from './live-helpers.mjs'

const T = { timeout: 20_000 }

test('api.md intro: "The package exports two classes, Database and ResqliteError"', T, async () => {
  assert.deepStrictEqual(Object.keys(esm).sort(), ['Database', 'ResqliteError'])
  assert.equal(typeof Database, 'function')
  assert.equal(typeof ResqliteError, 'function')
  assert.ok(new ResqliteError('x', 'ERR_INTERNAL') instanceof Error)
})

test(
  'api.md intro: "Every method returns a promise. Bad arguments are rejected promises too, never synchronous throws"',
  T,
  async (t) => {
    const db = await openDb(t)
    const dir = tempDir(t)
    const calls = {
      'Database.open': () => Database.open(42),
      'Database.loadExtension': () => Database.loadExtension(42),
      select: () => db.select(42),
      selectOne: () => db.selectOne(42),
      selectBytes: () => db.selectBytes(42),
      execute: () => db.execute(42),
      executeBatch: () => db.executeBatch(42, []),
      columns: () => db.columns(42),
      prepare: () => db.prepare(42),
      transaction: () => db.transaction(42),
      backup: () => db.backup(42),
      rekey: () => db.rekey(42),
    }
    for (const [name, call] of Object.entries(calls)) {
      const err = await expectReject(call, TypeError, 'ERR_INVALID_ARG_TYPE')
      assert.ok(err.message.length > 0, name)
    }
    assert.ok(!fs.readdirSync(dir).length, 'nothing was created by a refused call')
  },
)

test(
  'api.md Summary: "stream" and "iterate" return at once, not a promise; the others return promises',
  T,
  async (t) => {
    const db = await openDb(t)
    const live = db.stream('SELECT 1 AS x')
    assert.equal(typeof live.then, 'undefined', 'a LiveQuery is not a thenable')
    assert.equal(typeof live.subscribe, 'function')
    const it = db.iterate('SELECT 1 AS x')
    assert.equal(typeof it.then, 'undefined', 'a RowIterator is not a thenable')
    assert.equal(typeof it[Symbol.asyncIterator], 'function')
    assert.equal(typeof it.pages, 'function')
    for (const p of [db.diagnostics(), db.serialize(), db.select('SELECT 1')]) assert.ok(p instanceof Promise)
    const rows = []
    for await (const row of it) rows.push(row)
    assert.deepStrictEqual(rows, [{ x: 1 }])
  },
)

describe('api.md Database.open: the option table', () => {
  test(
    'defaults: "readers … clamp(cpus − 1, 2, 4)", "busyTimeout … 5000", "readonly false", "safeIntegers false"',
    T,
    async (t) => {
      const db = await openDb(t)
      const cpus = os.availableParallelism()
      assert.equal(db.readers, Math.min(4, Math.max(2, cpus - 1)))
      assert.ok(db.readers >= 2 && db.readers <= 4)
      assert.equal(db.readonly, false)
      assert.deepStrictEqual(await db.select('SELECT * FROM pragma_busy_timeout'), [{ timeout: 5000 }])
      await db.transaction(async (tx) => {
        assert.deepStrictEqual(
          await tx.select('SELECT * FROM pragma_busy_timeout'),
          [{ timeout: 5000 }],
          'on the writer',
        )
      })
      const [{ n }] = await db.select('SELECT 9007199254740991 AS n')
      assert.equal(typeof n, 'number', 'safeIntegers is off by default')
    },
  )

  test('"busyTimeout: ms a connection waits": the value given reaches the readers and the writer', T, async (t) => {
    const db = await openDb(t, { busyTimeout: 1234, inlineBudget: 0 })
    assert.deepStrictEqual(await db.select('SELECT * FROM pragma_busy_timeout'), [{ timeout: 1234 }])
    await db.transaction(async (tx) => {
      assert.deepStrictEqual(await tx.select('SELECT * FROM pragma_busy_timeout'), [{ timeout: 1234 }])
    })
  })

  test(
    'ranges: "readers integer 1–64", "busyTimeout 0 – 2³¹−1", "inlineBudget 0–10": out of range is a RangeError naming the option, before any file is touched',
    T,
    async (t) => {
      const dir = tempDir(t)
      const file = path.join(dir, 'never.db')
      const refused = [
        [{ readers: 0 }, /readers/],
        [{ readers: 65 }, /readers/],
        [{ busyTimeout: -1 }, /busyTimeout/],
        [{ busyTimeout: 2 ** 31 }, /busyTimeout/],
        [{ inlineBudget: -0.01 }, /inlineBudget/],
        [{ inlineBudget: 10.01 }, /inlineBudget/],
      ]
      for (const [options, name] of refused) {
        await expectReject(() => Database.open(file, options), RangeError, 'ERR_OUT_OF_RANGE', name)
        assert.ok(!fs.existsSync(file), `${JSON.stringify(options)}: no file created`)
      }
      for (const options of [{ readers: 1 }, { busyTimeout: 0 }, { busyTimeout: 2 ** 31 - 1 }, { inlineBudget: 10 }]) {
        const db = await Database.open(file, options)
        assert.deepStrictEqual(await db.select('SELECT 1 AS one'), [{ one: 1 }])
        await db.close()
      }
      const wide = await Database.open(file, { readers: 64 })
      assert.equal(wide.readers, 64)
      const all = await Promise.all(Array.from({ length: 80 }, (_, i) => wide.select('SELECT ? AS i', [i])))
      assert.deepStrictEqual(
        all.map(([r]) => r.i),
        Array.from({ length: 80 }, (_, i) => i),
      )
      await wide.close()
    },
  )

  test(
    '"An unknown option, a value of the wrong type … is a TypeError … naming the option, before any file is touched"',
    T,
    async (t) => {
      const dir = tempDir(t)
      const file = path.join(dir, 'never.db')
      await expectReject(() => Database.open(file, { readerz: 2 }), TypeError, 'ERR_INVALID_ARG_VALUE', /readerz/)
      await expectReject(() => Database.open(file, { readonly: 'yes' }), TypeError, 'ERR_INVALID_ARG_TYPE', /readonly/)
      await expectReject(
        () => Database.open(file, { safeIntegers: 1 }),
        TypeError,
        'ERR_INVALID_ARG_TYPE',
        /safeIntegers/,
      )
      await expectReject(() => Database.open(file, { readers: '2' }), TypeError, 'ERR_INVALID_ARG_TYPE', /readers/)
      await expectReject(
        () => Database.open(file, { checkpoints: 'never' }),
        TypeError,
        'ERR_INVALID_ARG_VALUE',
        /checkpoints/,
      )
      assert.deepStrictEqual(fs.readdirSync(dir), [])
    },
  )

  test('"The open database has three read-only properties: path (as given), readers … and readonly"', T, async (t) => {
    const dir = tempDir(t)
    const rel = path.relative(process.cwd(), path.join(dir, 'p.db'))
    const db = await Database.open(rel, { readers: 3 })
    t.after(() => db.close())
    assert.equal(db.path, rel, 'the path as given, not resolved')
    assert.equal(db.readers, 3)
    assert.equal(db.readonly, false)
    const ro = await Database.open(rel, { readonly: true, readers: 1 })
    t.after(() => ro.close())
    assert.equal(ro.readonly, true)
    assert.equal(ro.readers, 1)
  })
})

describe('api.md Reads', () => {
  test('"selectOne … stops stepping after one row": a failure in the second row is never reached', T, async (t) => {
    const db = await openDb(t)
    // abs() of the smallest int64 is an "integer overflow" error when that row is stepped.
    const sql =
      'SELECT x, CASE WHEN x = 2 THEN abs(-9223372036854775807 - 1) ELSE x END AS y FROM (SELECT 1 AS x UNION ALL SELECT 2)'
    await expectReject(() => db.select(sql), ResqliteError, /^SQLITE_/, /overflow/)
    assert.deepStrictEqual(await db.selectOne(sql), { x: 1, y: 1 })
    await db.transaction(async (tx) => {
      assert.deepStrictEqual(await tx.selectOne(sql), { x: 1, y: 1 }, 'on the writer too')
    })
  })

  test(
    '"All three take exactly one statement, and it must be read-only": writes and BEGIN/SAVEPOINT are ERR_NOT_READ_ONLY, several statements ERR_MULTIPLE_STATEMENTS, on all three',
    T,
    async (t) => {
      const db = await openDb(t)
      await db.execute('CREATE TABLE t (v)')
      for (const method of ['select', 'selectOne', 'selectBytes']) {
        for (const sql of [
          'INSERT INTO t VALUES (1)',
          'BEGIN',
          'BEGIN IMMEDIATE',
          'SAVEPOINT s',
          'CREATE TABLE u (v)',
        ]) {
          await expectReject(() => db[method](sql), ResqliteError, 'ERR_NOT_READ_ONLY')
        }
        await expectReject(() => db[method]('SELECT 1; SELECT 2'), ResqliteError, 'ERR_MULTIPLE_STATEMENTS')
      }
      assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM t'), [{ n: 0 }])
      assert.deepStrictEqual(await db.select("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'u'"), [{ n: 0 }])
      await db.execute('INSERT INTO t VALUES (1)')
      assert.deepStrictEqual(await db.select('SELECT v FROM t'), [{ v: 1 }], 'no transaction was left open')
    },
  )

  test(
    'Cancelling a read: "The error\'s cause is the signal\'s reason. A signal that is already aborted rejects at once"',
    T,
    async (t) => {
      const db = await openDb(t)
      const reason = new Error('the request went away')
      const slow = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c'
      const t0 = performance.now()
      const err = await expectReject(
        () => db.select(slow, [], { signal: AbortSignal.abort(reason) }),
        ResqliteError,
        'ABORT_ERR',
      )
      assert.ok(performance.now() - t0 < 1000, 'at once')
      assert.equal(err.cause, reason)
      const ac = new AbortController()
      const pending = db.select(slow, [], { signal: ac.signal })
      setTimeout(() => ac.abort(reason), 50)
      const running = await expectReject(() => pending, ResqliteError, 'ABORT_ERR')
      assert.equal(running.cause, reason)
      assert.deepStrictEqual(await db.select('SELECT 1 AS one'), [{ one: 1 }])
    },
  )
})

describe('api.md Cancelling a read (queued)', () => {
  test(
    '"A read with an AbortSignal is cancelled while it waits in the queue": it rejects before the read ahead of it finishes, and never runs',
    T,
    async (t) => {
      const db = await openDb(t, { readers: 1, inlineBudget: 0 })
      const n = await calibrate(db, 600)
      const slow = db.select(SLOW_SQL, [n])
      const ac = new AbortController()
      const queued = db.select('SELECT 1 AS one', [], { signal: ac.signal })
      let slowDone = false
      slow.then(() => {
        slowDone = true
      })
      await sleep(50)
      ac.abort()
      await expectReject(() => queued, ResqliteError, 'ABORT_ERR')
      assert.equal(slowDone, false, 'the queued read was cancelled while the slow one still ran')
      assert.deepStrictEqual(await slow, [{ n }])
      assert.deepStrictEqual(await db.select('SELECT 2 AS two'), [{ two: 2 }])
    },
  )
})

describe('api.md Array rows and columns', () => {
  test(
    '"rowMode: \'array\' … applies to select, selectOne, iterate and execute\'s returned rows"; "it.columns after the first page"',
    T,
    async (t) => {
      const db = await openDb(t)
      await db.execute('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)')
      await db.execute("INSERT INTO users (name) VALUES ('ada'), ('bob')")
      assert.deepStrictEqual(await db.selectOne('SELECT id, name FROM users', [], { rowMode: 'array' }), {
        columns: ['id', 'name'],
        row: [1, 'ada'],
      })
      const it = db.iterate('SELECT id, name FROM users ORDER BY id', [], { rowMode: 'array' })
      const rows = []
      for await (const row of it) rows.push(row)
      assert.deepStrictEqual(rows, [
        [1, 'ada'],
        [2, 'bob'],
      ])
      assert.deepStrictEqual(it.columns, ['id', 'name'])
      assert.deepStrictEqual(
        await db.execute("INSERT INTO users (name) VALUES ('cy') RETURNING id, name", [], { rowMode: 'array' }),
        {
          changes: 1,
          lastInsertRowid: 3,
          columns: ['id', 'name'],
          rows: [[3, 'cy']],
        },
      )
    },
  )

  test(
    'columns(): "declaredType … null for an expression"; "never run, so a write may be asked about too: its RETURNING columns, or []"; in a body "seeing the transaction\'s schema"',
    T,
    async (t) => {
      const db = await openDb(t)
      await db.execute('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, score REAL)')
      assert.deepStrictEqual(await db.columns('SELECT id, name AS label, count(*) FROM users'), [
        { name: 'id', declaredType: 'INTEGER' },
        { name: 'label', declaredType: 'TEXT' },
        { name: 'count(*)', declaredType: null },
      ])
      assert.deepStrictEqual(await db.columns("INSERT INTO users (name) VALUES ('x')"), [])
      assert.deepStrictEqual(await db.columns("INSERT INTO users (name) VALUES ('x') RETURNING id, score"), [
        { name: 'id', declaredType: 'INTEGER' },
        { name: 'score', declaredType: 'REAL' },
      ])
      assert.deepStrictEqual(await db.columns('DELETE FROM users'), [])
      assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM users'), [{ n: 0 }], 'nothing ran')
      await db.transaction(async (tx) => {
        await tx.execute('CREATE TABLE fresh (a BLOB, b)')
        assert.deepStrictEqual(await tx.columns('SELECT a, b FROM fresh'), [
          { name: 'a', declaredType: 'BLOB' },
          { name: 'b', declaredType: null },
        ])
      })
    },
  )
})

describe('api.md Iterating a large result', () => {
  test('"a page at a time (default 1,000 rows …)": pages() of 2,500 rows are 1,000, 1,000, 500', T, async (t) => {
    const db = await openDb(t)
    const sizes = []
    const sql = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2500) SELECT x FROM c'
    let next = 1
    for await (const page of db.iterate(sql).pages()) {
      sizes.push(page.length)
      for (const row of page) assert.equal(row.x, next++)
    }
    assert.deepStrictEqual(sizes, [1000, 1000, 500])
  })

  test('"Its own connection … reads issued while it is open … run as usual, even with readers: 1"', T, async (t) => {
    const db = await openDb(t, { readers: 1, inlineBudget: 0 })
    const seen = []
    for await (const row of db.iterate('SELECT value AS v FROM json_each(?)', ['[1,2,3]'], { pageRows: 1 })) {
      const [{ n }] = await db.select('SELECT ? * 10 AS n', [row.v])
      seen.push(n)
    }
    assert.deepStrictEqual(seen, [10, 20, 30])
  })
})

describe('api.md Writes', () => {
  test(
    '"executeBatch … Inside a transaction body it joins the transaction (a savepoint keeps the batch all-or-nothing)"',
    T,
    async (t) => {
      const db = await openDb(t)
      await db.execute('CREATE TABLE t (v INTEGER UNIQUE)')
      await db.transaction(async (tx) => {
        await tx.execute('INSERT INTO t VALUES (1)')
        await expectReject(
          () => tx.executeBatch('INSERT INTO t VALUES (?)', [[2], [3], [1]]),
          ResqliteError,
          'SQLITE_CONSTRAINT_UNIQUE',
        )
        assert.deepStrictEqual(
          await tx.select('SELECT v FROM t ORDER BY v'),
          [{ v: 1 }],
          "none of the batch, the body's write kept",
        )
        assert.deepStrictEqual(await tx.executeBatch('INSERT INTO t VALUES (?)', [[4], [5]]), { changes: 2 })
      })
      assert.deepStrictEqual(await db.select('SELECT v FROM t ORDER BY v'), [{ v: 1 }, { v: 4 }, { v: 5 }])
    },
  )

  test(
    '"else on the writer thread, up to 128 at a time": 300 writes issued together commit in at least 3 groups, each with its own result',
    T,
    async (t) => {
      const db = await openDb(t, { inlineBudget: 0 })
      await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
      await db.execute('CREATE TABLE slow (n)')
      const before = (await db.diagnostics()).groupCommit
      // A slow write first keeps the writer thread busy while the 300 queue up behind it, so
      // they wait together however the threads are scheduled (CI once took them one by one).
      const slow = db.execute(
        'INSERT INTO slow SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT x FROM c)',
      )
      const results = await Promise.all(
        Array.from({ length: 300 }, (_, i) => db.execute('INSERT INTO t (v) VALUES (?)', [i])),
      )
      await slow
      assert.deepStrictEqual(
        results.map((r) => r.lastInsertRowid),
        Array.from({ length: 300 }, (_, i) => i + 1),
      )
      const after = (await db.diagnostics()).groupCommit
      const groups = after.groups - before.groups
      const writes = after.writes - before.writes
      assert.ok(writes <= 301 && writes > 128, `${writes} writes in groups`)
      assert.ok(groups >= Math.ceil(writes / 128), `${writes} writes in ${groups} groups: more than 128 in one`)
    },
  )

  test(
    'RETURNING: "A script (several statements) returns no rows"; "execute takes no signal (a TypeError, ERR_INVALID_ARG_VALUE)"',
    T,
    async (t) => {
      const db = await openDb(t)
      await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
      const r = await db.execute(
        "INSERT INTO t (v) VALUES ('a') RETURNING id; INSERT INTO t (v) VALUES ('b') RETURNING id",
      )
      assert.equal('rows' in r, false)
      assert.deepStrictEqual(await db.select('SELECT v FROM t ORDER BY id'), [{ v: 'a' }, { v: 'b' }])
      await expectReject(
        () => db.execute('INSERT INTO t (v) VALUES (1)', [], { signal: new AbortController().signal }),
        TypeError,
        'ERR_INVALID_ARG_VALUE',
        /signal/,
      )
      assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM t'), [{ n: 2 }], 'the refused call ran nothing')
    },
  )
})

describe('api.md stream', () => {
  test(
    '"Returns a LiveQuery at once … Nothing runs until the first subscription"; "sql: the statement"',
    T,
    async (t) => {
      const db = await openDb(t)
      const sql = 'SELECT * FROM no_such_table'
      const live = db.stream(sql)
      assert.equal(live.sql, sql)
      await sleep(100)
      assert.equal((await db.diagnostics()).streams.queries, 0, 'no native query before subscribe')
      const c = collect(live)
      await c.waitFor((x) => x.completed === 1, 'the failed first run to complete the stream')
      assert.equal(c.errors.length, 1)
      assert.match(c.errors[0].message, /no such table/)
    },
  )

  test(
    '"Returns an Unsubscribe: a function … also callable as .unsubscribe(), with a closed property. Stopping twice is harmless"',
    T,
    async (t) => {
      const db = await openDb(t)
      await db.execute('CREATE TABLE t (v)')
      const got = []
      const stop = db.stream('SELECT count(*) AS n FROM t').subscribe((rows) => got.push(rows[0].n))
      assert.equal(typeof stop, 'function')
      assert.equal(typeof stop.unsubscribe, 'function')
      assert.equal(stop.closed, false)
      await waitUntil(() => got.length === 1, 'the first rows')
      stop()
      assert.equal(stop.closed, true)
      stop()
      stop.unsubscribe()
      assert.equal(stop.closed, true)
      await db.execute('INSERT INTO t VALUES (1)')
      await sleep(200)
      assert.deepStrictEqual(got, [0], 'nothing after stopping')
      assert.equal((await db.diagnostics()).streams.active, 0)

      const other = db.stream('SELECT 1 AS x').subscribe({ next() {} })
      other.unsubscribe()
      assert.equal(other.closed, true)
    },
  )

  test('"complete is called when the stream ends (its first run failed, or the database closed)"', T, async (t) => {
    const dir = tempDir(t)
    const db = await Database.open(path.join(dir, 'c.db'))
    const failed = collect(db.stream('SELECT nope FROM nowhere'))
    await failed.waitFor((x) => x.completed === 1, 'complete after a failed first run')
    assert.deepStrictEqual(failed.events, ['error', 'complete'])
    const alive = collect(db.stream('SELECT 1 AS x'))
    await alive.waitFor((x) => x.deliveries.length === 1, 'first rows')
    assert.equal(alive.completed, 0)
    await db.close()
    assert.equal(alive.completed, 1, 'completed by close()')
    assert.equal(alive.errors.length, 0)
  })

  test(
    '"[Symbol.asyncIterator] … when results arrive faster than the loop takes them, only the latest is kept"',
    T,
    async (t) => {
      const db = await openDb(t)
      await db.execute('CREATE TABLE t (v)')
      const sql = 'SELECT count(*) AS n FROM t'
      const it = db.stream(sql)[Symbol.asyncIterator]()
      assert.deepStrictEqual((await it.next()).value, [{ n: 0 }])
      // A second subscriber of the same query receives every result the iterator receives.
      const witness = collect(db.stream(sql))
      await witness.until([{ n: 0 }])
      for (let i = 1; i <= 5; i++) {
        await db.execute('INSERT INTO t VALUES (?)', [i])
        await witness.until([{ n: i }])
      }
      assert.ok(witness.deliveries.length >= 5, 'several results arrived while the loop did not take them')
      const { value } = await it.next()
      assert.deepStrictEqual(value, [{ n: 5 }], 'the latest result, not an older one queued')
      await it.return()
      assert.equal((await db.diagnostics()).streams.active, 1, 'return() unsubscribed: the witness is left')
      witness.stop()
    },
  )
})

describe('api.md Extensions', () => {
  test(
    '"a library path (given to dlopen as it is; SQLite also tries it with the platform\'s suffix, .so, .dylib or .dll)"',
    T,
    async (t) => {
      const full = sqliteVec.getLoadablePath()
      const suffix = path.extname(full)
      assert.ok(['.so', '.dylib', '.dll'].includes(suffix), full)
      const db = await openDb(t, { extensions: [full.slice(0, -suffix.length)] })
      assert.deepStrictEqual(await db.select('SELECT typeof(vec_version()) AS t'), [{ t: 'text' }])
    },
  )
})

describe('api.md In-memory databases and Limits', () => {
  test(
    'In-memory: "attach still refuses \':memory:\'"; "readonly: true is refused (ERR_INVALID_PATH)"',
    T,
    async () => {
      await expectReject(() => Database.open(':memory:', { readonly: true }), ResqliteError, 'ERR_INVALID_PATH')
      await expectReject(
        () => Database.open(':memory:', { attach: { a: ':memory:' } }),
        ResqliteError,
        'ERR_INVALID_PATH',
      )
    },
  )

  test(
    'Limits: "Temporary tables … One created through execute is visible to the writer (and transactions) only, never to reads on the readers or to live queries"',
    T,
    async (t) => {
      const db = await openDb(t, { inlineBudget: 0 })
      await db.execute('CREATE TEMP TABLE scratch (v)')
      await db.execute('INSERT INTO scratch VALUES (1)')
      await db.transaction(async (tx) => {
        assert.deepStrictEqual(await tx.select('SELECT v FROM scratch'), [{ v: 1 }])
      })
      await expectReject(() => db.select('SELECT v FROM scratch'), ResqliteError, 'SQLITE_ERROR', /no such table/)
      const live = collect(db.stream('SELECT v FROM scratch'))
      await live.waitFor((x) => x.completed === 1, 'the live query to fail')
      assert.match(live.errors[0].message, /no such table/)
    },
  )
})

describe('api.md diagnostics, serialize, close', () => {
  test(
    'diagnostics(): every documented field is a number; "walBytes: the WAL file\'s size now"; the growing counters only grow',
    T,
    async (t) => {
      const dir = tempDir(t)
      const file = path.join(dir, 'd.db')
      const db = await Database.open(file)
      t.after(() => db.close())
      const shape = {
        streams: [
          'active',
          'queries',
          'requeries',
          'skippedByColumns',
          'emissions',
          'unchangedSuppressed',
          'fallbackAll',
        ],
        sqlite: ['pageCacheBytes', 'schemaBytes', 'statementBytes'],
        groupCommit: ['groups', 'writes'],
        inline: ['runs', 'moved', 'skipped', 'control', 'writes', 'commits', 'groups', 'groupReads', 'live', 'sliced'],
      }
      const flat = (d) => {
        const out = { walBytes: d.walBytes, walHeldMs: d.walHeldMs, steppedAside: d.steppedAside }
        for (const [k, fields] of Object.entries(shape)) for (const f of fields) out[`${k}.${f}`] = d[k][f]
        return out
      }
      const before = await db.diagnostics()
      assert.deepStrictEqual(Object.keys(before).sort(), [
        'groupCommit',
        'inline',
        'sqlite',
        'steppedAside',
        'streams',
        'walBytes',
        'walHeldMs',
      ])
      for (const [k, fields] of Object.entries(shape))
        assert.deepStrictEqual(Object.keys(before[k]).sort(), [...fields].sort(), k)
      for (const [k, v] of Object.entries(flat(before))) assert.ok(Number.isInteger(v) && v >= 0, `${k} = ${v}`)
      await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, a, b)')
      const c = collect(db.stream('SELECT a FROM t'))
      await c.waitFor((x) => x.deliveries.length === 1, 'first rows')
      await Promise.all([1, 2, 3].map((i) => db.execute('INSERT INTO t (a, b) VALUES (?, ?)', [i, i])))
      await db.execute('UPDATE t SET b = b + 1')
      await Promise.all(Array.from({ length: 10 }, () => db.select('SELECT count(*) FROM t')))
      await c.waitFor((x) => x.last?.length === 3, 'the inserted rows')
      const after = await db.diagnostics()
      const grow = ['requeries', 'skippedByColumns', 'emissions', 'unchangedSuppressed'].map((f) => `streams.${f}`)
      grow.push('groupCommit.groups', 'groupCommit.writes', 'steppedAside', ...shape.inline.map((f) => `inline.${f}`))
      const b = flat(before)
      const a = flat(after)
      for (const k of grow) assert.ok(a[k] >= b[k], `${k}: ${b[k]} → ${a[k]}`)
      assert.ok(a['streams.emissions'] > b['streams.emissions'])
      assert.equal(after.streams.active, 1)
      assert.equal(after.streams.queries, 1)
      assert.equal(after.walBytes, fs.statSync(`${file}-wal`).size)
      assert.ok(after.walBytes > 0)
      assert.equal(after.walHeldMs, 0, 'no snapshot holds a WAL far under its bound')
    },
  )

  test(
    'serialize(): "the committed state on one snapshot, even when called inside a transaction body"',
    T,
    async (t) => {
      const dir = tempDir(t)
      const db = await openDb(t)
      await db.execute('CREATE TABLE t (v)')
      await db.execute("INSERT INTO t VALUES ('committed')")
      let image
      await db.transaction(async (tx) => {
        await tx.execute("INSERT INTO t VALUES ('uncommitted')")
        image = await db.serialize()
      })
      assert.ok(Buffer.isBuffer(image))
      assert.equal(image.subarray(0, 16).toString('latin1'), 'SQLite format 3\0')
      const file = path.join(dir, 'image.db')
      fs.writeFileSync(file, image)
      const copy = await Database.open(file, { readers: 1 })
      t.after(() => copy.close())
      assert.deepStrictEqual(await copy.select('SELECT v FROM t'), [{ v: 'committed' }])
    },
  )

  test('serialize(): "an encrypted database\'s image is plaintext"', T, async (t) => {
    const db = await openDb(t, { encryptionKey: 'a passphrase', readers: 1 })
    await db.execute("CREATE TABLE t (v); INSERT INTO t VALUES ('visible')")
    const image = await db.serialize()
    assert.equal(image.subarray(0, 16).toString('latin1'), 'SQLite format 3\0')
    assert.ok(image.includes(Buffer.from('visible')))
  })

  test('close(): "Calling it again returns the same promise"', T, async (t) => {
    const dir = tempDir(t)
    const db = await Database.open(path.join(dir, 'x.db'))
    const first = db.close()
    assert.equal(db.close(), first)
    await first
    assert.equal(db.close(), first)
  })
})

describe('api.md backup', () => {
  test(
    '"Only the main database is copied, not the attached ones"; the copy is complete and the temporary name is gone',
    T,
    async (t) => {
      const dir = tempDir(t)
      const db = await openDb(t, { attach: { side: path.join(dir, 'side.db') } })
      await db.execute('CREATE TABLE main.m (v); CREATE TABLE side.s (v)')
      await db.execute("INSERT INTO m VALUES ('main'); INSERT INTO s VALUES ('side')")
      const dest = path.join(dir, 'copy.db')
      const steps = []
      await db.backup(dest, { progress: (p) => steps.push(p) })
      assert.equal(steps.at(-1).remaining, 0)
      assert.ok(!fs.existsSync(`${dest}.resqlite-backup`))
      const copy = await Database.open(dest, { readers: 1 })
      t.after(() => copy.close())
      assert.deepStrictEqual(await copy.select('SELECT v FROM m'), [{ v: 'main' }])
      assert.deepStrictEqual(await copy.select("SELECT name FROM sqlite_schema WHERE type = 'table'"), [{ name: 'm' }])
    },
  )
})

describe('api.md rekey', () => {
  test(
    '"reads issued meanwhile wait and then run with the new key": select, selectOne, selectBytes and iterate issued during a rekey',
    T,
    async (t) => {
      const dir = tempDir(t)
      const file = path.join(dir, 'k.db')
      const db = await Database.open(file, { busyTimeout: 5000 })
      t.after(() => db.close())
      await db.execute("CREATE TABLE t (v); INSERT INTO t SELECT value FROM json_each('[1,2,3]')")
      // Another connection holds the file, so the rekey is still under way when the reads are issued.
      const other = await Database.open(file, { readonly: true, readers: 1 })
      assert.deepStrictEqual(await other.select('SELECT count(*) AS n FROM t'), [{ n: 3 }])
      const order = []
      const rekey = db.rekey('the new key').then(() => order.push('rekey'))
      await sleep(100)
      const reads = [
        db.select('SELECT count(*) AS n FROM t').then((r) => order.push('select') && r),
        db.selectOne('SELECT max(v) AS m FROM t').then((r) => order.push('selectOne') && r),
        db.selectBytes('SELECT v FROM t ORDER BY v').then((r) => order.push('selectBytes') && r.toString()),
      ]
      const it = db.iterate('SELECT v FROM t ORDER BY v')[Symbol.asyncIterator]()
      const first = it.next().then((r) => order.push('iterate') && r.value)
      await sleep(100)
      assert.deepStrictEqual(order, [], 'nothing settled while the rekey waits')
      await other.close()
      await rekey
      assert.deepStrictEqual(await Promise.all(reads), [[{ n: 3 }], { m: 3 }, '[{"v":1},{"v":2},{"v":3}]'])
      assert.deepStrictEqual(await first, { v: 1 })
      await it.return()
      await db.close()
      await expectReject(() => Database.open(file, { readers: 1 }), ResqliteError, 'SQLITE_NOTADB')
      const reopened = await Database.open(file, { encryptionKey: 'the new key', readers: 1 })
      assert.deepStrictEqual(await reopened.select('SELECT count(*) AS n FROM t'), [{ n: 3 }])
      await reopened.close()
    },
  )
})

describe('api.md backup and in-memory files', () => {
  test(
    'backup "Where it goes": "a file that appeared meanwhile is not replaced either": ERR_INVALID_PATH, that file kept, no temporary file left',
    T,
    async (t) => {
      const dir = tempDir(t)
      const db = await openDb(t)
      await db.execute('CREATE TABLE t (v)')
      await db.execute('INSERT INTO t SELECT randomblob(4000) FROM json_each(?)', [
        JSON.stringify(Array.from({ length: 2000 }, (_, i) => i)),
      ])
      const dest = path.join(dir, 'copy.db')
      let steps = 0
      await expectReject(
        () =>
          db.backup(dest, {
            progress: () => {
              if (steps++ === 0) fs.writeFileSync(dest, 'written by someone else meanwhile')
            },
          }),
        ResqliteError,
        'ERR_INVALID_PATH',
        /exists/,
      )
      assert.ok(steps > 1, 'the copy took several steps')
      assert.equal(fs.readFileSync(dest, 'utf8'), 'written by someone else meanwhile')
      assert.deepStrictEqual(fs.readdirSync(dir), ['copy.db'])
    },
  )

  test(
    'backup: "256 pages (1 MiB of 4 KiB pages) per step", progress "after every step (the last with remaining: 0)"',
    T,
    async (t) => {
      const dir = tempDir(t)
      const db = await openDb(t)
      await db.execute('CREATE TABLE t (v)')
      await db.execute('INSERT INTO t SELECT randomblob(3000) FROM json_each(?)', [
        JSON.stringify(Array.from({ length: 1000 }, (_, i) => i)),
      ])
      const [{ page_size: pageSize }] = await db.select('SELECT * FROM pragma_page_size')
      assert.equal(pageSize, 4096)
      const steps = []
      await db.backup(path.join(dir, 'steps.db'), { progress: (p) => steps.push(p) })
      const total = steps[0].total
      assert.ok(total > 3 * 256, `${total} pages`)
      assert.deepStrictEqual(
        steps.map((p) => p.remaining),
        Array.from({ length: Math.ceil(total / 256) }, (_, i) => Math.max(0, total - 256 * (i + 1))),
      )
      assert.ok(steps.every((p) => p.total === total))
    },
  )

  test(
    'backup: "An abort that comes after the copy completed changes nothing"; an already aborted signal leaves nothing',
    T,
    async (t) => {
      const dir = tempDir(t)
      const db = await openDb(t)
      await db.execute("CREATE TABLE t (v); INSERT INTO t VALUES ('x')")
      const ac = new AbortController()
      const dest = path.join(dir, 'done.db')
      await db.backup(dest, { signal: ac.signal })
      ac.abort()
      await sleep(50)
      const copy = await Database.open(dest, { readers: 1 })
      assert.deepStrictEqual(await copy.select('SELECT v FROM t'), [{ v: 'x' }])
      await copy.close()
      const reason = new Error('no time')
      const never = path.join(dir, 'never.db')
      const err = await expectReject(
        () => db.backup(never, { signal: AbortSignal.abort(reason) }),
        ResqliteError,
        'ABORT_ERR',
      )
      assert.equal(err.cause, reason)
      assert.ok(!fs.existsSync(never) && !fs.existsSync(`${never}.resqlite-backup`))
    },
  )

  test(
    'In-memory: "kept in a temporary file (in a directory of its own under os.tmpdir(), mode 0700) that close() removes"',
    T,
    async () => {
      const mine = () => new Set(fs.readdirSync(os.tmpdir()).filter((d) => d.startsWith('resqlite-memory-')))
      const before = mine()
      const db = await Database.open(':memory:')
      const made = [...mine()].filter((d) => !before.has(d))
      assert.equal(made.length, 1)
      const dir = path.join(os.tmpdir(), made[0])
      if (process.platform !== 'win32') assert.equal(fs.statSync(dir).mode & 0o777, 0o700)
      await db.close()
      assert.ok(!fs.existsSync(dir))
    },
  )
})

// Promises that did not hold before issue 30's fixes.
// api.md Reads: "a statement that … begins or ends a transaction, rejects with ERR_NOT_READ_ONLY".
// RELEASE and ROLLBACK TO (which end a savepoint, the transaction too when it is the outermost)
// reach SQLite on a read connection and fail with SQLITE_ERROR ("no such savepoint") on this
// branch: the same family as issue 30's item 19. Passes on main at c2e8794 (64041ec refuses
// transaction control in select*): enable it on merge.
describe('api.md promises fixed with issue 30', () => {
  // api.md rekey: "reads issued meanwhile wait and then run with the new key" (with the old one
  // when the rekey fails). An iteration issued while a rekey waits for another connection, and
  // then fails, is refused instead in 3 of 10 tries (ERR_ITERATION_ENDED "no iteration starts: a
  // rekey is in progress"; select waits and runs): threads/writer.rs rekey() releases the readers
  // (gate.release in swap_key) before it calls cursors.resume(), so a reader can take the queued
  // first step while iterations are still stopped. A successful rekey ran it afterwards in 10 of
  // 10 tries. Fix: resume() before release, on both paths; values-and-errors.md's
  // ERR_ITERATION_ENDED row then loses "or a rekey runs". Eight rounds: fails today in ~94 % of runs.
  test(
    '"reads issued meanwhile wait and then run": an iteration issued during a rekey that fails runs after it, with the old key',
    T,
    async (t) => {
      const dir = tempDir(t)
      for (let round = 0; round < 8; round++) {
        const file = path.join(dir, `f${round}.db`)
        const db = await Database.open(file, { busyTimeout: 300 })
        await db.execute("CREATE TABLE t (v); INSERT INTO t SELECT value FROM json_each('[1,2,3]')")
        const other = await Database.open(file, { readonly: true, readers: 1 })
        assert.deepStrictEqual(await other.select('SELECT count(*) AS n FROM t'), [{ n: 3 }])
        const rekey = db.rekey('never').then(
          () => 'done',
          (e) => e.code,
        )
        await sleep(100)
        const it = db.iterate('SELECT v FROM t ORDER BY v')[Symbol.asyncIterator]()
        const first = await it.next().then(
          (r) => r.value,
          (e) => e.code,
        )
        assert.equal(await rekey, 'SQLITE_BUSY')
        assert.deepStrictEqual(first, { v: 1 }, `round ${round}`)
        await it.return()
        await other.close()
        await db.close()
      }
    },
  )

  test(
    '"begins or ends a transaction … ERR_NOT_READ_ONLY": RELEASE and ROLLBACK TO through select, selectOne, selectBytes',
    T,
    async (t) => {
      const db = await openDb(t)
      for (const method of ['select', 'selectOne', 'selectBytes']) {
        for (const sql of [
          'RELEASE a',
          'RELEASE SAVEPOINT a',
          'ROLLBACK TO a',
          'ROLLBACK TRANSACTION TO SAVEPOINT a',
        ]) {
          await expectReject(() => db[method](sql), ResqliteError, 'ERR_NOT_READ_ONLY')
        }
      }
    },
  )
})

describe('api.md promises fixed with issue 43', () => {
  test(
    'Database.open: "the writer\'s connection, and, for an encrypted database only, the JS thread\'s … The promise resolves when those are ready"',
    T,
    async (t) => {
      const dir = tempDir(t)
      const opened = async (options) => {
        const before = Database.processDiagnostics().connections
        const db = await Database.open(path.join(dir, `${options.encryptionKey ? 'encrypted' : 'plain'}.db`), options)
        const connections = Database.processDiagnostics().connections - before
        await db.close()
        return connections
      }
      assert.equal(await opened({}), 1, "a plaintext database opens the writer's connection only")
      assert.equal(await opened({ encryptionKey: 'k' }), 2, "an encrypted one opens the JS thread's too")
    },
  )

  test(
    'Functions: "it refuses a function without [deterministic] there; a CHECK constraint takes a function either way, as SQLite allows"',
    T,
    async (t) => {
      const db = await openDb(t)
      db.function('plain', (x) => x)
      await db.execute('CREATE TABLE c (x INTEGER CHECK (plain(x) > 0))')
      await db.execute('INSERT INTO c VALUES (1)')
      await expectReject(() => db.execute('INSERT INTO c VALUES (-1)'), ResqliteError, 'SQLITE_CONSTRAINT_CHECK')
      for (const [sql, where] of [
        ['CREATE INDEX i ON c (plain(x))', /index expressions/],
        ['CREATE INDEX p ON c (x) WHERE plain(x) > 0', /partial index WHERE clauses/],
        ['CREATE TABLE g (x, y AS (plain(x)))', /generated columns/],
      ]) {
        await expectReject(() => db.execute(sql), ResqliteError, 'SQLITE_ERROR', /non-deterministic/, where)
      }
      assert.deepStrictEqual(await db.select('SELECT x FROM c'), [{ x: 1 }])
    },
  )
})
