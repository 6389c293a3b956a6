// Value mapping between JavaScript and SQLite (docs/values-and-errors.md "Values"): every value
// is written with execute() parameters and read back with select().

import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { test } from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb } from './helpers.mjs'

async function valueTable(t, options) {
  const db = await openDb(t, options)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)') // v: no declared type, no conversion
  return db
}

/** Inserts `value` into the typeless column and returns { v, type } read back. */
async function roundTrip(db, value) {
  const { lastInsertRowid } = await db.execute('INSERT INTO t (v) VALUES (?)', [value])
  const rows = await db.select('SELECT v, typeof(v) AS type FROM t WHERE id = ?', [lastInsertRowid])
  assert.equal(rows.length, 1)
  return rows[0]
}

test('NULL round-trips as null', async (t) => {
  const db = await valueTable(t)
  assert.deepStrictEqual(await roundTrip(db, null), { v: null, type: 'null' })
  assert.deepStrictEqual(await db.select('SELECT NULL AS n'), [{ n: null }])
})

test('safe integers round-trip as numbers stored as INTEGER', async (t) => {
  const db = await valueTable(t)
  for (const n of [0, 1, -1, 2 ** 31, -(2 ** 31), 2 ** 32 + 5, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]) {
    const row = await roundTrip(db, n)
    assert.deepStrictEqual(row, { v: n, type: 'integer' }, `value ${n}`)
  }
})

test('integral numbers bind as INTEGER, others as REAL', async (t) => {
  const db = await openDb(t)
  const bindType = async (value) => db.selectOne('SELECT typeof(?1) AS type, CAST(?1 AS TEXT) AS text', [value])
  assert.deepStrictEqual(await bindType(3), { type: 'integer', text: '3' })
  assert.deepStrictEqual(await bindType(3.5), { type: 'real', text: '3.5' })
  assert.deepStrictEqual(await bindType(-7), { type: 'integer', text: '-7' })
  // integral and within int64, even beyond 2^53 -> INTEGER (exact)
  assert.deepStrictEqual(await bindType(2 ** 53), { type: 'integer', text: '9007199254740992' })
  assert.deepStrictEqual(await bindType(-(2 ** 63)), { type: 'integer', text: '-9223372036854775808' })
  // integral but outside int64 -> REAL
  assert.equal((await bindType(2 ** 63)).type, 'real')
  assert.equal((await bindType(1e300)).type, 'real')
  assert.deepStrictEqual(await db.select('SELECT ? AS v', [1e300]), [{ v: 1e300 }])
  assert.deepStrictEqual(await db.select('SELECT ? AS v', [2 ** 63]), [{ v: 2 ** 63 }])
})

test('REAL values round-trip exactly', async (t) => {
  const db = await valueTable(t)
  for (const x of [1.5, 0.1, -2.25, 1 / 3, 1e308, 5e-324, -5e-324, 1.7976931348623157e308, 2.2250738585072014e-308]) {
    const row = await roundTrip(db, x)
    assert.equal(row.type, 'real', `typeof for ${x}`)
    assert.ok(Object.is(row.v, x), `expected ${x}, got ${row.v}`)
  }
})

test('-0 is kept (SELECT ? and a typeless column)', async (t) => {
  const db = await valueTable(t)
  const [direct] = await db.select('SELECT ? AS v', [-0])
  assert.ok(Object.is(direct.v, -0), `SELECT ? returned ${Object.is(direct.v, 0) ? '+0' : direct.v}`)
  const row = await roundTrip(db, -0)
  assert.ok(Object.is(row.v, -0), `typeless column returned ${Object.is(row.v, 0) ? '+0' : row.v} (${row.type})`)
  // +0 stays +0
  const [plus] = await db.select('SELECT ? AS v', [0])
  assert.ok(Object.is(plus.v, 0))
})

test('±Infinity round-trip as REAL', async (t) => {
  const db = await valueTable(t)
  assert.deepStrictEqual(await roundTrip(db, Infinity), { v: Infinity, type: 'real' })
  assert.deepStrictEqual(await roundTrip(db, -Infinity), { v: -Infinity, type: 'real' })
  assert.deepStrictEqual(await db.select('SELECT 9e999 AS p, -9e999 AS n'), [{ p: Infinity, n: -Infinity }])
})

test('int64 extremes round-trip as bigint with safeIntegers', async (t) => {
  const db = await valueTable(t, { safeIntegers: true })
  const min = -9223372036854775808n
  const max = 9223372036854775807n
  for (const b of [min, max, 0n, 5n, -(2n ** 53n), 2n ** 53n + 1n]) {
    const { lastInsertRowid } = await db.execute('INSERT INTO t (v) VALUES (?)', [b])
    assert.equal(typeof lastInsertRowid, 'bigint')
    const rows = await db.select('SELECT id, v, typeof(v) AS type FROM t WHERE id = ?', [lastInsertRowid])
    assert.deepStrictEqual(rows, [{ id: lastInsertRowid, v: b, type: 'integer' }])
  }
  // every INTEGER is a bigint, even small ones and numbers bound as number; REAL stays number
  await db.execute('INSERT INTO t (id, v) VALUES (100, ?)', [7])
  assert.deepStrictEqual(await db.selectOne('SELECT id, v FROM t WHERE id = 100'), { id: 100n, v: 7n })
  assert.deepStrictEqual(await db.select('SELECT 1 AS one, 1.5 AS real, count(*) AS n FROM t WHERE id = 100'), [
    { one: 1n, real: 1.5, n: 1n },
  ])
  assert.deepStrictEqual(await db.selectOne('SELECT max(v) AS mx, min(v) AS mn FROM t'), { mx: max, mn: min })
})

test('without safeIntegers, reading an INTEGER outside ±(2^53−1) is a RangeError naming the column', async (t) => {
  const db = await valueTable(t)
  await db.execute('INSERT INTO t (id, v) VALUES (1, ?)', [9223372036854775807n])
  await db.execute('INSERT INTO t (id, v) VALUES (2, ?)', [2n ** 53n]) // one past MAX_SAFE_INTEGER
  await db.execute('INSERT INTO t (id, v) VALUES (3, ?)', [-(2n ** 53n)])
  await db.execute('INSERT INTO t (id, v) VALUES (4, ?)', [5n]) // safe bigint -> number on read

  await expectReject(
    () => db.select('SELECT v AS huge_value FROM t WHERE id = 1'),
    RangeError,
    'ERR_OUT_OF_RANGE',
    /huge_value/,
  )
  await expectReject(
    () => db.selectOne('SELECT id, v AS edge_col FROM t WHERE id = 2'),
    RangeError,
    'ERR_OUT_OF_RANGE',
    /edge_col/,
  )
  await expectReject(
    () => db.select('SELECT v AS neg_col FROM t WHERE id = 3'),
    RangeError,
    'ERR_OUT_OF_RANGE',
    /neg_col/,
  )
  await expectReject(
    () => db.select('SELECT 9223372036854775807 AS lit_col'),
    RangeError,
    'ERR_OUT_OF_RANGE',
    /lit_col/,
  )

  // the boundary itself is fine, and the database is intact
  assert.deepStrictEqual(await db.select('SELECT v FROM t WHERE id = 4'), [{ v: 5 }])
  assert.deepStrictEqual(await db.select('SELECT ? AS v', [Number.MAX_SAFE_INTEGER]), [{ v: Number.MAX_SAFE_INTEGER }])
  assert.deepStrictEqual(await db.select('SELECT CAST(v AS TEXT) AS s FROM t ORDER BY id'), [
    { s: '9223372036854775807' },
    { s: '9007199254740992' },
    { s: '-9007199254740992' },
    { s: '5' },
  ])
})

test('bigint parameters outside int64 are a RangeError naming the parameter; nothing is written', async (t) => {
  const db = await valueTable(t)
  await expectReject(
    () => db.execute('INSERT INTO t (v) VALUES (:tooBig)', { tooBig: 2n ** 63n }),
    RangeError,
    'ERR_OUT_OF_RANGE',
    /tooBig/,
  )
  await expectReject(
    () => db.execute('INSERT INTO t (id, v) VALUES (?, ?)', [1, -(2n ** 63n) - 1n]),
    RangeError,
    'ERR_OUT_OF_RANGE',
    /\b2\b|\?2|\b1\b/, // parameter index (1-based 2 or 0-based 1)
  )
  await expectReject(
    () => db.select('SELECT ? AS v', [2n ** 64n]),
    RangeError,
    'ERR_OUT_OF_RANGE',
    /\b[01]\b|\?1|param/i,
  )
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM t'), [{ n: 0 }])
})

test('TEXT: embedded NUL, empty string, non-BMP, 1 MB', async (t) => {
  const db = await valueTable(t)
  assert.deepStrictEqual(await roundTrip(db, 'a\u0000b'), { v: 'a\u0000b', type: 'text' })
  assert.deepStrictEqual(await roundTrip(db, ''), { v: '', type: 'text' })
  assert.deepStrictEqual(await roundTrip(db, '😀𝄞'), { v: '😀𝄞', type: 'text' })
  assert.deepStrictEqual(await roundTrip(db, 'é中\u2028\u007f\u0001'), { v: 'é中\u2028\u007f\u0001', type: 'text' })
  // stored bytes are the UTF-8 encoding (NUL included, not truncated)
  const stored = await db.select('SELECT id, CAST(v AS BLOB) AS b FROM t ORDER BY id')
  assert.deepStrictEqual(stored, [
    { id: 1, b: Buffer.from([0x61, 0x00, 0x62]) },
    { id: 2, b: Buffer.alloc(0) },
    { id: 3, b: Buffer.from('😀𝄞', 'utf8') },
    { id: 4, b: Buffer.from('é中\u2028\u007f\u0001', 'utf8') },
  ])

  const unit = 'abc\u00e9\u4e2d😀\n"\\'
  const long = unit.repeat(Math.ceil((1 << 20) / Buffer.byteLength(unit)))
  assert.ok(Buffer.byteLength(long) >= 1 << 20)
  const row = await roundTrip(db, long)
  assert.equal(row.type, 'text')
  assert.equal(row.v.length, long.length)
  assert.ok(row.v === long, '1 MB string differs after round-trip')
})

test('BLOB: empty is a zero-length Buffer, small and 10 MB round-trip', async (t) => {
  const db = await valueTable(t)
  const empty = await roundTrip(db, new Uint8Array(0))
  assert.equal(empty.type, 'blob', 'an empty Uint8Array must be stored as a zero-length BLOB, not NULL')
  assert.ok(Buffer.isBuffer(empty.v), 'BLOB must be returned as a Buffer')
  assert.equal(empty.v.length, 0)

  const small = Buffer.from([0, 1, 2, 0x7f, 0x80, 0xfe, 0xff, 0])
  const s = await roundTrip(db, small)
  assert.equal(s.type, 'blob')
  assert.ok(Buffer.isBuffer(s.v))
  assert.deepStrictEqual(s.v, small)

  const big = crypto.randomBytes(10 * 1024 * 1024)
  const b = await roundTrip(db, big)
  assert.equal(b.type, 'blob')
  assert.ok(Buffer.isBuffer(b.v))
  assert.equal(b.v.length, big.length)
  assert.ok(b.v.equals(big), '10 MB blob differs after round-trip')
})

test('BLOB results are copies, not views of a shared result buffer', async (t) => {
  const db = await valueTable(t)
  await db.execute('INSERT INTO t (v) VALUES (?), (?)', [Buffer.from([1, 2, 3]), Buffer.from([1, 2, 3])])
  const rows = await db.select('SELECT v FROM t ORDER BY id')
  rows[0].v[0] = 99
  assert.deepStrictEqual(rows[1].v, Buffer.from([1, 2, 3]))
  assert.deepStrictEqual((await db.select('SELECT v FROM t ORDER BY id'))[0].v, Buffer.from([1, 2, 3]))

  // a later query's result does not overwrite an earlier BLOB
  const first = (await db.selectOne("SELECT x'0a0b0c' AS b")).b
  await db.select("SELECT x'ffffff' AS b, x'eeeeee' AS c")
  await db.selectOne("SELECT x'dddddd' AS b")
  assert.deepStrictEqual(first, Buffer.from([0x0a, 0x0b, 0x0c]))

  // a 3-byte BLOB next to a 4 MB one (and 4 MB of text) must not keep the whole result alive
  const [row] = await db.select("SELECT ? AS big, ? AS text, x'010203' AS small", [
    Buffer.alloc(4 * 1024 * 1024, 7),
    'x'.repeat(4 * 1024 * 1024),
  ])
  assert.deepStrictEqual(row.small, Buffer.from([1, 2, 3]))
  assert.ok(
    row.small.buffer.byteLength < 1024 * 1024,
    `the BLOB is a view into a ${row.small.buffer.byteLength}-byte buffer`,
  )
})

test('any ArrayBufferView binds as a BLOB of its own bytes', async (t) => {
  const db = await valueTable(t)
  const u16 = new Uint16Array([0x0102, 0xfffe, 0])
  const r16 = await roundTrip(db, u16)
  assert.equal(r16.type, 'blob')
  assert.deepStrictEqual(r16.v, Buffer.from(u16.buffer, u16.byteOffset, u16.byteLength))

  // a view into a larger buffer: only the viewed bytes
  const backing = new Uint8Array([9, 9, 1, 2, 3, 9, 9])
  const sub = backing.subarray(2, 5)
  assert.deepStrictEqual((await roundTrip(db, sub)).v, Buffer.from([1, 2, 3]))

  const dv = new DataView(new ArrayBuffer(8), 2, 4)
  dv.setUint32(0, 0xdeadbeef, false)
  assert.deepStrictEqual((await roundTrip(db, dv)).v, Buffer.from([0xde, 0xad, 0xbe, 0xef]))

  const f64 = new Float64Array([1.5])
  assert.deepStrictEqual((await roundTrip(db, f64)).v, Buffer.from(f64.buffer))

  const i8 = new Int8Array([-1, -128, 127])
  assert.deepStrictEqual((await roundTrip(db, i8)).v, Buffer.from([0xff, 0x80, 0x7f]))
})

test('invalid UTF-8 in TEXT: ERR_INVALID_UTF8 naming the column; CAST AS BLOB reads it exactly', async (t) => {
  const db = await valueTable(t)
  await db.execute("INSERT INTO t (id, v) VALUES (1, CAST(x'fffe41' AS TEXT))")
  assert.deepStrictEqual(await db.select('SELECT typeof(v) AS type FROM t WHERE id = 1'), [{ type: 'text' }])

  const err = await expectReject(
    () => db.select('SELECT id, v AS broken_text FROM t WHERE id = 1'),
    ResqliteError,
    'ERR_INVALID_UTF8',
    /broken_text/,
  )
  assert.ok(err instanceof Error)
  await expectReject(
    () => db.selectOne('SELECT v AS broken_one FROM t'),
    ResqliteError,
    'ERR_INVALID_UTF8',
    /broken_one/,
  )
  await expectReject(
    () => db.selectBytes('SELECT v AS broken_json FROM t'),
    ResqliteError,
    'ERR_INVALID_UTF8',
    /broken_json/,
  )

  const [{ raw }] = await db.select('SELECT CAST(v AS BLOB) AS raw FROM t WHERE id = 1')
  assert.deepStrictEqual(raw, Buffer.from([0xff, 0xfe, 0x41]))

  // write the bytes back as TEXT: exactly the same value
  await db.execute('INSERT INTO t (id, v) VALUES (2, CAST(? AS TEXT))', [raw])
  assert.deepStrictEqual(
    await db.select(
      'SELECT (SELECT v FROM t WHERE id = 1) = (SELECT v FROM t WHERE id = 2) AS same, hex(v) AS h FROM t WHERE id = 2',
    ),
    [{ same: 1, h: 'FFFE41' }],
  )
  // other rows/columns still readable
  assert.deepStrictEqual(await db.select('SELECT id FROM t ORDER BY id'), [{ id: 1 }, { id: 2 }])
})
