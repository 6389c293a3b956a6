// selectBytes (docs/values-and-errors.md "selectBytes JSON"): a Buffer holding byte for byte
// JSON.stringify(rows) of the same select(), with BLOB -> base64, unsafe INTEGER -> exact digits,
// non-finite -> null.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isDeepStrictEqual } from 'node:util'
import { expectReject, openDb, prng } from './helpers.mjs'

// ---- generators (seeded: prng from helpers.mjs) ----

function makeGen(seed) {
  const rnd = prng(seed)
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1))
  const pick = (arr) => arr[Math.floor(rnd() * arr.length)]
  const f64 = new DataView(new ArrayBuffer(8))

  const specialDoubles = [
    0.1,
    0.2 + 0.1,
    1 / 3,
    -1.5,
    1e21,
    1e20,
    1e-7,
    1e-6,
    1.5e-7,
    123456789012345680000,
    5e-324,
    -5e-324,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    2.2250738585072014e-308,
    2.225073858507201e-308,
    4.35,
    0.000001234,
    1.5e300,
    1e16,
    1e15 + 0.5,
    // biome-ignore lint/correctness/noPrecisionLoss: a literal that rounds to 2^53 on purpose
    9007199254740993,
    2 ** 63,
    -(2 ** 64),
    1e23,
    5e-7,
    123.456,
    1.0000000000000002,
    0.30000000000000004,
    100,
    -0.000001,
    9.999999999999999e22,
    Infinity,
    -Infinity,
  ]
  function randomBitsDouble() {
    for (;;) {
      f64.setUint32(0, Math.floor(rnd() * 2 ** 32))
      f64.setUint32(4, Math.floor(rnd() * 2 ** 32))
      const x = f64.getFloat64(0)
      if (!Number.isNaN(x)) return x
    }
  }
  function double() {
    const k = rnd()
    if (k < 0.3) return randomBitsDouble()
    if (k < 0.5) return pick(specialDoubles)
    if (k < 0.65) return Math.round(rnd() * 10 ** int(0, 15)) * (rnd() < 0.5 ? -1 : 1) + 0 // integral (+0: never -0)
    return (rnd() - 0.5) * 10 ** int(-30, 30)
  }
  // An integral number in int64 range beyond 2^53 binds as INTEGER (docs/values-and-errors.md)
  // and then cannot be read back as a number; keep those out of columns that do not convert to
  // REAL.
  const unsafeIntegral = (x) =>
    Number.isInteger(x) && Math.abs(x) > Number.MAX_SAFE_INTEGER && x >= -(2 ** 63) && x < 2 ** 63

  const charPool = [
    ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)), // U+0000..U+001F
    '\u007f',
    '"',
    '\\',
    '/',
    '<',
    '>',
    '&',
    "'",
    '\u2028',
    '\u2029',
    '\ufeff',
    '\ufffd',
    '\uffff',
    '\ue000',
    'é',
    'ß',
    '中',
    '文',
    '\u0301',
    '😀',
    '𝄞',
    '\u{10ffff}',
    '🏳️‍🌈',
    '\u{1f600}\u{1f601}',
  ]
  function char() {
    const k = rnd()
    if (k < 0.55) return String.fromCharCode(int(0x20, 0x7e))
    if (k < 0.85) return pick(charPool)
    if (k < 0.95) {
      let cp
      do cp = int(0x80, 0xffff)
      while (cp >= 0xd800 && cp <= 0xdfff)
      return String.fromCharCode(cp)
    }
    return String.fromCodePoint(int(0x10000, 0x10ffff))
  }
  function string() {
    const n = rnd() < 0.05 ? 0 : int(1, rnd() < 0.9 ? 24 : 300)
    let s = ''
    for (let i = 0; i < n; i++) s += char()
    return s
  }
  const maybeNull = (f) => (rnd() < 0.1 ? null : f())
  const smallInt = () => int(-1000, 1000)
  const bigSafe = () => {
    const k = rnd()
    if (k < 0.1) return pick([Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 52])
    return Math.floor(rnd() * 2 ** 53) * (rnd() < 0.5 ? -1 : 1) || 0
  }
  function anyValue() {
    const k = rnd()
    if (k < 0.1) return -0
    if (k < 0.5) {
      let x = double()
      while (unsafeIntegral(x)) x = double()
      return x
    }
    if (k < 0.7) return bigSafe()
    if (k < 0.9) return string()
    return null
  }
  return {
    rnd,
    row: () => [maybeNull(smallInt), maybeNull(bigSafe), maybeNull(double), maybeNull(anyValue), maybeNull(string)],
  }
}

/** Equality with a readable report of the first difference. */
function assertSameJson(actual, expected, what) {
  if (actual === expected) return
  let i = 0
  while (i < actual.length && actual[i] === expected[i]) i++
  const from = Math.max(0, i - 80)
  assert.fail(
    `${what}: selectBytes differs from JSON.stringify(select()) at offset ${i}\n` +
      `  selectBytes: ${JSON.stringify(actual.slice(from, i + 80))}\n` +
      `  stringify:   ${JSON.stringify(expected.slice(from, i + 80))}`,
  )
}

async function compare(db, sql, params) {
  const rows = await db.select(sql, params)
  const bytes = await db.selectBytes(sql, params)
  assert.ok(Buffer.isBuffer(bytes), 'selectBytes must resolve with a Buffer')
  assertSameJson(bytes.toString('utf8'), JSON.stringify(rows), sql)
  return rows
}

test('property: selectBytes equals JSON.stringify(select()) over thousands of random rows', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE p (id INTEGER PRIMARY KEY, i INTEGER, big INTEGER, r REAL, a, s TEXT)')
  const gen = makeGen(0x5eed1234)
  const ROWS = 6000 // 36,000 cells: large enough for chunked decoding
  const CHUNK = 250
  const expected = []
  for (let done = 0; done < ROWS; done += CHUNK) {
    const params = []
    const tuples = []
    for (let k = 0; k < CHUNK; k++) {
      const id = done + k + 1
      const [i, big, r, a, s] = gen.row()
      params.push(id, i, big, r, a, s)
      tuples.push('(?, ?, ?, ?, ?, ?)')
      expected.push({ id, i, big, r, a, s })
    }
    const { changes } = await db.execute(`INSERT INTO p (id, i, big, r, a, s) VALUES ${tuples.join(', ')}`, params)
    assert.equal(changes, CHUNK)
  }

  const all = await compare(db, 'SELECT * FROM p ORDER BY id')
  assert.equal(all.length, ROWS)
  // and select itself returned exactly what was written (-0 included, in the typeless column)
  for (let k = 0; k < ROWS; k++) {
    if (!isDeepStrictEqual(all[k], expected[k])) {
      assert.deepStrictEqual(all[k], expected[k], `row id ${k + 1} did not round-trip`)
    }
  }

  await compare(db, 'SELECT s, id, r FROM p WHERE id % 7 = 3 ORDER BY s')
  await compare(
    db,
    "SELECT id, s || '\"x\\' AS sx, r * 2 AS r2, i * 3 AS i3, length(s) AS len, typeof(a) AS ta, a FROM p ORDER BY id DESC",
  )
  await compare(
    db,
    'SELECT count(*) AS c, sum(i) AS si, avg(i) AS ai, max(r) AS mr, min(r) AS nr, total(big) AS tb FROM p',
  )
  await compare(
    db,
    'SELECT i, count(*) AS n, group_concat(s, ?) AS joined FROM p WHERE i BETWEEN -20 AND 20 GROUP BY i',
    ['\u0000|\n'],
  )
  await compare(db, 'SELECT id, a AS "0", s AS "dup", r AS "dup" FROM p WHERE id <= 300')
  await compare(db, 'SELECT * FROM p WHERE 0')
})

test('property: doubles format exactly as ECMAScript (shortest round-trip)', async (t) => {
  const db = await openDb(t)
  const gen = makeGen(42)
  const f64 = new DataView(new ArrayBuffer(8))
  for (let batch = 0; batch < 10; batch++) {
    const values = []
    for (let k = 0; k < 200; k++) {
      f64.setUint32(0, Math.floor(gen.rnd() * 2 ** 32))
      f64.setUint32(4, Math.floor(gen.rnd() * 2 ** 32))
      let x = f64.getFloat64(0)
      if (Number.isNaN(x) || (Number.isInteger(x) && Math.abs(x) > Number.MAX_SAFE_INTEGER && Math.abs(x) <= 2 ** 63))
        x = 0.5
      values.push(x)
    }
    const sql = `SELECT column1 AS v FROM (VALUES ${values.map(() => '(?)').join(', ')})`
    const rows = await compare(db, sql, values)
    assert.equal(rows.length, values.length)
    for (let k = 0; k < values.length; k++)
      assert.ok(Object.is(rows[k].v, values[k]), `value ${values[k]} came back as ${rows[k].v}`)
  }
})

test('selectBytes: number formatting edge cases', async (t) => {
  const db = await openDb(t)
  // REAL values bound as parameters (exact), plus a few exact SQL literals
  const sql =
    'SELECT 100.0 AS r, 1e21 AS big, 1e20 AS b20, ?1 AS tiny, ?2 AS small, ?3 AS m, ?4 AS den, ?5 AS mx, -1.5 AS neg, ?6 AS sum, ?7 AS negzero, 0.0 AS zero'
  const params = [1e-7, 0.000001, 2.5e-5, 5e-324, 1.7976931348623157e308, 0.1 + 0.2, -0]
  const bytes = await db.selectBytes(sql, params)
  assert.equal(
    bytes.toString(),
    '[{"r":100,"big":1e+21,"b20":100000000000000000000,"tiny":1e-7,"small":0.000001,"m":0.000025,"den":5e-324,"mx":1.7976931348623157e+308,"neg":-1.5,"sum":0.30000000000000004,"negzero":0,"zero":0}]',
  )
  await compare(db, sql, params)
})

test('selectBytes: strings are escaped exactly like JSON.stringify', async (t) => {
  const db = await openDb(t)
  const s = '"\\\n\r\t\b\f\u0000\u0001\u001f\u007f /<>&\'\u2028\u2029é😀𝄞\ufeff'
  const bytes = await db.selectBytes('SELECT ? AS s', [s])
  assert.equal(bytes.toString('utf8'), JSON.stringify([{ s }]))
  assert.equal(
    bytes.toString('utf8'),
    '[{"s":"\\"\\\\\\n\\r\\t\\b\\f\\u0000\\u0001\\u001f\u007f /<>&\'\u2028\u2029é😀𝄞\ufeff"}]',
  )
  assert.deepStrictEqual(JSON.parse(bytes.toString('utf8')), [{ s }])
})

test('selectBytes: BLOB becomes a base64 string', async (t) => {
  const db = await openDb(t)
  const payload = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 37 + 11) & 255))
  const bytes = await db.selectBytes(
    "SELECT x'' AS e, x'01' AS one, x'0102' AS two, x'010203' AS three, x'00ff10' AS b, ? AS p",
    [payload],
  )
  assert.ok(Buffer.isBuffer(bytes))
  assert.equal(
    bytes.toString(),
    `[{"e":"","one":"AQ==","two":"AQI=","three":"AQID","b":"AP8Q","p":"${payload.toString('base64')}"}]`,
  )
  // and it decodes back to the same bytes
  assert.ok(Buffer.from(JSON.parse(bytes.toString())[0].p, 'base64').equals(payload))
})

test('selectBytes: INTEGER outside the safe range is written as exact decimal digits', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (v INTEGER)')
  await db.execute('INSERT INTO t VALUES (?), (?), (?), (?)', [
    9223372036854775807n,
    -9223372036854775808n,
    2n ** 53n,
    2 ** 53 - 1,
  ])
  const bytes = await db.selectBytes('SELECT v FROM t ORDER BY rowid')
  assert.ok(Buffer.isBuffer(bytes))
  assert.equal(
    bytes.toString(),
    '[{"v":9223372036854775807},{"v":-9223372036854775808},{"v":9007199254740992},{"v":9007199254740991}]',
  )
  assert.equal(
    (
      await db.selectBytes(
        'SELECT 9223372036854775807 AS max, -9223372036854775807 - 1 AS min, -9007199254740992 AS n53',
      )
    ).toString(),
    '[{"max":9223372036854775807,"min":-9223372036854775808,"n53":-9007199254740992}]',
  )
  // select() of the same data rejects, selectBytes does not
  await expectReject(() => db.select('SELECT v FROM t ORDER BY rowid'), RangeError, 'ERR_OUT_OF_RANGE', /\bv\b/)
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM t'), [{ n: 4 }])
})

test('selectBytes with safeIntegers gives the same digits', async (t) => {
  const db = await openDb(t, { safeIntegers: true })
  const bytes = await db.selectBytes('SELECT 1 AS a, 9223372036854775807 AS max, 2.5 AS r')
  assert.equal(bytes.toString(), '[{"a":1,"max":9223372036854775807,"r":2.5}]')
})

test('selectBytes: non-finite REAL becomes null', async (t) => {
  const db = await openDb(t)
  const bytes = await db.selectBytes('SELECT 9e999 AS inf, -9e999 AS ninf, ? AS bound, 1.5 AS x', [-Infinity])
  assert.equal(bytes.toString(), '[{"inf":null,"ninf":null,"bound":null,"x":1.5}]')
  await compare(db, 'SELECT 9e999 AS inf, -9e999 AS ninf, 1.5 AS x')
})

test('selectBytes: an empty result is [] and still a Buffer', async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (a INTEGER, b TEXT)')
  for (const sql of ['SELECT * FROM t', 'SELECT 1 AS a WHERE 0']) {
    const bytes = await db.selectBytes(sql)
    assert.ok(Buffer.isBuffer(bytes), 'selectBytes must resolve with a Buffer')
    assert.equal(bytes.length, 2)
    assert.equal(bytes.toString(), '[]')
  }
  // NULLs and mixed types
  await db.execute("INSERT INTO t VALUES (NULL, NULL), (1, 'x')")
  assert.equal(
    (await db.selectBytes('SELECT * FROM t ORDER BY rowid')).toString(),
    '[{"a":null,"b":null},{"a":1,"b":"x"}]',
  )
})
