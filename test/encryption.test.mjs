// Encryption at rest (docs/encryption.md): what reaches the disk, every cipher, wrong and
// missing keys, SQLCipher interoperability, rekey in every direction with readers busy,
// SIGKILL during rekey, and that the key never shows up in errors or util.inspect.

import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import util from 'node:util'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, prng, tempDir } from './helpers.mjs'
import { STATES } from './rekey-child.mjs'

const HEADER = Buffer.from('SQLite format 3\0')
const MARKER = 'PLAINTEXT-MARKER-7f3a'

const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')
/** Hashes of the database files in `dir` (main, -wal, -shm, -journal, …), by name: a failed
 * open changes none of them, and creates none (docs/encryption.md). */
function snapshot(dir) {
  const files = fs.readdirSync(dir).filter((f) => fs.statSync(path.join(dir, f)).isFile())
  return Object.fromEntries(files.sort().map((f) => [f, sha256(path.join(dir, f))]))
}

async function fill(db, rows = 200) {
  await db.execute('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)')
  await db.executeBatch(
    'INSERT INTO t (v) VALUES (?)',
    Array.from({ length: rows }, (_, i) => [`${MARKER} ${i}`]),
  )
}

async function count(file, options) {
  const db = await Database.open(file, options)
  try {
    return (await db.selectOne('SELECT count(*) AS n FROM t')).n
  } finally {
    await db.close()
  }
}

function assertCiphertext(bytes, what) {
  assert.ok(bytes.length > 0, `${what} is empty: nothing was checked`)
  assert.ok(!bytes.includes(HEADER), `${what} holds the SQLite header`)
  assert.ok(!bytes.includes(MARKER), `${what} holds the plaintext marker`)
}

test('the main file and the WAL hold neither the SQLite header nor inserted plaintext', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'enc.db')
  const db = await Database.open(file, { encryptionKey: 'correct horse' })
  try {
    await fill(db, 500)
    await db.execute('UPDATE t SET v = v || ? WHERE id % 3 = 0', [MARKER])
    // checked while open, with the writes still in the WAL
    const wal = fs.readFileSync(`${file}-wal`)
    assert.ok(wal.length > 4096, 'the writes should be in the WAL')
    assertCiphertext(wal, 'the WAL')
    assertCiphertext(fs.readFileSync(file), 'the main file (open)')
    assert.equal((await db.selectOne('SELECT count(*) AS n FROM t WHERE v LIKE ?', [`%${MARKER}%`])).n, 500)
  } finally {
    await db.close()
  }
  assertCiphertext(fs.readFileSync(file), 'the main file (closed)')
  if (fs.existsSync(`${file}-wal`)) assert.ok(!fs.readFileSync(`${file}-wal`).includes(MARKER))

  // the same check on a plaintext database does find both: the assertions can fail
  const plain = path.join(dir, 'plain.db')
  const pdb = await Database.open(plain)
  await fill(pdb, 500)
  await pdb.close()
  // (the rows may still be in the WAL: a reader can be the last connection to close)
  const bytes = Buffer.concat([plain, `${plain}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)))
  assert.ok(bytes.includes(HEADER) && bytes.includes(MARKER))
})

const CIPHERS = [
  ['chacha20', 'chacha20'],
  ['sqlcipher', 'sqlcipher'],
  ['sqlcipher legacy 3', { name: 'sqlcipher', legacy: 3 }],
  ['aes256cbc', 'aes256cbc'],
  ['aes128cbc', 'aes128cbc'],
  ['ascon128', { name: 'ascon128', kdfIter: 1000 }],
  ['aegis', 'aegis'],
  ['aegis-128l, cheap KDF', { name: 'aegis', algorithm: 'aegis-128l', tcost: 1, mcost: 1024 }],
  ['rc4', 'rc4'],
]

for (const [label, cipher] of CIPHERS) {
  test(`cipher ${label}: right key reopens, wrong or missing key fails and leaves the files unchanged`, async (t) => {
    const dir = tempDir(t)
    const file = path.join(dir, 'c.db')
    const key = `pass for ${label}`
    const db = await Database.open(file, { encryptionKey: key, cipher, readers: 2 })
    await fill(db, 300)
    // a crash image: the files copied while the last writes are still only in the WAL
    const crash = path.join(dir, 'crash')
    fs.mkdirSync(crash)
    for (const f of ['c.db', 'c.db-wal']) fs.copyFileSync(path.join(dir, f), path.join(crash, f))
    await db.close()
    assertCiphertext(fs.readFileSync(file), `${label} main file`)

    assert.equal(await count(file, { encryptionKey: key, cipher }), 300)
    const again = await Database.open(file, { encryptionKey: key, cipher })
    assert.deepStrictEqual(await again.selectOne('SELECT v FROM t WHERE id = 42'), { v: `${MARKER} 41` })
    await again.close()

    // With a WAL left over, a failed open must neither checkpoint it into the database through
    // the wrong cipher (that would corrupt it) nor change it.
    const crashFile = path.join(crash, 'c.db')
    const crashBefore = snapshot(crash)
    assert.ok(fs.statSync(`${crashFile}-wal`).size > 0)
    await expectReject(
      () => Database.open(crashFile, { encryptionKey: `${key}!`, cipher }),
      ResqliteError,
      'ERR_ENCRYPTION_KEY',
    )
    await expectReject(() => Database.open(crashFile), ResqliteError, 'SQLITE_NOTADB')
    assert.deepStrictEqual(snapshot(crash), crashBefore, 'a failed open must leave the database and its WAL unchanged')
    assert.equal(await count(crashFile, { encryptionKey: key, cipher }), 300)

    const before = snapshot(dir)
    const unchanged = () => snapshot(dir)
    const wrong = await expectReject(
      () => Database.open(file, { encryptionKey: `${key}!`, cipher }),
      ResqliteError,
      'ERR_ENCRYPTION_KEY',
      /key/,
    )
    assert.ok(!wrong.message.includes(key) && !wrong.stack.includes(key))
    assert.deepStrictEqual(
      unchanged(),
      before,
      'a wrong key must leave the database and its WAL byte-for-byte unchanged',
    )
    await expectReject(
      () => Database.open(file, { encryptionKey: `${key}!`, cipher, readonly: true }),
      ResqliteError,
      'ERR_ENCRYPTION_KEY',
    )
    await expectReject(() => Database.open(file), ResqliteError, 'SQLITE_NOTADB', /encryptionKey/)
    await expectReject(() => Database.open(file, { readonly: true }), ResqliteError, 'SQLITE_NOTADB')
    assert.deepStrictEqual(
      unchanged(),
      before,
      'a missing key must leave the database and its WAL byte-for-byte unchanged',
    )
  })
}

test('the right key with the wrong cipher is ERR_ENCRYPTION_KEY', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'c.db')
  const db = await Database.open(file, { encryptionKey: 'k', cipher: 'sqlcipher' })
  await fill(db, 10)
  await db.close()
  const before = snapshot(dir)
  await expectReject(() => Database.open(file, { encryptionKey: 'k' }), ResqliteError, 'ERR_ENCRYPTION_KEY')
  await expectReject(
    () => Database.open(file, { encryptionKey: 'k', cipher: { name: 'sqlcipher', legacy: 3 } }),
    ResqliteError,
    'ERR_ENCRYPTION_KEY',
  )
  assert.deepStrictEqual(snapshot(dir), before)
})

test('raw keys: a Uint8Array of the cipher key length, with or without the salt', async (t) => {
  const dir = tempDir(t)
  const key = crypto.randomBytes(32)
  const file = path.join(dir, 'raw.db')
  const db = await Database.open(file, { encryptionKey: key })
  await fill(db, 20)
  await db.close()
  assert.equal(await count(file, { encryptionKey: new Uint8Array(key) }), 20)
  await expectReject(
    () => Database.open(file, { encryptionKey: crypto.randomBytes(32) }),
    ResqliteError,
    'ERR_ENCRYPTION_KEY',
  )
  // a passphrase made of the same bytes is a different key
  await expectReject(
    () => Database.open(file, { encryptionKey: key.toString('latin1') }),
    ResqliteError,
    'ERR_ENCRYPTION_KEY',
  )
  const withSalt = path.join(dir, 'salted.db')
  const k48 = crypto.randomBytes(48)
  const s = await Database.open(withSalt, { encryptionKey: k48, cipher: 'sqlcipher' })
  await fill(s, 5)
  await s.close()
  assert.equal(await count(withSalt, { encryptionKey: k48, cipher: 'sqlcipher' }), 5)
  const a128 = path.join(dir, 'aegis128.db')
  const k16 = crypto.randomBytes(16)
  const a = await Database.open(a128, { encryptionKey: k16, cipher: { name: 'aegis', algorithm: 'aegis-128l' } })
  await fill(a, 5)
  await a.close()
  assert.equal(await count(a128, { encryptionKey: k16, cipher: { name: 'aegis', algorithm: 'aegis-128l' } }), 5)
})

test('bad encryption options are errors before the file is touched', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'never.db')
  const secret = 'hunter2-secret'
  const cases = [
    [
      { encryptionKey: secret, cipher: 'blowfish' },
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      // The allowed names are listed; the wrong one is not echoed (docs/values-and-errors.md).
      /^unknown cipher: one of .*chacha20(?!.*blowfish)/,
    ],
    [
      { encryptionKey: secret, cipher: { name: 'chacha20', rounds: 12 } },
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      /no parameter 'rounds'/,
    ],
    [{ encryptionKey: secret, cipher: { name: 'sqlcipher', legacy: 9 } }, RangeError, 'ERR_OUT_OF_RANGE', /legacy/],
    [
      { encryptionKey: secret, cipher: { name: 'sqlcipher', kdfAlgorithm: 'md5' } },
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      /kdfAlgorithm/,
    ],
    [
      { encryptionKey: secret, cipher: { name: 'chacha20', legacy: 1 } },
      TypeError,
      'ERR_INVALID_ARG_TYPE',
      /legacy must be a boolean/,
    ],
    [{ encryptionKey: secret, cipher: { kdfIter: 5 } }, TypeError, 'ERR_INVALID_ARG_VALUE', /unknown cipher/],
    [{ encryptionKey: secret, cipher: 42 }, TypeError, 'ERR_INVALID_ARG_TYPE', /cipher/],
    [{ cipher: 'chacha20' }, TypeError, 'ERR_INVALID_ARG_VALUE', /without encryptionKey/],
    [{ encryptionKey: '' }, TypeError, 'ERR_INVALID_ARG_VALUE', /empty/],
    [{ encryptionKey: 'raw:0123456789abcdef0123456789abcdef' }, TypeError, 'ERR_INVALID_ARG_VALUE', /raw:/],
    [{ encryptionKey: 12345 }, TypeError, 'ERR_INVALID_ARG_TYPE', /string or a Uint8Array/],
    [{ encryptionKey: new Uint8Array(31) }, RangeError, 'ERR_OUT_OF_RANGE', /32 bytes/],
    [{ encryptionKey: new Uint8Array(32), cipher: 'aes128cbc' }, TypeError, 'ERR_INVALID_ARG_VALUE', /passphrase/],
  ]
  for (const [options, Class, code, pattern] of cases) {
    const err = await expectReject(() => Database.open(file, options), Class, code, pattern)
    assert.ok(!err.message.includes(secret) && !String(err.stack).includes(secret), 'the key must not be in the error')
  }
  assert.deepStrictEqual(fs.readdirSync(dir), [], 'no file may be created')
  await expectReject(() => Database.open('', { encryptionKey: secret }), ResqliteError, 'ERR_INVALID_PATH')
})

test('key hygiene: the key is not in util.inspect, JSON, diagnostics(), or any error of a keyed database', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'h.db')
  const secret = 'sup3r-s3cret-passphrase'
  const db = await Database.open(file, { encryptionKey: secret })
  try {
    await fill(db, 3)
    const diagnostics = await db.diagnostics()
    assert.ok(diagnostics.sqlite.pageCacheBytes > 0, 'diagnostics reports the keyed connections')
    const shown = [
      util.inspect(db, { showHidden: true, depth: Infinity }),
      JSON.stringify(db),
      Object.keys(db).join(),
      util.inspect(diagnostics, { depth: Infinity }),
    ].join('\n')
    assert.ok(!shown.includes(secret), shown)
    const errors = [
      await expectReject(() => db.execute('INSERT INTO nope VALUES (1)'), ResqliteError, 'SQLITE_ERROR'),
      await expectReject(() => db.rekey(`${secret}2`, { cipher: 'nope' }), TypeError, 'ERR_INVALID_ARG_VALUE'),
      await expectReject(
        () => db.rekey(`${secret}2`, { cipher: 'nope', other: 1 }),
        TypeError,
        'ERR_INVALID_ARG_VALUE',
      ),
      await expectReject(() => db.transaction(() => db.rekey(secret)), ResqliteError, 'ERR_REKEY_IN_TRANSACTION'),
      await expectReject(
        () => Database.open(file, { encryptionKey: `${secret}x` }),
        ResqliteError,
        'ERR_ENCRYPTION_KEY',
      ),
    ]
    for (const e of errors) {
      for (const text of [e.message, String(e.stack), util.inspect(e)]) assert.ok(!text.includes(secret), text)
    }
    await db.rekey('another-secret-value')
    assert.ok(!util.inspect(db, { showHidden: true, depth: Infinity }).includes('another-secret-value'))
  } finally {
    await db.close()
  }
})

test('rekey in every direction, with readers busy during and after each', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'r.db')
  const db = await Database.open(file, { readers: 3 })
  await fill(db, 400)
  const steps = [
    ['plain → chacha20', 'first key', { cipher: 'chacha20' }, { encryptionKey: 'first key' }],
    ['chacha20 → other key', 'second key', undefined, { encryptionKey: 'second key' }],
    [
      'chacha20 → sqlcipher',
      'third key',
      { cipher: { name: 'sqlcipher', legacy: 4 } },
      { encryptionKey: 'third key', cipher: { name: 'sqlcipher', legacy: 4 } },
    ],
    [
      'sqlcipher → aegis (raw key)',
      new Uint8Array(32).fill(7),
      { cipher: { name: 'aegis', tcost: 1, mcost: 1024 } },
      { encryptionKey: new Uint8Array(32).fill(7), cipher: { name: 'aegis', tcost: 1, mcost: 1024 } },
    ],
    ['aegis → aes256cbc', 'fifth key', { cipher: 'aes256cbc' }, { encryptionKey: 'fifth key', cipher: 'aes256cbc' }],
    ['aes256cbc → plain', null, undefined, {}],
    [
      'plain → sqlcipher legacy 3 (page size 1024)',
      'sixth',
      { cipher: { name: 'sqlcipher', legacy: 3 } },
      { encryptionKey: 'sixth', cipher: { name: 'sqlcipher', legacy: 3 } },
    ],
  ]
  let expected = 400
  try {
    for (const [label, key, options, reopen] of steps) {
      // readers keep reading while the rekey waits for them, runs, and after it
      let stop = false
      const readers = Array.from({ length: 6 }, async () => {
        let reads = 0
        while (!stop || reads === 0) {
          // At least the rows acknowledged when the read was issued (one issued before a
          // write completed may finish after it, on the snapshot it started with).
          const floor = expected
          const { n } = await db.selectOne('SELECT count(*) AS n FROM t')
          assert.ok(
            n >= floor,
            `${label}: a reader saw ${n} rows, fewer than the ${floor} acknowledged when it was issued`,
          )
          reads++
        }
        return reads
      })
      const write = db.execute('INSERT INTO t (v) VALUES (?)', [`${MARKER} before ${label}`])
      await db.rekey(key, options)
      const after = db.execute('INSERT INTO t (v) VALUES (?)', [`${MARKER} after ${label}`])
      await Promise.all([write, after])
      expected += 2
      stop = true
      const reads = await Promise.all(readers)
      assert.ok(reads.every((r) => r > 0))
      assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, expected, label)
      // readers reopened with the new key: every reader connection answers
      const all = await Promise.all(Array.from({ length: 12 }, () => db.select('SELECT v FROM t WHERE id = 1')))
      assert.ok(all.every((r) => r[0].v === `${MARKER} 0`))
      const bytes = fs.readFileSync(file)
      if (key === null) assert.ok(bytes.includes(HEADER), `${label}: the file should be plaintext`)
      else assertCiphertext(bytes, `${label}: the main file`)
      assert.ok(!fs.existsSync(`${file}-rekey`), 'the rekey copy is gone')
      // a second database on the file opens with the new settings only
      assert.equal(await count(file, reopen), expected, `${label}: reopen`)
    }
  } finally {
    await db.close()
  }
})

test('rekey inside a transaction, on a read-only database, and with bad arguments', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'x.db')
  const db = await Database.open(file, { encryptionKey: 'k1' })
  await fill(db, 5)
  await expectReject(() => db.transaction(async (_tx) => db.rekey('k2')), ResqliteError, 'ERR_REKEY_IN_TRANSACTION')
  await expectReject(() => db.rekey(undefined), TypeError, 'ERR_INVALID_ARG_TYPE')
  await expectReject(() => db.rekey(null, { cipher: 'rc4' }), TypeError, 'ERR_INVALID_ARG_VALUE')
  await expectReject(() => db.rekey('k2', { cipher: 'chacha21' }), TypeError, 'ERR_INVALID_ARG_VALUE')
  await db.close()
  await expectReject(() => db.rekey('k2'), ResqliteError, 'ERR_DATABASE_CLOSED')
  const ro = await Database.open(file, { encryptionKey: 'k1', readonly: true })
  await expectReject(() => ro.rekey('k2'), ResqliteError, 'ERR_DATABASE_READONLY')
  await ro.close()
  assert.equal(await count(file, { encryptionKey: 'k1' }), 5)
})

test('a legacy page size cannot be imposed on an already encrypted database: clear error, nothing changes', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'p.db')
  const db = await Database.open(file, { encryptionKey: 'k1' })
  await fill(db, 5)
  await expectReject(
    () => db.rekey('k2', { cipher: { name: 'sqlcipher', legacy: 3 } }),
    ResqliteError,
    /SQLITE_ERROR/,
    /[Pp]age ?size/,
  )
  // still works with the old key, readers included
  assert.equal((await db.selectOne('SELECT count(*) AS n FROM t')).n, 5)
  await db.execute('INSERT INTO t (v) VALUES (1)')
  await db.close()
  assert.equal(await count(file, { encryptionKey: 'k1' }), 6)
  assert.ok(!fs.existsSync(`${file}-rekey`))
})

function sqlcipherCli(file, sql) {
  return execFileSync('sqlcipher', [file], { input: sql, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] })
}

test('SQLCipher interoperability with the sqlcipher command-line tool (SQLCipher 3.4 defaults)', async (t) => {
  let version
  try {
    version = sqlcipherCli(':memory:', 'PRAGMA cipher_version;').trim()
  } catch (e) {
    assert.fail(`the sqlcipher command-line tool is needed for this test (apt-get install sqlcipher): ${e.message}`)
  }
  assert.match(version, /^3\.4/)
  const dir = tempDir(t)
  const legacy3 = { name: 'sqlcipher', legacy: 3 }

  // made by the tool, read by resqlite
  const fromCli = path.join(dir, 'cli.db')
  sqlcipherCli(
    fromCli,
    `PRAGMA key = 'cli pass';
    CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);
    INSERT INTO t (v) VALUES ('${MARKER} one'), ('${MARKER} two');`,
  )
  assertCiphertext(fs.readFileSync(fromCli), 'the tool-made file')
  const a = await Database.open(fromCli, { encryptionKey: 'cli pass', cipher: legacy3 })
  assert.deepStrictEqual(await a.select('SELECT v FROM t ORDER BY id'), [
    { v: `${MARKER} one` },
    { v: `${MARKER} two` },
  ])
  await a.execute("INSERT INTO t (v) VALUES ('three')")
  await a.close()
  await expectReject(
    () => Database.open(fromCli, { encryptionKey: 'cli pass', cipher: 'sqlcipher' }),
    ResqliteError,
    'ERR_ENCRYPTION_KEY',
  )
  // and the tool still reads it after resqlite wrote to it
  assert.equal(sqlcipherCli(fromCli, "PRAGMA key = 'cli pass'; SELECT count(*) FROM t;").trim(), '3')

  // made by resqlite, read by the tool
  const fromUs = path.join(dir, 'ours.db')
  const b = await Database.open(fromUs, { encryptionKey: 'our pass', cipher: legacy3 })
  await fill(b, 50)
  await b.close()
  assertCiphertext(fs.readFileSync(fromUs), 'the resqlite-made file')
  const out = sqlcipherCli(fromUs, "PRAGMA key = 'our pass'; SELECT count(*), max(v) FROM t;").trim()
  assert.equal(out, `50|${MARKER} 9`)
  // the wrong key in the tool reads nothing
  assert.throws(() => sqlcipherCli(fromUs, "PRAGMA key = 'not it'; SELECT count(*) FROM t;"))
})

test('SIGKILL during rekey leaves a database that opens with the old or the new key', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'k.db')
  const ROWS = 3000
  const db = await Database.open(file, STATES[0])
  await fill(db, ROWS)
  await db.close()
  const rnd = prng(2024)
  const child = new URL('./rekey-child.mjs', import.meta.url).pathname
  let state = 0
  let killedMidway = 0
  const rekeysPerRun = []
  for (let run = 0; run < 16; run++) {
    const proc = spawn(process.execPath, [child, file, String(state)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    proc.stdout.on('data', (d) => (out += d))
    await new Promise((resolve, reject) => {
      const check = setInterval(() => {
        if (out.includes('ready')) {
          clearInterval(check)
          // somewhere inside the first few rekeys
          setTimeout(resolve, rnd() * 400)
        }
      }, 2)
      proc.on('exit', (code) => reject(new Error(`the child exited early (${code}): ${out}`)))
    })
    proc.kill('SIGKILL')
    await new Promise((resolve) => proc.once('exit', resolve))
    const acknowledged = out.match(/rekeyed \d/g) ?? []
    rekeysPerRun.push(acknowledged.length)
    const last = acknowledged.length ? Number(acknowledged.at(-1).slice(-1)) : state
    // try the state the child last reported first, then the other one
    const opened = []
    for (const s of [last, 1 - last]) {
      const before = snapshot(dir)
      try {
        assert.equal(await count(file, STATES[s]), ROWS)
        opened.push(s)
        break
      } catch (e) {
        assert.equal(e.code, 'ERR_ENCRYPTION_KEY', `run ${run}: ${e.message}`)
        assert.deepStrictEqual(snapshot(dir), before, 'a failed open must not change the files')
      }
    }
    assert.equal(opened.length, 1, `run ${run}: the database opened with neither key`)
    if (opened[0] !== last) killedMidway++
    state = opened[0]
    assert.ok(!fs.existsSync(`${file}-rekey`), 'opening the writer removes an interrupted rekey copy')
  }
  // informative: how often the kill landed after the rename but before the child reported it
  t.diagnostic(`rekeys finished per run before the kill: ${rekeysPerRun.join(' ')}`)
  t.diagnostic(`runs where the file was already in the unreported state: ${killedMidway}`)
})
