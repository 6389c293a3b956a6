// Database.open: paths, options, read-only databases, files that are not databases.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, prng, tempDir } from './helpers.mjs'

test('open creates the file, uses WAL, and the data persists across reopen', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'my data é.db')
  const db = await Database.open(file)
  try {
    assert.ok(db instanceof Database)
    assert.ok(fs.existsSync(file), 'database file should exist after open')
    await db.execute('CREATE TABLE t (v TEXT)')
    await db.execute("INSERT INTO t VALUES ('persisted')")
    assert.ok(fs.existsSync(`${file}-wal`), 'a WAL file should exist while the database is open')
  } finally {
    await db.close()
  }
  const again = await Database.open(file, { readers: 1 })
  try {
    assert.deepStrictEqual(await again.select('SELECT v FROM t'), [{ v: 'persisted' }])
  } finally {
    await again.close()
  }
})

test('valid options are accepted', async (t) => {
  const dir = tempDir(t)
  for (const [i, options] of [
    { readers: 1 },
    { readers: 4, busyTimeout: 1 },
    { busyTimeout: 100, safeIntegers: false, readonly: false },
    {},
    undefined,
  ].entries()) {
    const db = await Database.open(path.join(dir, `ok${i}.db`), options)
    try {
      assert.deepStrictEqual(await db.select('SELECT ? AS i', [i]), [{ i }])
      await db.execute('CREATE TABLE t (x)')
    } finally {
      await db.close()
    }
  }
})

test('a path in a missing directory is SQLITE_CANTOPEN', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'no', 'such', 'dir', 'x.db')
  const err = await expectReject(() => Database.open(file), ResqliteError, 'SQLITE_CANTOPEN', /open/i)
  assert.ok(err instanceof Error)
  assert.ok(!fs.existsSync(path.join(dir, 'no')), 'open must not create directories')
  // a read-only open of a missing file cannot create it either
  const missing = path.join(dir, 'missing.db')
  await expectReject(() => Database.open(missing, { readonly: true }), ResqliteError, 'SQLITE_CANTOPEN')
  assert.ok(!fs.existsSync(missing))
})

test('a file that is not a database is SQLITE_NOTADB and is left unchanged', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'garbage.db')
  const rnd = prng(7)
  const alphabet = 'abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:\n'
  let text = ''
  while (text.length < 4096) text += alphabet[Math.floor(rnd() * alphabet.length)]
  const original = Buffer.from(text, 'latin1')
  fs.writeFileSync(file, original)
  const before = fs.statSync(file)

  const err = await expectReject(() => Database.open(file), ResqliteError, 'SQLITE_NOTADB', /not a database/i)
  assert.ok(err instanceof Error)
  const after = fs.readFileSync(file)
  assert.ok(after.equals(original), 'the non-database file must not be modified')
  assert.equal(fs.statSync(file).size, before.size)

  // same for a read-only open
  await expectReject(() => Database.open(file, { readonly: true }), ResqliteError, 'SQLITE_NOTADB')
  assert.ok(fs.readFileSync(file).equals(original))
})

test('an empty path is ERR_INVALID_PATH', async (_t) => {
  await expectReject(() => Database.open(''), ResqliteError, 'ERR_INVALID_PATH', /memory/)
})

test('a path that is not a string is a TypeError', async () => {
  for (const bad of [undefined, null, 42, { path: 'x.db' }]) {
    await expectReject(() => Database.open(bad), TypeError, /^ERR_INVALID_ARG_(TYPE|VALUE)$/, /path/i)
  }
})

test('bad options are TypeError / RangeError naming the option', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'opts.db')
  await expectReject(() => Database.open(file, { readers: 0 }), RangeError, 'ERR_OUT_OF_RANGE', /readers/)
  await expectReject(() => Database.open(file, { readers: -1 }), RangeError, 'ERR_OUT_OF_RANGE', /readers/)
  await expectReject(() => Database.open(file, { readers: 'x' }), TypeError, 'ERR_INVALID_ARG_TYPE', /readers/)
  await expectReject(() => Database.open(file, { busyTimeout: -1 }), RangeError, 'ERR_OUT_OF_RANGE', /busyTimeout/)
  await expectReject(() => Database.open(file, { busyTimeout: '5' }), TypeError, 'ERR_INVALID_ARG_TYPE', /busyTimeout/)
  // a non-integral count: either class is a reasonable argument error, but it must name the option
  for (const options of [{ readers: 1.5 }, { readers: NaN }, { busyTimeout: Infinity }]) {
    let err
    try {
      await Database.open(file, options)
    } catch (e) {
      err = e
    }
    assert.ok(
      err instanceof TypeError || err instanceof RangeError,
      `expected TypeError/RangeError for ${JSON.stringify(options)}, got ${err}`,
    )
    assert.match(err.code, /^ERR_(OUT_OF_RANGE|INVALID_ARG_TYPE|INVALID_ARG_VALUE)$/)
    assert.match(err.message, /readers|busyTimeout/)
  }
  // after all these, the path still opens fine
  const db = await Database.open(file)
  await db.close()
})

test('readonly: select works, execute and executeBatch reject with ERR_DATABASE_READONLY', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'ro.db')
  const rw = await Database.open(file)
  await rw.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a'), ('b')")
  await rw.close()

  const ro = await Database.open(file, { readonly: true })
  try {
    assert.deepStrictEqual(await ro.select('SELECT v FROM t ORDER BY id'), [{ v: 'a' }, { v: 'b' }])
    assert.deepStrictEqual(await ro.selectOne('SELECT count(*) AS n FROM t'), { n: 2 })
    assert.equal((await ro.selectBytes('SELECT v FROM t ORDER BY id')).toString(), '[{"v":"a"},{"v":"b"}]')
    await expectReject(
      () => ro.execute("INSERT INTO t (v) VALUES ('c')"),
      ResqliteError,
      'ERR_DATABASE_READONLY',
      /read-?only/i,
    )
    await expectReject(
      () => ro.execute('INSERT INTO t (v) VALUES (?)', ['c']),
      ResqliteError,
      'ERR_DATABASE_READONLY',
      /read-?only/i,
    )
    await expectReject(
      () => ro.execute('CREATE TABLE other (x)'),
      ResqliteError,
      'ERR_DATABASE_READONLY',
      /read-?only/i,
    )
    await expectReject(
      () => ro.executeBatch('INSERT INTO t (v) VALUES (?)', [['c'], ['d']]),
      ResqliteError,
      'ERR_DATABASE_READONLY',
      /read-?only/i,
    )
    // a write through select is still ERR_NOT_READ_ONLY
    await expectReject(
      () => ro.select("INSERT INTO t (v) VALUES ('c')"),
      ResqliteError,
      'ERR_NOT_READ_ONLY',
      /read-?only|write/i,
    )
    assert.deepStrictEqual(await ro.select('SELECT v FROM t ORDER BY id'), [{ v: 'a' }, { v: 'b' }])
  } finally {
    await ro.close()
  }
  // and a writer sees the unchanged data
  const check = await Database.open(file)
  try {
    assert.deepStrictEqual(await check.select('SELECT v FROM t ORDER BY id'), [{ v: 'a' }, { v: 'b' }])
  } finally {
    await check.close()
  }
})

test('a readonly database sees writes committed by another connection', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'shared.db')
  const rw = await Database.open(file)
  let ro
  try {
    await rw.execute('CREATE TABLE t (v INTEGER)')
    ro = await Database.open(file, { readonly: true })
    assert.deepStrictEqual(await ro.select('SELECT count(*) AS n FROM t'), [{ n: 0 }])
    await rw.execute('INSERT INTO t VALUES (1), (2)')
    assert.deepStrictEqual(await ro.select('SELECT count(*) AS n FROM t'), [{ n: 2 }])
    await expectReject(() => ro.execute('DELETE FROM t'), ResqliteError, 'ERR_DATABASE_READONLY', /read-?only/i)
    assert.deepStrictEqual(await rw.select('SELECT count(*) AS n FROM t'), [{ n: 2 }])
  } finally {
    await ro?.close()
    await rw.close()
  }
})

test('busyTimeout: 0 is valid: opening a fresh database never fails on its own connections', async (t) => {
  const dir = tempDir(t)
  const failures = []
  for (let i = 0; i < 30; i++) {
    try {
      const db = await Database.open(path.join(dir, `zero${i}.db`), { readers: 4, busyTimeout: 0 })
      try {
        assert.deepStrictEqual(await db.select('SELECT ? AS i', [i]), [{ i }])
        await db.execute('CREATE TABLE t (x); INSERT INTO t VALUES (1)')
      } finally {
        await db.close()
      }
    } catch (err) {
      failures.push(`open #${i}: ${err.code}: ${err.message}`)
    }
  }
  assert.deepStrictEqual(failures, [], 'the library must not lock itself out while opening its own connections')
})

test('busyTimeout bounds the wait for a lock held by another connection', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'busy.db')
  const holder = await Database.open(file)
  const impatient = await Database.open(file, { busyTimeout: 100 })
  const patient = await Database.open(file, { busyTimeout: 5000 })
  try {
    await holder.execute('CREATE TABLE t (v INTEGER)')
    // An open immediate transaction holds the write lock until `release()`.
    let release
    const released = new Promise((resolve) => (release = resolve))
    let began
    const begun = new Promise((resolve) => (began = resolve))
    const holding = holder.transaction(
      async (tx) => {
        await tx.execute('INSERT INTO t VALUES (1)')
        began()
        await released
      },
      { mode: 'immediate' },
    )
    await begun

    const t0 = performance.now()
    const err = await expectReject(
      () => impatient.execute('INSERT INTO t VALUES (2)'),
      ResqliteError,
      /^SQLITE_BUSY/,
      /locked|busy/i,
    )
    const waited = performance.now() - t0
    assert.ok(waited >= 80 && waited < 2000, `busyTimeout 100 waited ${waited.toFixed(0)} ms`)
    assert.equal(err.sql, 'INSERT INTO t VALUES (2)')

    const t1 = performance.now()
    const pending = patient.execute('INSERT INTO t VALUES (3)')
    await new Promise((resolve) => setTimeout(resolve, 200))
    release()
    await holding
    const r = await pending
    assert.equal(r.changes, 1)
    assert.ok(performance.now() - t1 >= 150, 'the patient writer should have waited for the lock')
    // reads were never blocked, and everyone sees the committed rows
    assert.deepStrictEqual(await impatient.select('SELECT v FROM t ORDER BY v'), [{ v: 1 }, { v: 3 }])
    await impatient.execute('INSERT INTO t VALUES (4)')
    assert.deepStrictEqual(await holder.select('SELECT count(*) AS n FROM t'), [{ n: 3 }])
  } finally {
    await patient.close()
    await impatient.close()
    await holder.close()
  }
})
