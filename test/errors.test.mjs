// Bad input and SQL errors (docs/values-and-errors.md "Values" last paragraph, "Errors"): error
// class, code, a message that names the problem, `sql`, no parameter values in errors, and the
// database stays intact afterwards.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import util from 'node:util'
import { ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb } from './helpers.mjs'

const ARG_CODE = /^ERR_INVALID_ARG_(TYPE|VALUE)$/

/** A table with two known rows; `intact()` asserts it still holds exactly them. */
async function fixture(t, options) {
  const db = await openDb(t, options)
  await db.execute(`CREATE TABLE t (id INTEGER PRIMARY KEY, v);
                    INSERT INTO t (id, v) VALUES (1, 'one'), (2, 'two');`)
  const intact = async () => {
    assert.deepStrictEqual(await db.select('SELECT id, v FROM t ORDER BY id'), [
      { id: 1, v: 'one' },
      { id: 2, v: 'two' },
    ])
  }
  return { db, intact }
}

test('NaN parameter is a TypeError naming the parameter; nothing runs', async (t) => {
  const { db, intact } = await fixture(t)
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (?, ?)', [3, NaN]),
    TypeError,
    ARG_CODE,
    /NaN/,
    /\b2\b|\?2|\b1\b/,
  )
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (:id, :nanValue)', { id: 3, nanValue: NaN }),
    TypeError,
    ARG_CODE,
    /nanValue/,
  )
  await expectReject(() => db.select('SELECT ? AS x', [NaN]), TypeError, ARG_CODE, /NaN/)
  await intact()
})

test('undefined parameter is a TypeError, not NULL; nothing runs', async (t) => {
  const { db, intact } = await fixture(t)
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (?, ?)', [3, undefined]),
    TypeError,
    ARG_CODE,
    /undefined/,
  )
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (:id, :undefValue)', { id: 3, undefValue: undefined }),
    TypeError,
    ARG_CODE,
    /undefValue/,
  )
  await expectReject(() => db.select('SELECT ? AS x', [undefined]), TypeError, ARG_CODE, /undefined/)
  await intact()
})

test('unsupported parameter types are a TypeError naming the parameter and its type', async (t) => {
  const { db, intact } = await fixture(t)
  const cases = [
    [true, /boolean/i],
    [false, /boolean/i],
    [new Date(0), /date|object/i],
    [{ a: 1 }, /object/i],
    [[1, 2], /array|object/i],
    [Symbol('sym'), /symbol/i],
    [() => 1, /function/i],
    [new Map(), /map|object/i],
    [new ArrayBuffer(4), /arraybuffer|object/i],
  ]
  for (const [value, typePattern] of cases) {
    const label = typeof value === 'symbol' ? 'symbol' : util.inspect(value)
    // positional: third parameter (index 2 zero-based, 3 one-based)
    const err = await expectReject(
      () => db.execute('INSERT INTO t (id, v) VALUES (?, ? || ?)', [3, 'x', value]),
      TypeError,
      ARG_CODE,
      typePattern,
    )
    assert.match(err.message, /\b[23]\b|\?3/, `positional message should name the parameter (${label}): ${err.message}`)
    // named
    const err2 = await expectReject(
      () => db.execute('INSERT INTO t (id, v) VALUES (:id, :weirdParam)', { id: 3, weirdParam: value }),
      TypeError,
      ARG_CODE,
      typePattern,
    )
    assert.match(err2.message, /weirdParam/, `named message should name the parameter (${label}): ${err2.message}`)
    await expectReject(() => db.select('SELECT ? AS v', [value]), TypeError, ARG_CODE, typePattern)
  }
  await intact()
})

test('wrong positional parameter count is ERR_PARAMETER_COUNT; nothing runs', async (t) => {
  const { db, intact } = await fixture(t)
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (?, ?)', [3]),
    ResqliteError,
    'ERR_PARAMETER_COUNT',
    /2/,
  )
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (?, ?)', [3, 'x', 'extra']),
    ResqliteError,
    'ERR_PARAMETER_COUNT',
    /2/,
  )
  await expectReject(() => db.execute('INSERT INTO t (id, v) VALUES (?, ?)'), ResqliteError, 'ERR_PARAMETER_COUNT', /2/)
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (?, ?)', []),
    ResqliteError,
    'ERR_PARAMETER_COUNT',
    /2/,
  )
  await expectReject(() => db.select('SELECT 1 AS x', [1]), ResqliteError, 'ERR_PARAMETER_COUNT', /0|no param/i)
  const err = await expectReject(() => db.select('SELECT ?2 AS x', [1]), ResqliteError, 'ERR_PARAMETER_COUNT', /2/)
  assert.ok(err instanceof Error)
  assert.equal(err.sql, 'SELECT ?2 AS x')
  await intact()
})

test('named parameter mismatches are ERR_PARAMETER_NAME naming the name', async (t) => {
  const { db, intact } = await fixture(t)
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (:id, :v)', { id: 3, v: 'x', unknownKey: 1 }),
    ResqliteError,
    'ERR_PARAMETER_NAME',
    /unknownKey/,
  )
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (:id, :missingName)', { id: 3 }),
    ResqliteError,
    'ERR_PARAMETER_NAME',
    /missingName/,
  )
  await expectReject(() => db.select('SELECT $dollarName AS x', {}), ResqliteError, 'ERR_PARAMETER_NAME', /dollarName/)
  // an object for a statement with positional parameters
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (?, ?)', { id: 3, v: 'x' }),
    ResqliteError,
    'ERR_PARAMETER_NAME',
    /\bid\b|\bv\b|positional/i,
  )
  await intact()
})

test('params that are neither array nor object are a TypeError', async (t) => {
  const { db, intact } = await fixture(t)
  for (const bad of ['abc', 42, true, Symbol('p'), () => 1]) {
    await expectReject(() => db.select('SELECT ? AS x', bad), TypeError, ARG_CODE, /params|array|object/i)
    await expectReject(
      () => db.execute('INSERT INTO t (id, v) VALUES (3, ?)', bad),
      TypeError,
      ARG_CODE,
      /params|array|object/i,
    )
  }
  await intact()
})

test('sql that is not a string is a TypeError (rejected promise)', async (t) => {
  const { db, intact } = await fixture(t)
  for (const bad of [42, null, undefined, { sql: 'SELECT 1' }, Buffer.from('SELECT 1')]) {
    await expectReject(() => db.select(bad), TypeError, ARG_CODE, /sql/i)
    await expectReject(() => db.selectOne(bad), TypeError, ARG_CODE, /sql/i)
    await expectReject(() => db.selectBytes(bad), TypeError, ARG_CODE, /sql/i)
    await expectReject(() => db.execute(bad), TypeError, ARG_CODE, /sql/i)
    await expectReject(() => db.executeBatch(bad, [[]]), TypeError, ARG_CODE, /sql/i)
  }
  await intact()
})

test('empty SQL is ERR_EMPTY_STATEMENT', async (t) => {
  const { db, intact } = await fixture(t)
  await expectReject(() => db.execute(''), ResqliteError, 'ERR_EMPTY_STATEMENT', /no statement|empty/i)
  await expectReject(() => db.select('   '), ResqliteError, 'ERR_EMPTY_STATEMENT', /no statement|empty/i)
  await expectReject(
    () => db.selectOne('-- only a comment'),
    ResqliteError,
    'ERR_EMPTY_STATEMENT',
    /no statement|empty/i,
  )
  await intact()
})

test("a syntax error is SQLITE_ERROR with the SQL and SQLite's message", async (t) => {
  const { db, intact } = await fixture(t)
  const sql = 'SELEC id FROM t'
  const err = await expectReject(() => db.select(sql), ResqliteError, 'SQLITE_ERROR', /syntax error/i, /SELEC/)
  assert.ok(err instanceof Error)
  assert.equal(err.sql, sql)
  const sql2 = 'INSERT INTO t (id, v) VALUES (?, ?'
  const err2 = await expectReject(
    () => db.execute(sql2, [3, 'x']),
    ResqliteError,
    'SQLITE_ERROR',
    /syntax error|incomplete/i,
  )
  assert.equal(err2.sql, sql2)
  // unknown table / column
  const err3 = await expectReject(
    () => db.select('SELECT nosuchcolumn FROM t'),
    ResqliteError,
    'SQLITE_ERROR',
    /nosuchcolumn/,
  )
  assert.equal(err3.sql, 'SELECT nosuchcolumn FROM t')
  await expectReject(
    () => db.execute('INSERT INTO nosuchtable VALUES (1)'),
    ResqliteError,
    'SQLITE_ERROR',
    /nosuchtable/,
  )
  await intact()
})

test('constraint violations carry the extended result code', async (t) => {
  const db = await openDb(t)
  await db.execute(`CREATE TABLE u (id INTEGER PRIMARY KEY, email TEXT UNIQUE, nickname TEXT NOT NULL);
                    CREATE TABLE k (code TEXT PRIMARY KEY, n INTEGER CHECK (n > 0));
                    INSERT INTO u VALUES (1, 'a@x', 'a');
                    INSERT INTO k VALUES ('c1', 1);`)
  const intact = async () => {
    assert.deepStrictEqual(await db.select('SELECT * FROM u'), [{ id: 1, email: 'a@x', nickname: 'a' }])
    assert.deepStrictEqual(await db.select('SELECT * FROM k'), [{ code: 'c1', n: 1 }])
  }
  const uniqueSql = 'INSERT INTO u (email, nickname) VALUES (?, ?)'
  const e1 = await expectReject(
    () => db.execute(uniqueSql, ['a@x', 'b']),
    ResqliteError,
    'SQLITE_CONSTRAINT_UNIQUE',
    /UNIQUE/,
    /email/,
  )
  assert.equal(e1.sql, uniqueSql)
  await intact()
  // rowid primary key
  await expectReject(
    () => db.execute('INSERT INTO u (id, email, nickname) VALUES (?, ?, ?)', [1, 'b@x', 'b']),
    ResqliteError,
    'SQLITE_CONSTRAINT_PRIMARYKEY',
    /u\.id/,
  )
  // non-rowid primary key
  await expectReject(
    () => db.execute('INSERT INTO k VALUES (?, ?)', ['c1', 2]),
    ResqliteError,
    'SQLITE_CONSTRAINT_PRIMARYKEY',
    /k\.code/,
  )
  await intact()
  await expectReject(
    () => db.execute('INSERT INTO u (email, nickname) VALUES (?, ?)', ['c@x', null]),
    ResqliteError,
    'SQLITE_CONSTRAINT_NOTNULL',
    /nickname/,
  )
  await expectReject(
    () => db.execute('INSERT INTO k VALUES (?, ?)', ['c2', -5]),
    ResqliteError,
    'SQLITE_CONSTRAINT_CHECK',
    /CHECK/,
  )
  await intact()
  // the writer still works
  await db.execute('INSERT INTO u (email, nickname) VALUES (?, ?)', ['d@x', 'd'])
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM u'), [{ n: 2 }])
})

test('errors never contain parameter values', async (t) => {
  const db = await openDb(t)
  await db.execute(`CREATE TABLE s (id INTEGER PRIMARY KEY, secret TEXT UNIQUE, other TEXT NOT NULL);
                    INSERT INTO s VALUES (1, 'hunter2-SECRET-zq', 'x');`)
  const secret = 'hunter2-SECRET-zq'
  const attempts = [
    () => db.execute('INSERT INTO s (secret, other) VALUES (?, ?)', [secret, 'y']), // UNIQUE
    () => db.execute('INSERT INTO s (secret, other) VALUES (?, ?)', [`new-${secret}`, null]), // NOT NULL
    () => db.execute('INSERT INTO s (secret, other) VALUES (?, ?)', [secret]), // count
    () => db.execute('INSERT INTO s (secret, other) VALUES (:a, :b)', { a: secret, b: 'y', c: secret }), // name
    () => db.execute('INSERT INTO s (secret, other) VALUES (?, ?)', [secret, { password: secret }]), // type
    () => db.execute('INSERT INTO s (secret, other) VALUES (?, ?)', [secret, new Date()]), // type
    () => db.execute('INSERT INTO s (secret, other) VALUES (?, ?); SELECT 1', [secret, 'y']), // multiple
    () => db.execute("INSERT INTO s (secret, other) VALUES (?, ?, 'extra-col')", [secret, 'y']), // SQLITE_ERROR
    () => db.select('SELECT CAST(? AS TEXT) || 1/0 AS x FROM s WHERE nosuch = ?', [secret, secret]), // SQLITE_ERROR
    () =>
      db.executeBatch('INSERT INTO s (secret, other) VALUES (?, ?)', [
        ['fresh', 'y'],
        [secret, 'y'],
      ]), // UNIQUE in batch
  ]
  for (const attempt of attempts) {
    let err
    try {
      await attempt()
    } catch (e) {
      err = e
    }
    assert.ok(err instanceof Error, `expected a failure for ${attempt}`)
    const views = [
      String(err.message),
      String(err),
      String(err.stack),
      JSON.stringify(err),
      JSON.stringify(Object.getOwnPropertyNames(err).map((k) => String(err[k]))),
      util.inspect(err, { depth: 5, showHidden: true }),
    ]
    for (const view of views) {
      assert.ok(!view.includes('hunter2'), `parameter value leaked into the error (${err.code}): ${view}`)
    }
  }
  assert.deepStrictEqual(await db.select('SELECT id, secret, other FROM s'), [{ id: 1, secret, other: 'x' }])
})

test('several statements with parameters are ERR_MULTIPLE_STATEMENTS and none runs', async (t) => {
  const { db, intact } = await fixture(t)
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (3, ?); INSERT INTO t (id, v) VALUES (4, ?)', ['x', 'y']),
    ResqliteError,
    'ERR_MULTIPLE_STATEMENTS',
    /statements/i,
  )
  await expectReject(
    () => db.execute("INSERT INTO t (id, v) VALUES (3, ?); INSERT INTO t (id, v) VALUES (4, 'y')", ['x']),
    ResqliteError,
    'ERR_MULTIPLE_STATEMENTS',
    /statements/i,
  )
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (3, :v); DELETE FROM t', { v: 'x' }),
    ResqliteError,
    'ERR_MULTIPLE_STATEMENTS',
    /statements/i,
  )
  await expectReject(
    () => db.executeBatch("INSERT INTO t (id, v) VALUES (?, 'a'); DELETE FROM t", [[3], [4]]),
    ResqliteError,
    'ERR_MULTIPLE_STATEMENTS',
    /statements/i,
  )
  await intact()
})

test('select with several statements is ERR_MULTIPLE_STATEMENTS', async (t) => {
  const { db, intact } = await fixture(t)
  await expectReject(() => db.select('SELECT 1; SELECT 2'), ResqliteError, 'ERR_MULTIPLE_STATEMENTS', /statements/i)
  await expectReject(
    () => db.selectOne('SELECT id FROM t; DELETE FROM t'),
    ResqliteError,
    'ERR_MULTIPLE_STATEMENTS',
    /statements/i,
  )
  await expectReject(
    () => db.selectBytes('SELECT 1; SELECT 2'),
    ResqliteError,
    'ERR_MULTIPLE_STATEMENTS',
    /statements/i,
  )
  await intact()
})

test('select given a write statement is ERR_NOT_READ_ONLY and writes nothing', async (t) => {
  const { db, intact } = await fixture(t)
  await expectReject(
    () => db.select("INSERT INTO t (id, v) VALUES (3, 'x')"),
    ResqliteError,
    'ERR_NOT_READ_ONLY',
    /read-?only|write/i,
  )
  await expectReject(
    () => db.selectOne('DELETE FROM t RETURNING id'),
    ResqliteError,
    'ERR_NOT_READ_ONLY',
    /read-?only|write/i,
  )
  await expectReject(
    () => db.selectBytes("UPDATE t SET v = 'z' RETURNING *"),
    ResqliteError,
    'ERR_NOT_READ_ONLY',
    /read-?only|write/i,
  )
  await expectReject(() => db.select('CREATE TABLE other (x)'), ResqliteError, 'ERR_NOT_READ_ONLY', /read-?only|write/i)
  await intact()
  assert.deepStrictEqual(await db.select("SELECT name FROM sqlite_schema WHERE name = 'other'"), [])
})

test('an out-of-range bigint parameter is not copied into the error', async (t) => {
  const { db, intact } = await fixture(t)
  const value = 2n ** 63n + 4242n // 9223372036854780050
  for (const call of [
    () => db.execute('INSERT INTO t (id, v) VALUES (3, ?)', [value]),
    () => db.execute('INSERT INTO t (id, v) VALUES (3, :big)', { big: -value }),
  ]) {
    let err
    try {
      await call()
    } catch (e) {
      err = e
    }
    assert.ok(err instanceof RangeError, `expected RangeError, got ${err}`)
    assert.equal(err.code, 'ERR_OUT_OF_RANGE')
    for (const view of [err.message, String(err), util.inspect(err)]) {
      assert.ok(!view.includes('9223372036854780050'), `the parameter value was copied into the error: ${err.message}`)
    }
  }
  await intact()
})

test('a panic inside the engine is ERR_INTERNAL and the engine stays usable', async (t) => {
  const { db, intact } = await fixture(t)
  const panic = db[Symbol.for('resqlite.debugPanic')]
  assert.equal(typeof panic, 'function', 'the engine test hook Symbol.for("resqlite.debugPanic") is missing')
  await expectReject(() => panic.call(db), ResqliteError, 'ERR_INTERNAL')
  await intact()
  // the writer still writes
  await db.execute("INSERT INTO t (id, v) VALUES (3, 'three')")
  assert.deepStrictEqual(await db.select('SELECT v FROM t WHERE id = 3'), [{ v: 'three' }])
  await expectReject(() => panic.call(db), ResqliteError, 'ERR_INTERNAL')
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM t'), [{ n: 3 }])
})

test('a script that begins a transaction and then fails leaves no transaction open', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (v INTEGER PRIMARY KEY)')
  await expectReject(
    () => db.execute('BEGIN; INSERT INTO t VALUES (1); INSERT INTO t VALUES (1); COMMIT'),
    ResqliteError,
    'SQLITE_CONSTRAINT_PRIMARYKEY',
    /UNIQUE/,
  )
  // Had the writer stayed inside the script's transaction, this write would never commit
  // and the readers would not see it.
  await db.execute('INSERT INTO t VALUES (5)')
  assert.deepEqual(await db.select('SELECT v FROM t ORDER BY v'), [{ v: 5 }])
})
