// Bad input (issue 30), part 2: the read methods (select, selectOne, selectBytes, iterate,
// columns) and parameters: wrong types, wrong counts, named against positional, and values whose
// getters, toString, valueOf or Symbol.toPrimitive call the library or throw. Harness and case
// format: bad-input-harness.mjs.

import assert from 'node:assert/strict'
import { ResqliteError } from '../dist/esm/index.mjs'
import { drain, runCases } from './bad-input-harness.mjs'

const TYPE = [TypeError, 'ERR_INVALID_ARG_TYPE']
const VALUE = [TypeError, 'ERR_INVALID_ARG_VALUE']
const COUNT = [ResqliteError, 'ERR_PARAMETER_COUNT']
const NAME = [ResqliteError, 'ERR_PARAMETER_NAME']
const thrown = new Error('thrown by user code')

/** A value whose conversions call the library: none of them may be called (values are not
 * coerced), and the value is refused by its type. */
function hostile(ctx) {
  const calls = []
  const call = (what) => {
    calls.push(what)
    ctx.db.execute('INSERT INTO t VALUES (?, ?)', ['coerced', what])
    return 1
  }
  return {
    calls,
    value: {
      toString: () => call('toString'),
      valueOf: () => call('valueOf'),
      [Symbol.toPrimitive]: () => call('toPrimitive'),
    },
  }
}

// The same checks for each read method: [method, how to call it with (sql, params, options)].
const READS = [
  ['select', (db, sql, params, options) => db.select(sql, params, options)],
  ['selectOne', (db, sql, params, options) => db.selectOne(sql, params, options)],
  ['selectBytes', (db, sql, params, options) => db.selectBytes(sql, params, options)],
  ['iterate', (db, sql, params, options) => drain(db.iterate(sql, params, options))],
]

const PER_READ = READS.flatMap(([method, call]) =>
  [
    ['sql is a number', (db) => call(db, 42), { rejects: [...TYPE, /sql must be a string, got type number/] }],
    ['sql is undefined', (db) => call(db), { rejects: [...TYPE, /sql must be a string, got type undefined/] }],
    [
      'sql is an object with toString',
      (db) => call(db, { toString: () => 'SELECT 1' }),
      { rejects: [...TYPE, /sql must be a string, got an instance of Object/] },
    ],
    ["sql is ''", (db) => call(db, ''), { rejects: [ResqliteError, 'ERR_EMPTY_STATEMENT'] }],
    [
      'sql is only a comment',
      (db) => call(db, '-- nothing\n/* here */'),
      { rejects: [ResqliteError, 'ERR_EMPTY_STATEMENT'] },
    ],
    ['two statements', (db) => call(db, 'SELECT 1; SELECT 2'), { rejects: [ResqliteError, 'ERR_MULTIPLE_STATEMENTS'] }],
    ['a write', (db) => call(db, "INSERT INTO t VALUES (1, 'x')"), { rejects: [ResqliteError, 'ERR_NOT_READ_ONLY'] }],
    [
      'a write with RETURNING',
      (db) => call(db, 'DELETE FROM items RETURNING id'),
      { rejects: [ResqliteError, 'ERR_NOT_READ_ONLY'] },
    ],
    ['BEGIN', (db) => call(db, 'BEGIN'), { rejects: [ResqliteError, 'ERR_NOT_READ_ONLY'] }],
    ['a syntax error', (db) => call(db, 'SELEC 1'), { rejects: [ResqliteError, 'SQLITE_ERROR', /syntax error/] }],
    [
      'a missing table',
      (db) => call(db, 'SELECT * FROM nope'),
      { rejects: [ResqliteError, 'SQLITE_ERROR', /no such table: nope/] },
    ],
    [
      'params a string',
      (db) => call(db, 'SELECT ?', 'x'),
      { rejects: [...TYPE, /params must be an array .* got type string/] },
    ],
    ['too few positional parameters', (db) => call(db, 'SELECT ?, ?', [1]), { rejects: COUNT }],
    ['too many positional parameters', (db) => call(db, 'SELECT ?', [1, 2]), { rejects: COUNT }],
    ['a named parameter missing', (db) => call(db, 'SELECT :a, :b', { a: 1 }), { rejects: NAME }],
    ['a key the statement lacks', (db) => call(db, 'SELECT :a', { a: 1, c: 2 }), { rejects: NAME }],
    ['an object for positional parameters', (db) => call(db, 'SELECT ?', { a: 1 }), { rejects: NAME }],
    [
      'options an array',
      (db) => call(db, 'SELECT 1', [], []),
      { rejects: [...TYPE, /options must be an object .*Array/] },
    ],
    [
      'an unknown option',
      (db) => call(db, 'SELECT 1', [], { limit: 1 }),
      { rejects: [...VALUE, /unknown option 'limit'/] },
    ],
    [
      'signal not an AbortSignal',
      (db) => call(db, 'SELECT 1', [], { signal: {} }),
      { rejects: [...TYPE, /options\.signal must be an AbortSignal/] },
    ],
    [
      'signal already aborted',
      (db) => call(db, 'SELECT 1', [], { signal: AbortSignal.abort(thrown) }),
      { rejects: [ResqliteError, 'ABORT_ERR', /aborted/] },
    ],
  ].map(([name, run, expectation]) => ({ name: `${method}: ${name}`, run: (ctx) => run(ctx.db), ...expectation })),
)

const PARAMS = [
  ['undefined', [undefined], [...TYPE, /parameter 1 is undefined; pass null for NULL/]],
  ['a boolean', [true], [...TYPE, /parameter 1 has an unsupported type \(type boolean\)/]],
  ['a Date', [new Date(0)], [...TYPE, /parameter 1 has an unsupported type \(an instance of Date\)/]],
  ['a Symbol', [Symbol('s')], [...TYPE, /parameter 1 has an unsupported type \(type symbol\)/]],
  ['a function', [() => 1], [...TYPE, /parameter 1 has an unsupported type \(a function\)/]],
  ['a plain object', [{ a: 1 }], [...TYPE, /parameter 1 has an unsupported type \(an instance of Object\)/]],
  ['an ArrayBuffer (not a view)', [new ArrayBuffer(4)], [...TYPE, /an instance of ArrayBuffer/]],
  ['NaN', [Number.NaN], [...VALUE, /parameter 1 is NaN/]],
  ['a lone surrogate', ['a\uD800b'], [...VALUE, /parameter 1 is a string with a lone surrogate/]],
  ['a bigint beyond 64 bits', [2n ** 64n], [RangeError, 'ERR_OUT_OF_RANGE', /parameter 1 is a bigint outside/]],
  // biome-ignore lint/suspicious/noSparseArray: the hole is the case
  ['a hole in the array', [, 1], [...TYPE, /parameter 1 is undefined/]],
  ['a named undefined', { a: undefined }, [...TYPE, /parameter 'a' is undefined/]],
].map(([name, params, rejects]) => ({
  name: `parameter: ${name}`,
  run: (ctx) =>
    ctx.db.select(Array.isArray(params) ? `SELECT ${params.map(() => '?').join(', ')}` : 'SELECT :a', params),
  rejects,
}))

const CORRECT = [
  ['named parameters given by position', (db) => db.select('SELECT :a AS a, :b AS b', [1, 2]), [{ a: 1, b: 2 }]],
  ['? and :a mixed, by position', (db) => db.select('SELECT ? AS x, :a AS a', [1, 2]), [{ x: 1, a: 2 }]],
  ['$a and @b by name', (db) => db.select('SELECT $a AS a, @b AS b', { a: 'x', b: 'y' }), [{ a: 'x', b: 'y' }]],
  ['?2 ?1 by number', (db) => db.select('SELECT ?2 AS a, ?1 AS b', [1, 2]), [{ a: 2, b: 1 }]],
  [
    '[] and {} for none',
    async (db) => [await db.select('SELECT 1 AS x', []), await db.select('SELECT 1 AS x', {})],
    [[{ x: 1 }], [{ x: 1 }]],
  ],
  [
    'Infinity and -0 as REAL',
    async (db) => {
      const [row] = await db.select('SELECT ? AS a, ? AS b', [Infinity, -0])
      return [row.a, Object.is(row.b, -0)]
    },
    [Infinity, true],
  ],
  [
    'a DataView binds its bytes',
    async (db) => {
      const view = new DataView(new Uint8Array([1, 2, 3, 4]).buffer, 1, 2)
      return [...(await db.selectOne('SELECT ? AS v', [view])).v]
    },
    [2, 3],
  ],
  [
    'an empty string and an empty blob',
    async (db) => {
      const row = await db.selectOne('SELECT ? AS s, ? AS b, typeof(?) AS t', [
        '',
        new Uint8Array(0),
        new Uint8Array(0),
      ])
      return [row.s, row.b.length, row.t]
    },
    ['', 0, 'blob'],
  ],
  ['selectOne with no rows', (db) => db.selectOne('SELECT 1 FROM items WHERE 0'), undefined],
  [
    'columns of a write names its RETURNING columns',
    (db) => db.columns('DELETE FROM items WHERE 0 RETURNING id'),
    [{ name: 'id', declaredType: 'INTEGER' }],
  ],
  ['columns of a write without RETURNING is []', (db) => db.columns('DELETE FROM items WHERE 0'), []],
  [
    '2 MB of SQL text',
    async (db) => (await db.selectOne(`SELECT '${'x'.repeat(2_000_000)}' AS v`)).v.length,
    2_000_000,
  ],
  [
    'a string parameter with a NUL character round-trips',
    async (db) => await db.selectOne('SELECT ? AS v, length(?) AS n', ['a\0b', 'a\0b']),
    { v: 'a\0b', n: 1 },
  ],
].map(([name, run, value]) => ({ name: `correct: ${name}`, run: (ctx) => run(ctx.db), resolves: value }))

const SPECIAL = [
  {
    name: 'correct: a bigint at the 64-bit limit, read back exactly with safeIntegers',
    run: async (ctx) => {
      const db = await ctx.fresh({ safeIntegers: true })
      return db.select('SELECT ? AS v', [2n ** 63n - 1n])
    },
    resolves: [{ v: 2n ** 63n - 1n }],
  },
  {
    name: 'a bigint at the 64-bit limit without safeIntegers is a RangeError naming the column',
    run: (ctx) => ctx.db.select('SELECT ? AS big', [2n ** 63n - 1n]),
    rejects: [RangeError, 'ERR_OUT_OF_RANGE', /column 'big'/],
  },
  {
    name: "a key given with its prefix (':a') is refused: keys are bare names",
    run: (ctx) => ctx.db.select('SELECT :a AS a', { ':a': 1 }),
    rejects: NAME,
  },
  {
    name: 'invalid UTF-8 TEXT is refused, naming the column (the default)',
    run: (ctx) => ctx.db.select("SELECT cast(X'FF' AS text) AS bad"),
    rejects: [ResqliteError, 'ERR_INVALID_UTF8', /column 'bad'/],
  },
  {
    name: 'columns: sql a number',
    run: (ctx) => ctx.db.columns(42),
    rejects: [...TYPE, /sql must be a string/],
  },
  {
    name: 'columns: two statements',
    run: (ctx) => ctx.db.columns('SELECT 1; SELECT 2'),
    rejects: [ResqliteError, 'ERR_MULTIPLE_STATEMENTS'],
  },
  {
    name: 'columns: a syntax error',
    run: (ctx) => ctx.db.columns('SELEC 1'),
    rejects: [ResqliteError, 'SQLITE_ERROR', /syntax error/],
  },
  {
    name: "selectBytes: rowMode 'array' is refused",
    run: (ctx) => ctx.db.selectBytes('SELECT 1', [], { rowMode: 'array' }),
    rejects: [...VALUE, /selectBytes takes no rowMode/],
  },
  {
    name: "select: rowMode 'arrays' (not echoed)",
    run: (ctx) => ctx.db.select('SELECT 1', [], { rowMode: 'arrays' }),
    rejects: [...VALUE, /^options\.rowMode must be 'object' or 'array'$/],
  },
  {
    name: 'iterate: pageRows 0',
    run: (ctx) => drain(ctx.db.iterate('SELECT 1', [], { pageRows: 0 })),
    rejects: [RangeError, 'ERR_OUT_OF_RANGE', /pageRows must be between 1 and 1000000$/],
  },
  {
    name: 'iterate: pageRows 1.5',
    run: (ctx) => drain(ctx.db.iterate('SELECT 1', [], { pageRows: 1.5 })),
    rejects: [...TYPE, /pageRows must be an integer/],
  },
  {
    name: 'iterate: read a second time',
    run: async (ctx) => {
      const it = ctx.db.iterate('SELECT name FROM items ORDER BY id')
      assert.equal((await drain(it)).length, 3)
      return drain(it)
    },
    rejects: [ResqliteError, 'ERR_ITERATION_STARTED'],
  },
  {
    name: 'iterate: a loop body that throws ends the iteration and rethrows',
    run: async (ctx) => {
      for await (const _ of ctx.db.iterate('SELECT name FROM items')) throw thrown
    },
    rejectsWith: thrown,
  },
  {
    name: 'iterate: the iterator is returned synchronously even for bad SQL (errors come with the first row)',
    run: async (ctx) => {
      const it = ctx.db.iterate(42)
      assert.equal(typeof it[Symbol.asyncIterator], 'function')
      return drain(it)
    },
    rejects: [...TYPE, /sql must be a string/],
  },
]

// Re-entrancy: user code that runs while the library packs a call.
const REENTRANT = [
  {
    name: 're-entrant: a named parameter getter that reads binds each call its own values',
    run: async (ctx) => {
      let inner
      const outer = await ctx.db.select('SELECT :a AS a, :b AS b', {
        get a() {
          inner = ctx.db.select('SELECT :x AS x', { x: 'inner' })
          return 'outer-a'
        },
        b: 'outer-b',
      })
      return [outer, await inner]
    },
    resolves: [[{ a: 'outer-a', b: 'outer-b' }], [{ x: 'inner' }]],
  },
  {
    name: 're-entrant: a positional getter that writes',
    run: async (ctx) => {
      let inner
      const params = ['p1', 'p2']
      Object.defineProperty(params, 1, {
        get() {
          inner = ctx.db.execute("INSERT INTO t VALUES ('reentrant', 'write')")
          return 'p2'
        },
      })
      const outer = await ctx.db.select('SELECT ? AS a, ? AS b', params)
      await inner
      return [outer, await ctx.db.select("SELECT b FROM t WHERE a = 'reentrant'")]
    },
    resolves: [[{ a: 'p1', b: 'p2' }], [{ b: 'write' }]],
  },
  {
    name: 're-entrant: a Proxy whose ownKeys trap reads',
    run: async (ctx) => {
      let inner
      const params = new Proxy(
        { a: 1 },
        {
          ownKeys(target) {
            inner ??= ctx.db.select('SELECT ? AS y', ['trap'])
            return Reflect.ownKeys(target)
          },
        },
      )
      return [await ctx.db.select('SELECT :a AS a', params), await inner]
    },
    resolves: [[{ a: 1 }], [{ y: 'trap' }]],
  },
  {
    name: 're-entrant: a getter that throws',
    run: (ctx) =>
      ctx.db.select('SELECT :a', {
        get a() {
          throw thrown
        },
      }),
    rejectsWith: thrown,
  },
  {
    name: 're-entrant: an options getter that reads',
    run: async (ctx) => {
      let inner
      const rows = await ctx.db.select('SELECT 1 AS one', [], {
        get rowMode() {
          inner = ctx.db.select('SELECT 2 AS two')
          return 'object'
        },
      })
      return [rows, await inner]
    },
    resolves: [[{ one: 1 }], [{ two: 2 }]],
  },
  {
    name: 're-entrant: a signal getter that throws',
    run: (ctx) =>
      ctx.db.select('SELECT 1', [], {
        get signal() {
          throw thrown
        },
      }),
    rejectsWith: thrown,
  },
  {
    name: 're-entrant: a value with toString/valueOf/toPrimitive that call the library is refused by type, never coerced',
    run: async (ctx) => {
      const { calls, value } = hostile(ctx)
      const error = await ctx.db.select('SELECT ?', [value]).catch((e) => e)
      return { code: error.code, calls }
    },
    resolves: { code: 'ERR_INVALID_ARG_TYPE', calls: [] },
  },
  {
    name: 're-entrant: a toPrimitive that throws as a parameter is never called',
    run: (ctx) =>
      ctx.db.select('SELECT ?', [
        {
          [Symbol.toPrimitive]() {
            throw thrown
          },
        },
      ]),
    rejects: [...TYPE, /parameter 1 has an unsupported type/],
  },
  {
    name: 're-entrant: sql with a toString that calls the library is refused, never called',
    run: async (ctx) => {
      const { calls, value } = hostile(ctx)
      const error = await ctx.db.select(value).catch((e) => e)
      return { code: error.code, calls }
    },
    resolves: { code: 'ERR_INVALID_ARG_TYPE', calls: [] },
  },
  {
    name: 're-entrant: a getter that opens a transaction',
    run: async (ctx) => {
      let inner
      const rows = await ctx.db.select('SELECT :a AS a', {
        get a() {
          inner = ctx.db.transaction(async (tx) => tx.select('SELECT 3 AS three'))
          return 'a'
        },
      })
      return [rows, await inner]
    },
    resolves: [[{ a: 'a' }], [{ three: 3 }]],
  },
  {
    name: 're-entrant: executeBatch sets whose getters call executeBatch',
    run: async (ctx) => {
      let inner
      const set = {
        get a() {
          inner ??= ctx.db.executeBatch('INSERT INTO t VALUES (?, ?)', [['batch-inner', 1]])
          return 'batch-outer'
        },
        b: 2,
      }
      const outer = await ctx.db.executeBatch('INSERT INTO t VALUES (:a, :b)', [set])
      return [outer, await inner, await ctx.db.select("SELECT a, b FROM t WHERE a LIKE 'batch-%' ORDER BY a")]
    },
    resolves: [
      { changes: 1 },
      { changes: 1 },
      [
        { a: 'batch-inner', b: 1 },
        { a: 'batch-outer', b: 2 },
      ],
    ],
  },
]

// Cases of issue 30 items fixed beside this suite (the item in the name).
const ITEM_FIXES = [
  // item 19: iterate runs BEGIN on its connection and resolves []
  ...PER_READ.filter((c) => c.name === 'iterate: BEGIN').map((c) => ({ ...c, name: `item 19: ${c.name}` })),
  ...READS.flatMap(([method, call]) =>
    ['COMMIT', 'END', 'ROLLBACK'].map((sql) => ({
      name: `item 19: ${method}: ${sql} is refused as not read-only`,
      run: (ctx) => call(ctx.db, sql),
      rejects: [ResqliteError, 'ERR_NOT_READ_ONLY'],
    })),
  ),
  {
    name: 'item 11: select: a PRAGMA that writes a setting is refused',
    run: (ctx) => ctx.db.select('PRAGMA cache_size = 5'),
    rejects: [ResqliteError, 'ERR_NOT_READ_ONLY'],
  },
  {
    name: 'item 11: select: PRAGMA trusted_schema = ON is refused',
    run: (ctx) => ctx.db.select('PRAGMA trusted_schema = ON'),
    rejects: [ResqliteError, 'ERR_NOT_READ_ONLY'],
  },
  {
    name: 'item 13: select: a statement after a NUL character is not silently dropped',
    run: (ctx) => ctx.db.select('SELECT 1 AS a;\0SELECT 2'),
    rejects: [ResqliteError, /^ERR_/, /NUL/],
  },
]

const RUN = [...PER_READ, ...PARAMS, ...CORRECT, ...SPECIAL, ...REENTRANT].filter((c) => c.name !== 'iterate: BEGIN')
runCases([...RUN, ...ITEM_FIXES], {
  label: 'bad input (reads, parameters)',
})
