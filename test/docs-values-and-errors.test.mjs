// docs/values-and-errors.md is a contract: the promises of its tables that no other test file
// checked, each test naming the promise and the section it comes from.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb, tempDir } from './helpers.mjs'

const T = { timeout: 20_000 }

async function table(t, options) {
  const db = await openDb(t, options)
  await db.execute('CREATE TABLE t (v)')
  return db
}
const count = async (db) => (await db.select('SELECT count(*) AS n FROM t'))[0].n

describe('values-and-errors.md Argument errors: "A wrong argument is a TypeError or RangeError shaped like Node\'s own, with a code"', () => {
  test(
    'ERR_INVALID_ARG_TYPE: "sql not a string, options.signal not an AbortSignal, a parameter that cannot be bound"',
    T,
    async (t) => {
      const db = await table(t)
      for (const sql of [1, null, undefined, {}, ['SELECT 1']]) {
        await expectReject(() => db.select(sql), TypeError, 'ERR_INVALID_ARG_TYPE', /sql/)
        await expectReject(() => db.execute(sql), TypeError, 'ERR_INVALID_ARG_TYPE', /sql/)
      }
      for (const signal of [{}, 'abort', 1]) {
        await expectReject(() => db.select('SELECT 1', [], { signal }), TypeError, 'ERR_INVALID_ARG_TYPE', /signal/)
        await expectReject(
          () => db.transaction(async () => {}, { signal }),
          TypeError,
          'ERR_INVALID_ARG_TYPE',
          /signal/,
        )
      }
      for (const value of [true, new Date(0), { a: 1 }, Symbol('s'), () => 1, [1]]) {
        await expectReject(() => db.execute('INSERT INTO t VALUES (?)', [value]), TypeError, 'ERR_INVALID_ARG_TYPE')
      }
      assert.equal(await count(db), 0, '"nothing is bound and nothing runs"')
    },
  )

  test(
    'ERR_INVALID_ARG_VALUE: "an unknown option, an unknown cipher or cipher parameter, a NaN parameter, a lone surrogate, an empty passphrase or one starting with raw:, a transaction mode not in the list, options given to a nested transaction"',
    T,
    async (t) => {
      const dir = tempDir(t)
      const file = path.join(dir, 'never.db')
      const refusedOpens = [
        { nope: 1 },
        { encryptionKey: 'k', cipher: 'rot13' },
        { encryptionKey: 'k', cipher: { name: 'chacha20', nope: 1 } },
        { encryptionKey: '' },
        { encryptionKey: 'raw:abc' },
      ]
      for (const options of refusedOpens) {
        await expectReject(() => Database.open(file, options), TypeError, 'ERR_INVALID_ARG_VALUE')
      }
      assert.deepStrictEqual(fs.readdirSync(dir), [], 'before any file is touched')
      const db = await table(t)
      await expectReject(() => db.execute('INSERT INTO t VALUES (?)', [Number.NaN]), TypeError, 'ERR_INVALID_ARG_VALUE')
      await expectReject(() => db.execute('INSERT INTO t VALUES (?)', ['a\uD800b']), TypeError, 'ERR_INVALID_ARG_VALUE')
      await expectReject(
        () => db.transaction(async () => {}, { mode: 'serializable' }),
        TypeError,
        'ERR_INVALID_ARG_VALUE',
        /mode/,
      )
      let nested
      await db.transaction(async (tx) => {
        nested = await tx.transaction(async () => {}, { mode: 'immediate' }).catch((e) => e)
      })
      assert.ok(nested instanceof TypeError, `nested options: ${nested}`)
      assert.equal(nested.code, 'ERR_INVALID_ARG_VALUE')
      assert.equal(await count(db), 0)
    },
  )

  test('ERR_INVALID_RETURN_VALUE: "a transaction body that does not return a promise"', T, async (t) => {
    const db = await table(t)
    await expectReject(
      () =>
        db.transaction((tx) => {
          tx.execute('INSERT INTO t VALUES (1)').catch(() => {})
          return 42
        }),
      TypeError,
      'ERR_INVALID_RETURN_VALUE',
    )
    assert.equal(await count(db), 0)
  })

  test(
    'ERR_OUT_OF_RANGE: "readers, busyTimeout, an interval, a cipher parameter, a raw key\'s length, a bigint parameter beyond int64"',
    T,
    async (t) => {
      const dir = tempDir(t)
      const file = path.join(dir, 'never.db')
      const refusedOpens = [
        [{ readers: 100 }, /readers/],
        [{ busyTimeout: -5 }, /busyTimeout/],
        [{ watchExternalChanges: { interval: 1 } }, /interval/],
        [{ encryptionKey: 'k', cipher: { name: 'chacha20', kdfIter: 0 } }, /kdfIter/],
        [{ encryptionKey: new Uint8Array(5) }, /encryptionKey|key/],
      ]
      for (const [options, name] of refusedOpens) {
        await expectReject(() => Database.open(file, options), RangeError, 'ERR_OUT_OF_RANGE', name)
      }
      assert.deepStrictEqual(fs.readdirSync(dir), [])
      const db = await table(t)
      for (const big of [2n ** 63n, -(2n ** 63n) - 1n]) {
        await expectReject(() => db.execute('INSERT INTO t VALUES (?)', [big]), RangeError, 'ERR_OUT_OF_RANGE')
      }
      assert.equal(await count(db), 0)
    },
  )
})

describe('values-and-errors.md Library codes', () => {
  test(
    'ResqliteError: "instanceof Error" with "code", "message" and "sql: the statement, where there is one"',
    T,
    async (t) => {
      const db = await openDb(t)
      await db.execute('CREATE TABLE u (a UNIQUE)')
      await db.execute('INSERT INTO u VALUES (1)')
      const sql = 'INSERT INTO u VALUES (?)'
      const err = await expectReject(() => db.execute(sql, [1]), ResqliteError, 'SQLITE_CONSTRAINT_UNIQUE', /UNIQUE/)
      assert.ok(err instanceof Error)
      assert.equal(err.sql, sql)
      const syntax = await expectReject(() => db.select('SELEC 1'), ResqliteError, 'SQLITE_ERROR', /syntax/)
      assert.equal(syntax.sql, 'SELEC 1')
    },
  )

  test('ERR_EMPTY_STATEMENT: "SQL with no statement in it", on every method that takes SQL', T, async (t) => {
    const db = await openDb(t)
    for (const sql of ['', '   ', ' ; ', '-- a comment', '/* only */']) {
      for (const m of ['select', 'selectOne', 'selectBytes', 'execute', 'columns']) {
        await expectReject(() => db[m](sql), ResqliteError, 'ERR_EMPTY_STATEMENT')
      }
      await expectReject(() => db.executeBatch(sql, [[]]), ResqliteError, 'ERR_EMPTY_STATEMENT')
    }
  })

  test('ERR_MULTIPLE_STATEMENTS: "several statements in a … executeBatch"; none runs', T, async (t) => {
    const db = await table(t)
    await expectReject(
      () => db.executeBatch('INSERT INTO t VALUES (?); INSERT INTO t VALUES (?)', [[1], [2]]),
      ResqliteError,
      'ERR_MULTIPLE_STATEMENTS',
    )
    assert.equal(await count(db), 0)
  })

  test(
    'ERR_INVALID_PATH: "a path with a NUL character; such a path, or \':memory:\', in attach or as a backup destination; … a backup destination that exists"',
    T,
    async (t) => {
      const dir = tempDir(t)
      await expectReject(() => Database.open(path.join(dir, 'a\0b.db')), ResqliteError, 'ERR_INVALID_PATH', /NUL/)
      await expectReject(
        () => Database.open(path.join(dir, 'x.db'), { attach: { s: path.join(dir, 'a\0.db') } }),
        ResqliteError,
        'ERR_INVALID_PATH',
      )
      await expectReject(
        () => Database.open(path.join(dir, 'x.db'), { attach: { s: ':memory:' } }),
        ResqliteError,
        'ERR_INVALID_PATH',
      )
      assert.deepStrictEqual(fs.readdirSync(dir), [], 'nothing created by the refused opens')
      const file = path.join(dir, 'db.db')
      const db = await Database.open(file)
      t.after(() => db.close())
      await expectReject(() => db.backup(':memory:'), ResqliteError, 'ERR_INVALID_PATH')
      await expectReject(() => db.backup(path.join(dir, 'b\0.db')), ResqliteError, 'ERR_INVALID_PATH')
      const existing = path.join(dir, 'existing.db')
      fs.writeFileSync(existing, 'keep me')
      await expectReject(() => db.backup(existing), ResqliteError, 'ERR_INVALID_PATH', /exists/)
      assert.equal(fs.readFileSync(existing, 'utf8'), 'keep me', '"an existing file is never replaced"')
    },
  )

  test(
    'ERR_DATABASE_CLOSED: "a call after close()", an iteration\'s next step included (api.md: "after close() its next step rejects with ERR_DATABASE_CLOSED", after the page read ahead)',
    T,
    async (t) => {
      const dir = tempDir(t)
      const db = await Database.open(path.join(dir, 'i.db'))
      await db.execute("CREATE TABLE t (v); INSERT INTO t SELECT value FROM json_each('[1,2,3,4,5]')")
      const it = db.iterate('SELECT v FROM t', [], { pageRows: 1 })[Symbol.asyncIterator]()
      assert.deepStrictEqual((await it.next()).value, { v: 1 })
      await db.close()
      // The page already read ahead (one row here) is still handed over; the step after it rejects.
      assert.deepStrictEqual(await it.next(), { value: { v: 2 }, done: false })
      await assert.rejects(it.next(), { name: 'ResqliteError', code: 'ERR_DATABASE_CLOSED' })
    },
  )
})

describe('values-and-errors.md Values', () => {
  test('"number (integral and within int64 → INTEGER, else REAL)"; "bigint (int64 range)"', T, async (t) => {
    const db = await openDb(t)
    const rows = await db.select(
      'SELECT typeof(?) AS a, typeof(?) AS b, typeof(?) AS c, typeof(?) AS d, typeof(?) AS e, typeof(?) AS f',
      [3, 3.5, 2 ** 62, 2 ** 64, 5n, -(2n ** 63n)],
    )
    assert.deepStrictEqual(rows, [{ a: 'integer', b: 'real', c: 'integer', d: 'real', e: 'integer', f: 'integer' }])
  })

  test(
    '"BLOB → Buffer" and "Uint8Array / Buffer / any ArrayBufferView" bind as BLOB; "TEXT → string"',
    T,
    async (t) => {
      const db = await openDb(t)
      const [row] = await db.select('SELECT typeof(?) AS t1, typeof(?) AS t2, typeof(?) AS t3, ? AS v, ? AS s', [
        new Uint8Array([1]),
        new DataView(new ArrayBuffer(2)),
        new Float64Array(1),
        new Uint16Array([0x0201]),
        'é',
      ])
      assert.deepStrictEqual({ ...row, v: undefined }, { t1: 'blob', t2: 'blob', t3: 'blob', v: undefined, s: 'é' })
      assert.ok(Buffer.isBuffer(row.v))
      assert.deepStrictEqual([...row.v], [1, 2])
    },
  )

  test(
    '"lastInsertRowid is a number, or a bigint … outside the safe range. The write has happened: a large rowid is not turned into an error"',
    T,
    async (t) => {
      const db = await openDb(t)
      await db.execute('CREATE TABLE r (id INTEGER PRIMARY KEY)')
      const r = await db.execute('INSERT INTO r VALUES (?)', [2n ** 60n])
      assert.equal(r.lastInsertRowid, 2n ** 60n)
      assert.deepStrictEqual(await db.select('SELECT CAST(id AS TEXT) AS id FROM r'), [{ id: String(2n ** 60n) }])
      const small = await db.execute('INSERT INTO r VALUES (7)')
      assert.equal(small.lastInsertRowid, 7)
    },
  )
})

// Promises that did not hold before issue 30's fixes.
// values-and-errors.md Library codes: "ERR_RESULT_TOO_LARGE | … text longer than a JavaScript
// string can hold". A select whose TEXT value is longer than that (536,870,890 characters here)
// rejects with a plain TypeError without a code ("texts: a value is longer than a JavaScript
// string can hold", thrown by crates/engine/src/napi/texts.rs while src/decode.ts builds the
// rows), not a ResqliteError. Fix (small, local): turn that failure into
// ResqliteError('ERR_RESULT_TOO_LARGE') where decode.ts calls texts(), or throw it with that
// code from texts.rs. Costly: ~14 s and ~3 GB of RSS on this machine; selectBytes of the same
// value resolves (a Buffer is not a string).
describe('values-and-errors.md promises fixed with issue 30', () => {
  test('ERR_RESULT_TOO_LARGE: "text longer than a JavaScript string can hold"', { timeout: 120_000 }, async (t) => {
    const db = await openDb(t, { readers: 1 })
    const err = await expectReject(
      () => db.select('SELECT hex(zeroblob(268435445)) AS h'),
      ResqliteError,
      'ERR_RESULT_TOO_LARGE',
    )
    assert.doesNotMatch(err.message, /0000/)
    assert.deepStrictEqual(await db.select('SELECT 1 AS ok'), [{ ok: 1 }])
  })
})

describe('values-and-errors.md promises fixed with issue 43', () => {
  test('"An unknown option is named by its key, and the message lists the options the method takes"', T, async (t) => {
    const db = await table(t)
    const dir = tempDir(t)
    const cases = [
      [
        () => Database.open(path.join(dir, 'other.db'), { reader: 2 }),
        /^unknown option 'reader': open takes readers, busyTimeout, .*vfs/,
      ],
      [
        () => db.transaction(async () => {}, { timeout: 1 }),
        /^unknown transaction option 'timeout': transaction takes mode and signal$/,
      ],
      [
        () => db.backup(path.join(dir, 'copy.db'), { overwrite: true }),
        /^unknown backup option 'overwrite': backup takes signal and progress$/,
      ],
      [() => db.rekey('key', { kdf: 1 }), /^unknown rekey option 'kdf': rekey takes cipher$/],
      [
        () => db.select('SELECT 1', [], { limit: 1 }),
        /^unknown option 'limit': select and selectOne take signal and rowMode$/,
      ],
    ]
    for (const [call, message] of cases) await expectReject(call, TypeError, 'ERR_INVALID_ARG_VALUE', message)
    assert.equal(fs.existsSync(path.join(dir, 'other.db')), false, 'the refused open touched no file')
    assert.equal(fs.existsSync(path.join(dir, 'copy.db')), false, 'the refused backup wrote no file')
  })
})
