// Edges of the public API (issue 30): re-entrant parameter packing, read-only properties,
// diagnostics after close, live-query subscribe checks, one AbortSignal shared by many calls,
// and options that are refused rather than ignored.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, openDb } from './helpers.mjs'

const T = { timeout: 20_000 }

async function drain(iterator) {
  const rows = []
  for await (const row of iterator) rows.push(row)
  return rows
}

test('a parameter getter that calls the library binds each call its own values', T, async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (a TEXT, b TEXT)')
  let inner
  const params = {
    get a() {
      // Packed while the outer call is half packed: the nested call must not overwrite it.
      inner = db.select('SELECT :x AS x, :y AS y', { x: 'INJ-1', y: 'INJ-2' })
      return 'first'
    },
    b: 'second',
  }
  await db.execute('INSERT INTO t (a, b) VALUES (:a, :b)', params)
  assert.deepStrictEqual(await inner, [{ x: 'INJ-1', y: 'INJ-2' }])
  assert.deepStrictEqual(await db.select('SELECT a, b FROM t'), [{ a: 'first', b: 'second' }])

  // Positional, and executeBatch, with a nested write in an array element's getter.
  const row = ['p1', 'p2']
  Object.defineProperty(row, 0, {
    get() {
      inner = db.execute('INSERT INTO t (a, b) VALUES (?, ?)', ['nested-a', 'nested-b'])
      return 'p1'
    },
  })
  await db.executeBatch('INSERT INTO t (a, b) VALUES (?, ?)', [row, ['q1', 'q2']])
  await inner
  assert.deepStrictEqual(await db.select("SELECT a, b FROM t WHERE a <> 'first' ORDER BY a"), [
    { a: 'nested-a', b: 'nested-b' },
    { a: 'p1', b: 'p2' },
    { a: 'q1', b: 'q2' },
  ])

  // A nested call whose packing fails (undefined is refused) leaves the outer packing intact.
  let nestedError
  const outer = {
    get a() {
      db.select('SELECT :v AS v', { v: 'x', w: undefined }).catch((e) => (nestedError = e))
      return 'after-throw'
    },
    b: 'ok',
  }
  await db.execute('INSERT INTO t (a, b) VALUES (:a, :b)', outer)
  assert.deepStrictEqual(await db.select("SELECT b FROM t WHERE a = 'after-throw'"), [{ b: 'ok' }])
  assert.equal(nestedError?.code, 'ERR_INVALID_ARG_TYPE')
})

test('db.path, db.readers, db.readonly and live.sql cannot be assigned', T, async (t) => {
  const db = await openDb(t, { readers: 2 })
  const before = { path: db.path, readers: db.readers, readonly: db.readonly }
  // This module is strict: assignment throws.
  for (const key of ['path', 'readers', 'readonly']) {
    assert.throws(
      () => {
        db[key] = 'changed'
      },
      TypeError,
      key,
    )
  }
  assert.deepStrictEqual({ path: db.path, readers: db.readers, readonly: db.readonly }, before)
  assert.equal(before.readers, 2)
  const live = db.stream('SELECT 1 AS one')
  assert.throws(() => {
    live.sql = 'SELECT 2'
  }, TypeError)
  assert.equal(live.sql, 'SELECT 1 AS one')
  // Sloppy-mode code (a Function body is sloppy): the assignment does nothing.
  new Function('db', 'db.readonly = true; db.path = "x"; db.readers = 9')(db)
  assert.deepStrictEqual({ path: db.path, readers: db.readers, readonly: db.readonly }, before)
})

test('a read-only database whose readonly is assigned false still refuses writes', T, async (t) => {
  const rw = await openDb(t)
  await rw.execute('CREATE TABLE t (x)')
  const ro = await Database.open(rw.path, { readonly: true })
  t.after(() => ro.close())
  new Function('ro', 'ro.readonly = false')(ro)
  assert.equal(ro.readonly, true)
  await expectReject(() => ro.execute('INSERT INTO t VALUES (1)'), ResqliteError, 'ERR_DATABASE_READONLY')
  await expectReject(() => ro.transaction(async () => {}), ResqliteError, 'ERR_DATABASE_READONLY')
})

test('diagnostics() rejects with ERR_DATABASE_CLOSED once close() was called', T, async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (x)')
  const open = await db.diagnostics()
  assert.equal(typeof open.walBytes, 'number')
  const closing = db.close()
  // Called while closing, and after: both reject, neither reports zeroed counters.
  await expectReject(() => db.diagnostics(), ResqliteError, 'ERR_DATABASE_CLOSED', /closed/)
  await closing
  await expectReject(() => db.diagnostics(), ResqliteError, 'ERR_DATABASE_CLOSED', /closed/)
})

test('options a call does not take are refused, naming the option', T, async (t) => {
  const db = await openDb(t)
  await db.execute('CREATE TABLE t (x)')
  const signal = new AbortController().signal
  const cases = [
    // [what, call, code, message fragment]
    [
      'executeBatch + signal',
      () => db.executeBatch('INSERT INTO t VALUES (?)', [[1]], { signal }),
      'ERR_INVALID_ARG_VALUE',
      /executeBatch takes no signal/,
    ],
    [
      'executeBatch + rowMode',
      () => db.executeBatch('INSERT INTO t VALUES (?)', [[1]], { rowMode: 'array' }),
      'ERR_INVALID_ARG_VALUE',
      /executeBatch takes no rowMode/,
    ],
    [
      'executeBatch + unknown',
      () => db.executeBatch('INSERT INTO t VALUES (?)', [[1]], { chunk: 10 }),
      'ERR_INVALID_ARG_VALUE',
      /unknown option 'chunk'/,
    ],
    [
      'executeBatch + non-object',
      () => db.executeBatch('INSERT INTO t VALUES (?)', [[1]], 5),
      'ERR_INVALID_ARG_TYPE',
      /options must be an object/,
    ],
    [
      'select + unknown',
      () => db.select('SELECT 1', [], { rowmode: 'array' }),
      'ERR_INVALID_ARG_VALUE',
      /unknown option 'rowmode'.*signal and rowMode/,
    ],
    [
      'selectOne + unknown',
      () => db.selectOne('SELECT 1', [], { timeout: 5 }),
      'ERR_INVALID_ARG_VALUE',
      /unknown option 'timeout'/,
    ],
    [
      'selectBytes + unknown',
      () => db.selectBytes('SELECT 1', [], { pageRows: 5 }),
      'ERR_INVALID_ARG_VALUE',
      /unknown option 'pageRows': selectBytes takes signal/,
    ],
    [
      'execute + unknown',
      () => db.execute('INSERT INTO t VALUES (1)', [], { safeIntegers: true }),
      'ERR_INVALID_ARG_VALUE',
      /unknown option 'safeIntegers': execute takes rowMode/,
    ],
    [
      'select + array options',
      () => db.select('SELECT 1', [], []),
      'ERR_INVALID_ARG_TYPE',
      /options must be an object.*Array/,
    ],
    [
      'select + a signal as options',
      () => db.select('SELECT 1', [], signal),
      'ERR_INVALID_ARG_TYPE',
      /options must be an object.*AbortSignal/,
    ],
    [
      'open + array options',
      () => Database.open(':memory:', []),
      'ERR_INVALID_ARG_TYPE',
      /options must be an object.*Array/,
    ],
    [
      'open + watch array',
      () => Database.open(':memory:', { watchExternalChanges: [] }),
      'ERR_INVALID_ARG_TYPE',
      /watchExternalChanges/,
    ],
    [
      'transaction + array options',
      () => db.transaction(async () => {}, []),
      'ERR_INVALID_ARG_TYPE',
      /options must be an object/,
    ],
    [
      'backup + array options',
      () => db.backup(`${db.path}.bak`, []),
      'ERR_INVALID_ARG_TYPE',
      /options must be an object/,
    ],
    ['rekey + array options', () => db.rekey('k', []), 'ERR_INVALID_ARG_TYPE', /options must be an object/],
  ]
  for (const [what, call, code, fragment] of cases) {
    const e = await expectReject(call, TypeError, code, fragment).catch((error) => {
      throw new Error(`${what}: ${error.message}`)
    })
    assert.ok(e, what)
  }
  const iterated = db.iterate('SELECT 1', [], { rowMode: 'array', limit: 3 })
  await assert.rejects(drain(iterated), { code: 'ERR_INVALID_ARG_VALUE', message: /unknown option 'limit'/ })
  await db.transaction(async (tx) => {
    await expectReject(
      () => tx.executeBatch('INSERT INTO t VALUES (?)', [[1]], { signal }),
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      /executeBatch takes no signal/,
    )
    await expectReject(
      () => db.executeBatch('INSERT INTO t VALUES (?)', [[1]], { signal }),
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      /executeBatch takes no signal/,
    )
    await expectReject(
      () => tx.select('SELECT 1', [], { nope: 1 }),
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      /unknown option 'nope'/,
    )
  })
  // None of them ran: t is still empty. Options whose value is undefined are as if not given.
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM t'), [{ n: 0 }])
  assert.deepStrictEqual(await db.executeBatch('INSERT INTO t VALUES (?)', [[1]], { signal: undefined }), {
    changes: 1,
  })
  assert.deepStrictEqual(await db.executeBatch('INSERT INTO t VALUES (?)', [[2]], {}), { changes: 1 })
})

test('messages about a wrong option name its type or the allowed values, never the value given', T, async (t) => {
  const db = await openDb(t)
  const secret = 'my-secret-mode'
  const cases = [
    [() => db.transaction(async () => {}, { mode: secret }), /mode must be 'deferred', 'immediate' or 'exclusive'$/],
    [() => db.select('SELECT 1', [], { rowMode: secret }), /rowMode must be 'object' or 'array'$/],
    [() => Database.open(':memory:', { checkpoints: secret }), /checkpoints must be 'auto' or 'external'$/],
    [() => Database.open(':memory:', { encryptionKey: 'k', cipher: secret }), /unknown cipher: one of/],
    [() => Database.open(':memory:', { encryptionKey: 'k', cipher: { name: secret } }), /unknown cipher\.name: one of/],
    [() => Database.open(':memory:', { readers: 777 }), /readers must be between 1 and 64$/],
    [() => Database.open(':memory:', { busyTimeout: -777 }), /busyTimeout must be between/],
    [() => Database.open(':memory:', { inlineBudget: 777 }), /inlineBudget must be between 0 and 10$/],
    [() => drain(db.iterate('SELECT 1', [], { pageRows: 7_777_777 })), /pageRows must be between/],
    [
      () => Database.open(':memory:', { attach: { [secret]: '' } }),
      /attach\.my-secret-mode is not a database file path/,
    ],
    [() => Database.open(':memory:', { attach: { main: `/tmp/${secret}` } }), /schema name cannot be 'main' or 'temp'/],
    [() => db.backup(''), /destination is not a file path/],
  ]
  for (const [call, fragment] of cases) {
    const e = await call().then(
      () => assert.fail(`resolved: ${fragment}`),
      (error) => error,
    )
    assert.match(String(e.code), /^ERR_/, e.message)
    assert.match(e.message, fragment)
    assert.doesNotMatch(e.message, /777|my-secret-mode'|\/tmp\//, e.message)
  }
})

test('rekey while another process keeps the database open rejects with SQLITE_BUSY after busyTimeout', T, async (t) => {
  const { spawn } = await import('node:child_process')
  const db = await openDb(t, { busyTimeout: 200 })
  await db.execute('CREATE TABLE t (x)')
  await db.execute('INSERT INTO t VALUES (1)')
  const holder = new URL('../dist/esm/index.mjs', import.meta.url).href
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { Database } from ${JSON.stringify(holder)}
       const db = await Database.open(${JSON.stringify(db.path)}, { readers: 1 })
       await db.select('SELECT * FROM t')
       process.stdout.write('ready\\n')
       setInterval(() => {}, 1000)`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  t.after(() => child.kill())
  await new Promise((resolve, reject) => {
    child.stdout.once('data', resolve)
    child.once('exit', reject)
  })
  // docs/api.md "rekey" and docs/values-and-errors.md: SQLite's SQLITE_BUSY, not ERR_REKEY.
  await expectReject(() => db.rekey('new key'), ResqliteError, /^SQLITE_BUSY/, /busyTimeout/)
  // The database kept its old state (plaintext): a write and a read work.
  await db.execute('INSERT INTO t VALUES (2)')
  assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM t'), [{ n: 2 }])
})

test('subscribe refuses what is not a next function or an observer, at once', T, async (t) => {
  const db = await openDb(t)
  const live = db.stream('SELECT 1 AS x')
  const cases = [
    [() => live.subscribe(), /subscribe takes a next function or an observer.*undefined/],
    [() => live.subscribe(42), /subscribe takes a next function or an observer.*number/],
    [() => live.subscribe(null), /subscribe takes a next function or an observer.*null/],
    [() => live.subscribe('next'), /subscribe takes a next function or an observer.*string/],
    [() => live.subscribe(() => {}, 42), /error must be a function.*number/],
    [() => live.subscribe({ next: 42 }), /observer\.next must be a function.*number/],
    [() => live.subscribe({ next() {}, error: 'x' }), /observer\.error must be a function.*string/],
    [() => live.subscribe({ next() {}, complete: {} }), /observer\.complete must be a function/],
  ]
  for (const [call, fragment] of cases)
    assert.throws(call, { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: fragment })
  assert.throws(() => live.subscribe({ next() {} }, () => {}), { code: 'ERR_INVALID_ARG_VALUE' })
  // Nothing was started by the refused calls.
  assert.equal((await db.diagnostics()).streams.active, 0)
  // An observer with some methods only (RxJS's partial observer) is fine.
  const rows = await new Promise((resolve) => {
    const stop = live.subscribe({ next: (r) => (stop(), resolve(r)) })
  })
  assert.deepStrictEqual(rows, [{ x: 1 }])
})

test('a subscriber that throws: its error is an uncaught exception, other subscribers still get rows', T, async () => {
  const { execFileSync } = await import('node:child_process')
  const lib = new URL('../dist/esm/index.mjs', import.meta.url).href
  const script = `
    import { Database } from ${JSON.stringify(lib)}
    const db = await Database.open(':memory:')
    await db.execute('CREATE TABLE t (x)')
    const boom = new Error('boom from next')
    const seen = { uncaught: [], second: [], completeThrew: false }
    process.on('uncaughtException', (e) => seen.uncaught.push(e === boom ? 'boom' : e.message))
    let firstCalls = 0
    db.stream('SELECT count(*) AS n FROM t').subscribe(() => { firstCalls++; throw boom })
    db.stream('SELECT count(*) AS n FROM t').subscribe({ next: (r) => seen.second.push(r[0].n), complete() { seen.completeThrew = true; throw new Error('boom from complete') } })
    await new Promise((r) => setTimeout(r, 200))
    await db.execute('INSERT INTO t VALUES (1)')
    await new Promise((r) => setTimeout(r, 300))
    await db.close()
    await new Promise((r) => setTimeout(r, 50))
    console.log(JSON.stringify({ ...seen, firstCalls }))
  `
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 15_000,
  })
  const seen = JSON.parse(out.trim().split('\n').pop())
  // The throwing subscriber stays subscribed (it saw both results), the other one saw both too,
  // and each throw reached 'uncaughtException' as the original error.
  assert.deepStrictEqual(seen, {
    uncaught: ['boom', 'boom', 'boom from complete'],
    second: [0, 1],
    completeThrew: true,
    firstCalls: 2,
  })
})

/** Collects process warnings while `fn` runs (and a turn after). */
async function warningsDuring(fn) {
  const warnings = []
  const onWarning = (w) => warnings.push(w)
  process.on('warning', onWarning)
  try {
    await fn()
    await new Promise((resolve) => setTimeout(resolve, 50))
  } finally {
    process.off('warning', onWarning)
  }
  return warnings
}

const SLOW = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1e9) SELECT count(*) AS n FROM c'

test(
  'one AbortSignal shared by 50 concurrent reads and iterations: no listener warning, abort cancels them all',
  T,
  async (t) => {
    const db = await openDb(t)
    const ac = new AbortController()
    const warnings = await warningsDuring(async () => {
      // Finished calls give their listener back: 50 quick reads leave none behind.
      const quick = await Promise.all(
        Array.from({ length: 50 }, (_, i) => db.select('SELECT ? AS i', [i], { signal: ac.signal })),
      )
      assert.equal(quick.length, 50)
      const reads = Array.from({ length: 50 }, () => db.select(SLOW, [], { signal: ac.signal }))
      await new Promise((resolve) => setTimeout(resolve, 100))
      // An iteration's page is not interrupted natively (it ends at the page), so these are
      // started just before the abort, still waiting for their first page when it comes.
      const iterations = Array.from({ length: 12 }, () =>
        drain(db.iterate(SLOW.replace('1e9', '3e5'), [], { signal: ac.signal })),
      )
      const settled = Promise.allSettled([...reads, ...iterations])
      ac.abort(new Error('request gone'))
      const results = await settled
      for (const r of results) {
        assert.equal(r.status, 'rejected')
        assert.equal(r.reason.code, 'ABORT_ERR')
        assert.equal(r.reason.cause.message, 'request gone')
      }
    })
    assert.deepStrictEqual(
      warnings.map((w) => w.name),
      [],
    )
    // The readers are free again.
    assert.deepStrictEqual(await db.select('SELECT 1 AS one'), [{ one: 1 }])
  },
)

test(
  'one AbortSignal shared by 30 waiting transactions and 20 reads inside one: no listener warning, abort ends them all',
  T,
  async (t) => {
    const db = await openDb(t)
    await db.execute('CREATE TABLE t (x)')
    const ac = new AbortController()
    const { signal } = ac
    let release
    const holding = new Promise((resolve) => (release = resolve))
    const warnings = await warningsDuring(async () => {
      let inner
      // The first transaction holds the writer; its body issues 20 reads with the signal.
      const first = db.transaction(
        async (tx) => {
          await tx.execute('INSERT INTO t VALUES (1)')
          inner = Promise.allSettled(
            Array.from({ length: 20 }, () => tx.select('SELECT count(*) AS n FROM t', [], { signal })),
          )
          await holding
        },
        { signal },
      )
      // 30 more wait their turn with the same signal.
      const waiting = Array.from({ length: 30 }, () =>
        db.transaction(async (tx) => tx.execute('INSERT INTO t VALUES (2)'), { signal }),
      )
      await new Promise((resolve) => setTimeout(resolve, 50))
      ac.abort(new Error('request gone'))
      const results = await Promise.allSettled([first, ...waiting])
      for (const r of results) {
        assert.equal(r.status, 'rejected')
        assert.equal(r.reason.code, 'ABORT_ERR')
      }
      release()
      for (const r of await inner) if (r.status === 'rejected') assert.equal(r.reason.code, 'ABORT_ERR')
    })
    assert.deepStrictEqual(
      warnings.map((w) => w.name),
      [],
    )
    // Every transaction rolled back: nothing was written.
    assert.deepStrictEqual(await db.select('SELECT count(*) AS n FROM t'), [{ n: 0 }])
  },
)
