// The invalidUtf8 open option: TEXT that is not valid UTF-8 rejects with ERR_INVALID_UTF8 (the
// default) or reads with U+FFFD replacements, TextDecoder's (and better-sqlite3's, node:sqlite's)
// rule, on every path a row or selectBytes' JSON can take (issue 30 item 7).

import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'

import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb, tempDir } from './helpers.mjs'
import { collect } from './live-helpers.mjs'

const TIMEOUT = { timeout: 60_000 }

/** Byte sequences that are not UTF-8, each a different kind of fault, and some that are. */
const BYTES = [
  'deadbeef', // lone continuation bytes and a lead byte without its tail
  '61ff62', // a byte that never occurs in UTF-8
  '61e28262', // a truncated 3-byte sequence (one U+FFFD for the maximal subpart)
  'e282', // truncated at the end of the value
  'eda080', // a UTF-16 surrogate encoded on its own (CESU-8)
  'f4908080', // beyond U+10FFFF
  'c0af', // an overlong encoding of '/'
  'f09f98', // an emoji missing its last byte
  '68c3a9f09f9880', // valid: 'hé😀'
  '', // empty
]
const decoder = new TextDecoder() // the WHATWG rule: what V8 (better-sqlite3, node:sqlite) gives

/** One row per case: (i, s) where s is the bytes as TEXT. */
const CASES_SQL = `SELECT i, CAST(b AS TEXT) AS s FROM (${BYTES.map((hex, i) => `SELECT ${i} AS i, X'${hex}' AS b`).join(' UNION ALL ')}) ORDER BY i`
const EXPECTED = BYTES.map((hex, i) => ({ i, s: decoder.decode(Buffer.from(hex, 'hex')) }))

test(
  'invalidUtf8 defaults to error: every path rejects with ERR_INVALID_UTF8 naming the column and the option',
  TIMEOUT,
  async (t) => {
    for (const inlineBudget of [undefined, 0]) {
      const db = await openDb(t, { inlineBudget })
      const SQL = "SELECT 'ok' AS a, CAST(X'DEADBEEF' AS TEXT) AS bad"
      const code = 'ERR_INVALID_UTF8'
      const named = /column 'bad' of row 1 .*invalidUtf8: 'replace'/
      await expectReject(() => db.select(SQL), ResqliteError, code, named)
      await expectReject(() => db.selectOne(SQL), ResqliteError, code, named)
      await expectReject(() => db.selectBytes(SQL), ResqliteError, code, named)
      await expectReject(
        async () => {
          for await (const _ of db.iterate(SQL)) {
          }
        },
        ResqliteError,
        code,
      )
      const live = collect(db.stream(SQL))
      await live.waitFor((c) => c.errors.length === 1, 'the live query error')
      assert.equal(live.errors[0].code, code)
      live.stop()
      await expectReject(() => db.transaction((tx) => tx.select(SQL)), ResqliteError, code, named)
      await db.execute('CREATE TABLE IF NOT EXISTS t (v TEXT)')
      await expectReject(
        () => db.execute("INSERT INTO t VALUES (CAST(X'FF' AS TEXT)) RETURNING v"),
        ResqliteError,
        code,
      )
    }
  },
)

test("invalidUtf8: 'replace' gives TextDecoder's U+FFFD replacements on every path", TIMEOUT, async (t) => {
  for (const inlineBudget of [undefined, 0]) {
    const what = `inlineBudget ${inlineBudget}`
    const db = await openDb(t, { invalidUtf8: 'replace', inlineBudget })
    assert.deepStrictEqual(await db.select(CASES_SQL), EXPECTED, `select, ${what}`)
    assert.deepStrictEqual(await db.selectOne(CASES_SQL), EXPECTED[0], `selectOne, ${what}`)
    assert.deepStrictEqual(
      (await db.select(CASES_SQL, [], { rowMode: 'array' })).rows,
      EXPECTED.map((r) => [r.i, r.s]),
      `arrays, ${what}`,
    )
    assert.deepStrictEqual(JSON.parse((await db.selectBytes(CASES_SQL)).toString()), EXPECTED, `selectBytes, ${what}`)
    const iterated = []
    for await (const row of db.iterate(CASES_SQL, [], { pageRows: 3 })) iterated.push(row)
    assert.deepStrictEqual(iterated, EXPECTED, `iterate, ${what}`)
    const live = collect(db.stream(CASES_SQL))
    assert.deepStrictEqual(await live.next(), EXPECTED, `stream, ${what}`)
    live.stop()
    // on the writer's connection: inside a transaction, and a write's RETURNING rows
    assert.deepStrictEqual(await db.transaction((tx) => tx.select(CASES_SQL)), EXPECTED, `tx.select, ${what}`)
    await db.execute('CREATE TABLE t (i INTEGER PRIMARY KEY, b BLOB)')
    await db.executeBatch(
      'INSERT INTO t VALUES (?, ?)',
      BYTES.map((hex, i) => [i, Buffer.from(hex, 'hex')]),
    )
    const returned = await db.execute('UPDATE t SET i = i RETURNING i, CAST(b AS TEXT) AS s')
    assert.deepStrictEqual(
      returned.rows.sort((a, b) => a.i - b.i),
      EXPECTED,
      `execute RETURNING, ${what}`,
    )
    // the bytes stay readable as they are
    assert.deepStrictEqual((await db.selectOne('SELECT b FROM t WHERE i = 0')).b, Buffer.from('deadbeef', 'hex'))
  }
})

test("invalidUtf8: 'replace' matches node:sqlite where this Node has it", TIMEOUT, async (t) => {
  let sqlite
  try {
    sqlite = await import('node:sqlite')
  } catch {
    t.skip('node:sqlite is not available on this Node version')
    return
  }
  const peer = new sqlite.DatabaseSync(':memory:')
  const db = await openDb(t, { invalidUtf8: 'replace' })
  assert.deepStrictEqual(
    await db.select(CASES_SQL),
    peer
      .prepare(CASES_SQL)
      .all()
      .map((r) => ({ ...r })),
  )
  peer.close()
})

test('invalidUtf8: a wrong value is a named error that does not echo it; nothing is created', async (t) => {
  const file = path.join(tempDir(t), 'never.db')
  const bad = await expectReject(
    () => Database.open(file, { invalidUtf8: 'my-secret-mode' }),
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    /invalidUtf8 must be 'error' or 'replace'/,
  )
  assert.ok(!bad.message.includes('my-secret-mode'))
  await expectReject(
    () => Database.open(file, { invalidUtf8: true }),
    TypeError,
    'ERR_INVALID_ARG_TYPE',
    /invalidUtf8 must be 'error' or 'replace', got type boolean/,
  )
  assert.equal(fs.existsSync(file), false)
  const db = await Database.open(file, { invalidUtf8: 'error' })
  await expectReject(() => db.select("SELECT CAST(X'FF' AS TEXT) AS s"), ResqliteError, 'ERR_INVALID_UTF8')
  await db.close()
})
