// Bad input (issue 30), part 3: execute and executeBatch, hostile SQL (ATTACH, VACUUM INTO,
// load_extension, PRAGMA writes, very long SQL, deep nesting), transactions and the
// Transaction's methods, backup, rekey, and live queries. Harness and case format:
// bad-input-harness.mjs.

import assert from 'node:assert/strict'
import fs from 'node:fs'
import { Kysely, sql } from 'kysely'
import { drizzle } from '../dist/esm/drizzle.mjs'
import { ResqliteError } from '../dist/esm/index.mjs'
import { ResqliteDialect } from '../dist/esm/kysely.mjs'
import { drain, runCases, within } from './bad-input-harness.mjs'

const TYPE = [TypeError, 'ERR_INVALID_ARG_TYPE']
const VALUE = [TypeError, 'ERR_INVALID_ARG_VALUE']
const RANGE = [RangeError, 'ERR_OUT_OF_RANGE']
const thrown = new Error('thrown by user code')

/** Rows of t whose a is `tag` (cases tag what they write, so they do not see each other's). */
const tagged = (db, tag) => db.select('SELECT b FROM t WHERE a = ? ORDER BY rowid', [tag])

const EXECUTE = [
  ['sql a number', (db) => db.execute(42), { rejects: [...TYPE, /sql must be a string, got type number/] }],
  ["sql ''", (db) => db.execute(''), { rejects: [ResqliteError, 'ERR_EMPTY_STATEMENT'] }],
  ['sql only whitespace', (db) => db.execute(' \n\t '), { rejects: [ResqliteError, 'ERR_EMPTY_STATEMENT'] }],
  [
    'several statements with parameters',
    (db) => db.execute("INSERT INTO t VALUES ('x', ?); INSERT INTO t VALUES ('x', 2)", [1]),
    { rejects: [ResqliteError, 'ERR_MULTIPLE_STATEMENTS', /parameters given/] },
  ],
  [
    'a signal is refused',
    (db) => db.execute("INSERT INTO t VALUES ('sig', 1)", [], { signal: new AbortController().signal }),
    { rejects: [...VALUE, /execute takes no signal/] },
  ],
  [
    'an unknown option',
    (db) => db.execute('SELECT 1', [], { pageRows: 5 }),
    { rejects: [...VALUE, /unknown option 'pageRows'/] },
  ],
  [
    "rowMode 'rows'",
    (db) => db.execute('SELECT 1', [], { rowMode: 'rows' }),
    { rejects: [...VALUE, /rowMode must be/] },
  ],
  ['options an array', (db) => db.execute('SELECT 1', [], []), { rejects: [...TYPE, /options must be an object/] }],
  [
    'BEGIN without COMMIT is rolled back',
    (db) => db.execute("BEGIN; INSERT INTO t VALUES ('open-tx', 1)"),
    { rejects: [ResqliteError, 'ERR_OPEN_TRANSACTION', /db\.transaction\(\)/] },
  ],
  ['SAVEPOINT left open', (db) => db.execute('SAVEPOINT s'), { rejects: [ResqliteError, 'ERR_OPEN_TRANSACTION'] }],
  [
    'COMMIT with none open',
    (db) => db.execute('COMMIT'),
    { rejects: [ResqliteError, 'SQLITE_ERROR', /no transaction is active/] },
  ],
  [
    'RELEASE of no savepoint',
    (db) => db.execute('RELEASE s'),
    { rejects: [ResqliteError, 'SQLITE_ERROR', /no such savepoint/] },
  ],
  [
    'a UNIQUE violation',
    (db) => db.execute("INSERT INTO items (name) VALUES ('one')"),
    { rejects: [ResqliteError, 'SQLITE_CONSTRAINT_UNIQUE', /items\.name/] },
  ],
  [
    'a NOT NULL violation',
    (db) => db.execute('INSERT INTO items (name) VALUES (NULL)'),
    { rejects: [ResqliteError, 'SQLITE_CONSTRAINT_NOTNULL'] },
  ],
  [
    'a syntax error',
    (db) => db.execute('INSRT INTO t VALUES (1)'),
    { rejects: [ResqliteError, 'SQLITE_ERROR', /syntax error/] },
  ],
  [
    'too many parameters',
    (db) => db.execute('INSERT INTO t VALUES (?, ?)', [1, 2, 3]),
    { rejects: [ResqliteError, 'ERR_PARAMETER_COUNT'] },
  ],
  [
    'a script without parameters runs every statement',
    async (db) => {
      await db.execute("INSERT INTO t VALUES ('script', 1); INSERT INTO t VALUES ('script', 2)")
      return tagged(db, 'script')
    },
    { resolves: [{ b: 1 }, { b: 2 }] },
  ],
  [
    'a SELECT through execute returns its rows',
    (db) => db.execute('SELECT name FROM items WHERE id = 1'),
    { check: (r) => assert.deepStrictEqual(r.rows, [{ name: 'one' }]) },
  ],
  [
    'a failing statement in a script: the statements before it stay, none after it runs',
    async (db) => {
      const error = await db
        .execute(
          "INSERT INTO t VALUES ('half', 1); INSERT INTO items (name) VALUES ('one'); INSERT INTO t VALUES ('half', 3)",
        )
        .catch((e) => e)
      return [error.code, await tagged(db, 'half')]
    },
    { resolves: ['SQLITE_CONSTRAINT_UNIQUE', [{ b: 1 }]] },
  ],
].map(([name, run, expectation]) => ({ name: `execute: ${name}`, run: (ctx) => run(ctx.db), ...expectation }))

const BATCH = [
  ['sql a number', (db) => db.executeBatch(42, []), { rejects: [...TYPE, /sql must be a string/] }],
  [
    'paramSets an object',
    (db) => db.executeBatch('INSERT INTO t VALUES (?, ?)', { a: 1 }),
    { rejects: [...TYPE, /paramSets must be an array/] },
  ],
  [
    'paramSets missing',
    (db) => db.executeBatch('INSERT INTO t VALUES (?, ?)'),
    { rejects: [...TYPE, /paramSets must be an array/] },
  ],
  [
    'a set that is a number',
    (db) => db.executeBatch('INSERT INTO t VALUES (?, ?)', [1]),
    { rejects: [...TYPE, /paramSets\[0\] must be an array/] },
  ],
  ['[] runs nothing', (db) => db.executeBatch('INSERT INTO t VALUES (?, ?)', []), { resolves: { changes: 0 } }],
  [
    'two statements',
    (db) => db.executeBatch('INSERT INTO t VALUES (?, ?); SELECT 1', [[1, 2]]),
    { rejects: [ResqliteError, 'ERR_MULTIPLE_STATEMENTS'] },
  ],
  [
    'a bad value in a later set: nothing runs',
    async (db) => {
      const error = await db
        .executeBatch('INSERT INTO t VALUES (?, ?)', [
          ['batch-type', 1],
          ['batch-type', undefined],
        ])
        .catch((e) => e)
      return [error.code, /paramSets|parameter 2/.test(error.message), await tagged(db, 'batch-type')]
    },
    { resolves: ['ERR_INVALID_ARG_TYPE', true, []] },
  ],
  [
    'a constraint failure in a later set: all rolled back',
    async (db) => {
      const error = await db
        .executeBatch('INSERT INTO items (name) VALUES (?)', [['batch-x1'], ['one'], ['batch-x2']])
        .catch((e) => e)
      return [error.code, await db.select("SELECT name FROM items WHERE name LIKE 'batch-%'")]
    },
    { resolves: ['SQLITE_CONSTRAINT_UNIQUE', []] },
  ],
  [
    'a signal is refused',
    (db) => db.executeBatch('INSERT INTO t VALUES (?, ?)', [['s', 1]], { signal: new AbortController().signal }),
    { rejects: [...VALUE, /executeBatch takes no signal/] },
  ],
  [
    'any other option is refused',
    (db) => db.executeBatch('INSERT INTO t VALUES (?, ?)', [['s', 1]], { chunkSize: 100 }),
    { rejects: [...VALUE, /unknown option 'chunkSize': executeBatch takes no options/] },
  ],
  [
    'named and positional sets mixed',
    async (db) => {
      const r = await db.executeBatch('INSERT INTO t VALUES (:a, :b)', [['mixed', 1], { a: 'mixed', b: 2 }])
      return [r, await tagged(db, 'mixed')]
    },
    { resolves: [{ changes: 2 }, [{ b: 1 }, { b: 2 }]] },
  ],
  [
    'a set with too few parameters',
    (db) => db.executeBatch('INSERT INTO t VALUES (?, ?)', [['few', 1], ['few']]),
    { rejects: [ResqliteError, 'ERR_PARAMETER_COUNT'] },
  ],
].map(([name, run, expectation]) => ({ name: `executeBatch: ${name}`, run: (ctx) => run(ctx.db), ...expectation }))

const HOSTILE = [
  [
    'load_extension() from SQL is not authorized',
    (db) => db.execute("SELECT load_extension('/tmp/nope.so')"),
    { rejects: [ResqliteError, 'SQLITE_ERROR', /not authorized/] },
  ],
  [
    'load_extension() through select too',
    (db) => db.select("SELECT load_extension('/tmp/nope.so')"),
    { rejects: [ResqliteError, 'SQLITE_ERROR', /not authorized/] },
  ],
  [
    'ATTACH through select is refused (not read-only) or fails to open',
    (db, ctx) => db.select(`ATTACH '${ctx.file('attached-by-select.db')}' AS x`),
    { rejects: [ResqliteError, /^(ERR_NOT_READ_ONLY|SQLITE_CANTOPEN)$/] },
  ],
  [
    'ATTACH and DETACH through execute reach the writer',
    async (db, ctx) => {
      await db.execute(`ATTACH '${ctx.file('attached.db')}' AS side`)
      await db.execute('CREATE TABLE side.s (x)')
      await db.execute('INSERT INTO side.s VALUES (1)')
      const inTx = await db.transaction(async (tx) => tx.select('SELECT x FROM side.s'))
      await db.execute('DETACH side')
      return inTx
    },
    { resolves: [{ x: 1 }] },
  ],
  [
    'VACUUM INTO a new file makes a copy',
    async (db, ctx) => {
      await db.execute(`VACUUM INTO '${ctx.file('vacuumed.db')}'`)
      return fs.existsSync(ctx.file('vacuumed.db'))
    },
    { resolves: true },
  ],
  [
    'VACUUM INTO an existing file is refused',
    (db, ctx) => db.execute(`VACUUM INTO '${ctx.file('shared.db')}'`),
    { rejects: [ResqliteError, 'SQLITE_ERROR', /output file already exists/] },
  ],
  [
    'VACUUM INTO through select is refused',
    (db, ctx) => db.select(`VACUUM INTO '${ctx.file('v2.db')}'`),
    { rejects: [ResqliteError, 'ERR_NOT_READ_ONLY'] },
  ],
  ['VACUUM runs', (db) => db.execute('VACUUM'), { check: (r) => assert.equal(r.changes, 0) }],
  [
    'PRAGMA journal_mode = DELETE is refused: the readers need WAL (issue 43)',
    (db) => db.execute('PRAGMA journal_mode = DELETE'),
    { rejects: [ResqliteError, 'ERR_JOURNAL_MODE', /journal_mode can only be WAL/] },
  ],
  [
    'deeply nested parentheses',
    (db) => db.select(`SELECT ${'('.repeat(5000)}1${')'.repeat(5000)} AS v`),
    { rejects: [ResqliteError, 'SQLITE_ERROR'] },
  ],
  [
    'deeply nested subqueries',
    (db) => db.select(`SELECT ${'(SELECT '.repeat(1100)}1${')'.repeat(1100)} AS v`),
    { rejects: [ResqliteError, 'SQLITE_ERROR', /too large|depth|Recursion/] },
  ],
  [
    'a 2 MB statement through execute',
    async (db) => {
      await db.execute(`INSERT INTO t VALUES ('long', '${'y'.repeat(2_000_000)}')`)
      return db.selectOne("SELECT length(b) AS n FROM t WHERE a = 'long'")
    },
    { resolves: { n: 2_000_000 } },
  ],
  [
    'a recursive CTE without end is interrupted by its signal',
    (db) => {
      const ac = new AbortController()
      setTimeout(() => ac.abort(), 100)
      return db.select('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c', [], {
        signal: ac.signal,
      })
    },
    { rejects: [ResqliteError, 'ABORT_ERR'] },
  ],
  [
    'a temp table made through execute lives on the writer only',
    async (db) => {
      await db.execute('CREATE TEMP TABLE IF NOT EXISTS scratch (x)')
      return db.select('SELECT * FROM scratch').catch((e) => e.code)
    },
    { resolves: 'SQLITE_ERROR' },
  ],
  [
    'PRAGMA query_only on the writer: writes then fail with SQLITE_READONLY, until it is turned off',
    async (db) => {
      await db.execute('PRAGMA query_only = 1')
      const error = await db.execute("INSERT INTO t VALUES ('qo', 1)").catch((e) => e.code)
      await db.execute('PRAGMA query_only = 0')
      return error
    },
    { resolves: 'SQLITE_READONLY' },
  ],
].map(([name, run, expectation]) => ({ name: `hostile SQL: ${name}`, run: (ctx) => run(ctx.db, ctx), ...expectation }))

const TRANSACTION = [
  ['body a number', (db) => db.transaction(42), { rejects: [...TYPE, /the transaction body must be a function/] }],
  ['body missing', (db) => db.transaction(), { rejects: [...TYPE, /the transaction body must be a function/] }],
  [
    'body returns a number',
    (db) => db.transaction(() => 1),
    { rejects: [TypeError, 'ERR_INVALID_RETURN_VALUE', /must return a promise/] },
  ],
  [
    'body returns a thenable',
    // biome-ignore lint/suspicious/noThenProperty: a thenable body result is the case
    (db) => db.transaction(() => ({ then: (resolve) => resolve(5) })),
    { resolves: 5 },
  ],
  [
    "mode 'weird' (not echoed)",
    (db) => db.transaction(async () => 1, { mode: 'weird' }),
    { rejects: [...VALUE, /^mode must be 'deferred', 'immediate' or 'exclusive'$/] },
  ],
  ['mode 1', (db) => db.transaction(async () => 1, { mode: 1 }), { rejects: [...VALUE, /got type number/] }],
  [
    'an unknown option',
    (db) => db.transaction(async () => 1, { timeout: 5 }),
    { rejects: [...VALUE, /unknown transaction option 'timeout'/] },
  ],
  [
    'options a string',
    (db) => db.transaction(async () => 1, 'immediate'),
    { rejects: [...TYPE, /options must be an object/] },
  ],
  [
    'signal not an AbortSignal',
    (db) => db.transaction(async () => 1, { signal: 'abort' }),
    { rejects: [...TYPE, /signal must be an AbortSignal/] },
  ],
  [
    'signal already aborted: the body never runs',
    async (db) => {
      let ran = false
      const error = await db
        .transaction(
          async () => {
            ran = true
          },
          { signal: AbortSignal.abort() },
        )
        .catch((e) => e.code)
      return [error, ran]
    },
    { resolves: ['ABORT_ERR', false] },
  ],
  [
    'a body that throws: rejects with its error, writes rolled back',
    async (db) => {
      const error = await db
        .transaction(async (tx) => {
          await tx.execute("INSERT INTO t VALUES ('rolled', 1)")
          throw thrown
        })
        .catch((e) => e)
      return [error === thrown, await tagged(db, 'rolled')]
    },
    { resolves: [true, []] },
  ],
  [
    'a body that throws a string',
    (db) =>
      db.transaction(async () => {
        throw 'a string'
      }),
    { rejectsWith: 'a string' },
  ],
  [
    'tx used after the body returned',
    async (db) => {
      let kept
      await db.transaction(async (tx) => {
        kept = tx
      })
      return kept.select('SELECT 1')
    },
    { rejects: [ResqliteError, 'ERR_TRANSACTION_FINISHED'] },
  ],
  [
    'a nested transaction given options',
    (db) => db.transaction(async (tx) => tx.transaction(async () => 1, { mode: 'immediate' })),
    { rejects: [...VALUE, /nested transaction takes no 'mode' option/] },
  ],
  [
    'a nested transaction given an array as options',
    (db) => db.transaction(async (tx) => tx.transaction(async () => 1, [])),
    { rejects: [...TYPE, /options must be an object/] },
  ],
  [
    'rekey inside a body',
    (db) => db.transaction(async () => db.rekey('k')),
    { rejects: [ResqliteError, 'ERR_REKEY_IN_TRANSACTION'] },
  ],
  [
    'tx.select of a write',
    (db) => db.transaction(async (tx) => tx.select("INSERT INTO t VALUES ('x', 1)")),
    { rejects: [ResqliteError, 'ERR_NOT_READ_ONLY'] },
  ],
  [
    'tx.selectOne with too many parameters',
    (db) => db.transaction(async (tx) => tx.selectOne('SELECT ?', [1, 2])),
    { rejects: [ResqliteError, 'ERR_PARAMETER_COUNT'] },
  ],
  [
    'tx.selectBytes with rowMode',
    (db) => db.transaction(async (tx) => tx.selectBytes('SELECT 1', [], { rowMode: 'array' })),
    { rejects: [...VALUE, /selectBytes takes no rowMode/] },
  ],
  [
    'tx.iterate of a write',
    (db) => db.transaction(async (tx) => drain(tx.iterate("DELETE FROM items WHERE name = 'one'"))),
    { rejects: [ResqliteError, 'ERR_NOT_READ_ONLY'] },
  ],
  [
    'tx.execute with a bad parameter: the transaction rejects, nothing written',
    async (db) => {
      const error = await db
        .transaction(async (tx) => {
          await tx.execute("INSERT INTO t VALUES ('tx-param', 1)")
          await tx.execute('INSERT INTO t VALUES (?, ?)', ['tx-param', Symbol('s')])
        })
        .catch((e) => e.code)
      return [error, await tagged(db, 'tx-param')]
    },
    { resolves: ['ERR_INVALID_ARG_TYPE', []] },
  ],
  [
    'tx.executeBatch with a signal',
    (db) =>
      db.transaction(async (tx) =>
        tx.executeBatch('INSERT INTO t VALUES (?, ?)', [['x', 1]], { signal: AbortSignal.abort() }),
      ),
    { rejects: [...VALUE, /executeBatch takes no signal/] },
  ],
  [
    'tx.columns of two statements',
    (db) => db.transaction(async (tx) => tx.columns('SELECT 1; SELECT 2')),
    { rejects: [ResqliteError, 'ERR_MULTIPLE_STATEMENTS'] },
  ],
  [
    'a caught failure inside the body does not end the transaction',
    async (db) => {
      await db.transaction(async (tx) => {
        await tx.execute("INSERT INTO items (name) VALUES ('one')").catch(() => {})
        await tx.execute("INSERT INTO t VALUES ('caught', 1)")
      })
      return tagged(db, 'caught')
    },
    { resolves: [{ b: 1 }] },
  ],
  [
    'a nested body that throws rolls back its savepoint only',
    async (db) => {
      await db.transaction(async (tx) => {
        await tx.execute("INSERT INTO t VALUES ('nest', 1)")
        await tx
          .transaction(async (inner) => {
            await inner.execute("INSERT INTO t VALUES ('nest', 2)")
            throw thrown
          })
          .catch(() => {})
      })
      return tagged(db, 'nest')
    },
    { resolves: [{ b: 1 }] },
  ],
].map(([name, run, expectation]) => ({ name: `transaction: ${name}`, run: (ctx) => run(ctx.db), ...expectation }))

const BACKUP = [
  ['destination a number', (db) => db.backup(42), { rejects: [...TYPE, /destination must be a string/] }],
  [
    "destination ''",
    (db) => db.backup(''),
    { rejects: [ResqliteError, 'ERR_INVALID_PATH', /destination is not a file path/] },
  ],
  ["destination ':memory:'", (db) => db.backup(':memory:'), { rejects: [ResqliteError, 'ERR_INVALID_PATH'] }],
  [
    'destination exists',
    (db, ctx) => db.backup(ctx.file('shared.db')),
    { rejects: [ResqliteError, 'ERR_INVALID_PATH', /exists/] },
  ],
  [
    'destination in a missing directory',
    (db, ctx) => db.backup(ctx.file('missing/dir/b.db')),
    { rejects: [ResqliteError, 'SQLITE_CANTOPEN'] },
  ],
  [
    'progress not a function',
    (db, ctx) => db.backup(ctx.file('b-progress.db'), { progress: 1 }),
    { rejects: [...TYPE, /options\.progress must be a function/] },
  ],
  [
    'an unknown option',
    (db, ctx) => db.backup(ctx.file('b-unknown.db'), { overwrite: true }),
    { rejects: [...VALUE, /unknown backup option 'overwrite'/] },
  ],
  [
    'options an array',
    (db, ctx) => db.backup(ctx.file('b-array.db'), []),
    { rejects: [...TYPE, /options must be an object/] },
  ],
  [
    'signal already aborted: nothing is left at the destination',
    async (db, ctx) => {
      const error = await db.backup(ctx.file('b-aborted.db'), { signal: AbortSignal.abort() }).catch((e) => e.code)
      return [error, fs.existsSync(ctx.file('b-aborted.db'))]
    },
    { resolves: ['ABORT_ERR', false] },
  ],
  [
    'a progress callback that throws: the backup rejects with its error',
    (db, ctx) =>
      db.backup(ctx.file('b-throws.db'), {
        progress() {
          throw thrown
        },
      }),
    { rejectsWith: thrown },
  ],
].map(([name, run, expectation]) => ({ name: `backup: ${name}`, run: (ctx) => run(ctx.db, ctx), ...expectation }))

const REKEY = [
  ['newKey missing', (db) => db.rekey(), { rejects: [...TYPE, /rekey needs a new key, or null to decrypt/] }],
  [
    'newKey a number',
    (db) => db.rekey(42),
    { rejects: [...TYPE, /newKey must be a string or a Uint8Array, got type number/] },
  ],
  ["newKey ''", (db) => db.rekey(''), { rejects: [...VALUE, /newKey must not be empty/] }],
  ["newKey starting with 'raw:'", (db) => db.rekey('raw:zz'), { rejects: [...VALUE, /raw:/] }],
  ['newKey bytes of the wrong length', (db) => db.rekey(new Uint8Array(3)), { rejects: [...RANGE, /32 bytes/] }],
  [
    'null with a cipher',
    (db) => db.rekey(null, { cipher: 'chacha20' }),
    { rejects: [...VALUE, /a cipher was given to decrypt/] },
  ],
  ['an unknown option', (db) => db.rekey('k', { kdf: 1 }), { rejects: [...VALUE, /unknown rekey option 'kdf'/] }],
  ['options an array', (db) => db.rekey('k', ['chacha20']), { rejects: [...TYPE, /options must be an object/] }],
  [
    'an unknown cipher (not echoed)',
    (db) => db.rekey('k', { cipher: 'enigma' }),
    { rejects: [...VALUE, /^unknown options\.cipher: one of (?!.*enigma)/] },
  ],
  [
    'on a read-only database',
    async (_, ctx) => {
      const ro = await ctx.fresh({ readonly: true }, 'shared.db')
      return ro.rekey('k')
    },
    { rejects: [ResqliteError, 'ERR_DATABASE_READONLY'] },
  ],
].map(([name, run, expectation]) => ({ name: `rekey: ${name}`, run: (ctx) => run(ctx.db, ctx), ...expectation }))

/** Subscribes and settles with what the subscriber saw first: rows, or an error then complete. */
function firstEvent(live) {
  return within(
    new Promise((resolve) => {
      let error
      const stop = live.subscribe({
        next: (rows) => {
          stop()
          resolve({ rows })
        },
        error: (e) => (error = e),
        complete: () => resolve({ error, completed: true }),
      })
    }),
  )
}

const STREAM = [
  {
    name: 'subscribe() with nothing',
    run: (ctx) => ctx.db.stream('SELECT 1').subscribe(),
    throws: [...TYPE, /subscribe takes a next function or an observer/],
  },
  {
    name: 'subscribe(42)',
    run: (ctx) => ctx.db.stream('SELECT 1').subscribe(42),
    throws: [...TYPE, /got type number/],
  },
  {
    name: 'subscribe with an error that is not a function',
    run: (ctx) => ctx.db.stream('SELECT 1').subscribe(() => {}, 'oops'),
    throws: [...TYPE, /error must be a function/],
  },
  {
    name: 'an observer whose next is not a function',
    run: (ctx) => ctx.db.stream('SELECT 1').subscribe({ next: 'rows' }),
    throws: [...TYPE, /observer\.next must be a function/],
  },
].map((c) => ({ ...c, name: `stream: ${c.name}` }))

const STREAM_ASYNC = [
  ['sql a number', (db) => db.stream(42), [...TYPE, /sql must be a string/]],
  ['a write', (db) => db.stream("DELETE FROM items WHERE name = 'one'"), [ResqliteError, 'ERR_NOT_READ_ONLY']],
  ['two statements', (db) => db.stream('SELECT 1; SELECT 2'), [ResqliteError, 'ERR_MULTIPLE_STATEMENTS']],
  ['a syntax error', (db) => db.stream('SELEC 1'), [ResqliteError, 'SQLITE_ERROR', /syntax error/]],
  ['too many parameters', (db) => db.stream('SELECT ?', [1, 2]), [ResqliteError, 'ERR_PARAMETER_COUNT']],
  [
    'a parameter of a wrong type',
    (db) => db.stream('SELECT ?', [true]),
    [...TYPE, /parameter 1 has an unsupported type/],
  ],
  ['params a string', (db) => db.stream('SELECT ?', 'x'), [...TYPE, /params must be an array/]],
  [
    'options given (a signal: a live query runs until unsubscribed)',
    (db) => db.stream('SELECT 1', [], { signal: new AbortController().signal }),
    [...VALUE, /stream takes no options/],
  ],
].map(([name, make, expected]) => ({
  name: `stream: ${name}: the error reaches the subscriber, then complete`,
  run: async (ctx) => {
    const seen = await firstEvent(make(ctx.db))
    assert.ok(seen.completed, 'completed')
    return Promise.reject(seen.error)
  },
  rejects: expected,
}))

const STREAM_MORE = [
  {
    name: 'stream: for await over a failing live query throws its error',
    run: async (ctx) => {
      for await (const _ of ctx.db.stream('SELECT * FROM nope')) return 'rows'
    },
    rejects: [ResqliteError, 'SQLITE_ERROR', /no such table/],
  },
  {
    name: 'stream: unsubscribing twice is a no-op',
    run: async (ctx) => {
      const stop = ctx.db.stream('SELECT 1').subscribe(() => {})
      stop()
      stop()
      stop.unsubscribe()
      return [stop.closed, (await ctx.db.diagnostics()).streams.active]
    },
    resolves: [true, 0],
  },
  {
    name: 'stream: a getter in its params that reads is packed correctly',
    run: async (ctx) => {
      let inner
      const seen = await firstEvent(
        ctx.db.stream('SELECT :a AS a', {
          get a() {
            inner = ctx.db.select('SELECT 7 AS seven')
            return 'live'
          },
        }),
      )
      return [seen.rows, await inner]
    },
    resolves: [[{ a: 'live' }], [{ seven: 7 }]],
  },
  {
    name: 'stream: sql cannot be reassigned',
    run: async (ctx) => {
      const live = ctx.db.stream('SELECT 1 AS one')
      assert.throws(() => {
        live.sql = 'SELECT 2'
      }, TypeError)
      return (await firstEvent(live)).rows
    },
    resolves: [{ one: 1 }],
  },
]

// Cases of issue 30 items fixed beside this suite (the item in the name).
const ITEM_FIXES = [
  {
    name: 'item 3: a read issued after an unawaited write sees it',
    run: async (ctx) => {
      ctx.db.execute("INSERT INTO t VALUES ('raw', 1)")
      return ctx.db.select("SELECT b FROM t WHERE a = 'raw'")
    },
    resolves: [{ b: 1 }],
  },
  {
    name: 'item 9: close() inside a transaction body settles (no deadlock)',
    run: async (ctx) => {
      const db = await ctx.fresh()
      const outcome = await within(
        db.transaction(async () => {
          await db.close()
        }),
      ).then(
        () => 'resolved',
        (e) => e.code ?? e.message,
      )
      await within(db.close())
      return outcome
    },
    check: (outcome) => assert.ok(!/did not settle/.test(outcome), outcome),
  },
  {
    name: 'item 12: PRAGMA rekey through execute is refused (rekey() is the crash-safe path)',
    run: (ctx) => ctx.db.execute("PRAGMA rekey = 'x'"),
    rejects: [ResqliteError, /^ERR_/, /rekey\(\)/],
  },
  {
    name: 'item 12: PRAGMA key through execute is refused',
    run: (ctx) => ctx.db.execute("PRAGMA key = 'x'"),
    rejects: [ResqliteError, /^ERR_/],
  },
  {
    name: 'item 13: execute: a statement after a NUL character is not silently dropped',
    run: (ctx) => ctx.db.execute("INSERT INTO t VALUES ('nul', 1);\0INSERT INTO t VALUES ('nul', 2)"),
    rejects: [ResqliteError, /^ERR_/, /NUL/],
  },
  {
    name: 'item 18: COMMIT inside a body: the transaction is reported rolled back and its write is gone',
    run: async (ctx) => {
      const error = await ctx.db
        .transaction(async (tx) => {
          await tx.execute("INSERT INTO t VALUES ('commit-in-body', 1)")
          await tx.execute('COMMIT')
        })
        .catch((e) => e.code)
      return [error, await tagged(ctx.db, 'commit-in-body')]
    },
    resolves: ['ERR_TRANSACTION_ROLLED_BACK', []],
  },
  {
    name: "item 19: tx.select('COMMIT') is refused and does not commit",
    run: async (ctx) => {
      const error = await ctx.db
        .transaction(async (tx) => {
          await tx.execute("INSERT INTO t VALUES ('select-commit', 1)")
          await tx.select('COMMIT')
        })
        .catch((e) => e.code)
      return [error, await tagged(ctx.db, 'select-commit')]
    },
    resolves: ['ERR_NOT_READ_ONLY', []],
  },
  {
    name: "item 19: stream('COMMIT') reaches the subscriber as ERR_NOT_READ_ONLY",
    run: async (ctx) => Promise.reject((await firstEvent(ctx.db.stream('COMMIT'))).error),
    rejects: [ResqliteError, 'ERR_NOT_READ_ONLY'],
  },
  {
    name: 'items 18/19: executeBatch of BEGIN is refused as transaction control',
    run: (ctx) => ctx.db.executeBatch('BEGIN', [[]]),
    rejects: [ResqliteError, 'ERR_TRANSACTION_CONTROL'],
  },
  {
    name: 'items 18/19: BEGIN inside a body rolls the transaction back (cause ERR_TRANSACTION_CONTROL)',
    run: async (ctx) => {
      const error = await ctx.db.transaction(async (tx) => tx.execute('BEGIN')).catch((e) => e)
      return [error.code, error.cause?.code]
    },
    resolves: ['ERR_TRANSACTION_ROLLED_BACK', 'ERR_TRANSACTION_CONTROL'],
  },
  {
    name: 'item 3 with close(): a read issued before close(), behind an unawaited write, completes',
    run: async (ctx) => {
      const db = await ctx.fresh()
      await db.execute('CREATE TABLE t (a)')
      const write = db.execute('INSERT INTO t VALUES (1)')
      const read = db.select('SELECT count(*) AS n FROM t')
      await db.close()
      return [await write, await read]
    },
    check: ([write, read]) => {
      assert.equal(write.changes, 1)
      assert.deepStrictEqual(read, [{ n: 1 }])
    },
  },
  // The adapters' argument errors are TypeErrors without a code (src/kysely.ts, src/drizzle.ts).
  {
    name: 'adapters: ResqliteDialect() without config is a TypeError with a code',
    run: () => new ResqliteDialect(),
    throws: [...TYPE, /ResqliteDialect needs \{ database \}/],
  },
  {
    name: 'adapters: ResqliteDialect({ database: 42 }) is refused at once',
    run: () => new ResqliteDialect({ database: 42 }),
    throws: [...TYPE, /database/],
  },
  {
    name: 'adapters: a database function that resolves to a non-Database is refused by name',
    run: () =>
      new Kysely({ dialect: new ResqliteDialect({ database: async () => 42 }) }).selectNoFrom(sql`1`.as('x')).execute(),
    rejects: [...TYPE, /database/],
  },
  {
    name: 'adapters: drizzle(42) is a TypeError with a code',
    run: () => drizzle(42),
    throws: [...TYPE, /drizzle\(\) needs an open resqlite Database/],
  },
]

const RUN = [
  ...EXECUTE,
  ...BATCH,
  ...HOSTILE,
  ...TRANSACTION,
  ...BACKUP,
  ...REKEY,
  ...STREAM,
  ...STREAM_ASYNC,
  ...STREAM_MORE,
]
runCases([...RUN, ...ITEM_FIXES], {
  label: 'bad input (writes, transactions, backup, rekey, live queries)',
})
