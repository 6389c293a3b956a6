// Bad input (issue 43), the edges a sweep of 763 cases found: function names and definitions,
// a read-only PRAGMA, one name under three prefixes, parameter arrays that change while packed,
// detached buffers, lone surrogates in SQL text, a thrown value that cannot be read, and the
// process's database count after close(). Harness and case format: bad-input-harness.mjs.

import assert from 'node:assert/strict'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { drain, runCases } from './bad-input-harness.mjs'

const TYPE = [TypeError, 'ERR_INVALID_ARG_TYPE']
const VALUE = [TypeError, 'ERR_INVALID_ARG_VALUE']
const RANGE = [RangeError, 'ERR_OUT_OF_RANGE']
const NOT_READ_ONLY = [ResqliteError, 'ERR_NOT_READ_ONLY']

/** A function whose `length` reads `length`. */
function withLength(length) {
  const fn = () => 1
  Object.defineProperty(fn, 'length', { value: length })
  return fn
}

/** A Uint8Array whose ArrayBuffer was transferred away. */
function detached() {
  const bytes = new Uint8Array([1, 2, 3])
  structuredClone(bytes.buffer, { transfer: [bytes.buffer] })
  return bytes
}

/** Column b of the rows of t whose a is `marker`, in order. */
const rowsOf = async (db, marker) =>
  (await db.select('SELECT b FROM t WHERE a = ? ORDER BY rowid', [marker])).map((row) => row.b)

const FUNCTIONS = [
  {
    // SQLite folds ASCII only: the Kelvin sign (U+212A) is not `k` to it, and used to replace it.
    name: 'function: the Kelvin sign and k are two functions, as in SQLite',
    run: async ({ db }) => {
      db.function('kfold', () => 'ascii')
      db.function('\u212Afold', () => 'kelvin')
      return db.selectOne('SELECT kfold() AS k, KFOLD() AS upper, "\u212Afold"() AS kelvin')
    },
    resolves: { k: 'ascii', upper: 'ascii', kelvin: 'kelvin' },
  },
  {
    name: 'function: É and é are two functions, as in SQLite',
    run: async ({ db }) => {
      db.function('é_fold', () => 'small')
      db.function('É_fold', () => 'capital')
      return db.selectOne('SELECT é_fold() AS small, É_fold() AS capital, É_FOLD() AS ascii_folded')
    },
    resolves: { small: 'small', capital: 'capital', ascii_folded: 'capital' },
  },
  {
    name: 'function: a name holding a lone surrogate is refused',
    run: ({ db }) => db.function('f\uD800', () => 1),
    throws: [...VALUE, /name must be .* without a NUL character or a lone surrogate/],
  },
  {
    name: 'function: fn.length negative is refused (it was accepted and never registered)',
    run: ({ db }) => db.function('neg_length', withLength(-1)),
    throws: [...RANGE, /fn\.length must be a whole number of arguments/],
  },
  {
    name: 'function: fn.length a string is a TypeError naming it, not a raw N-API error',
    run: ({ db }) => db.function('string_length', withLength('x')),
    throws: [...TYPE, /fn\.length must be a number, got type string/],
  },
  {
    name: 'function: fn.length fractional is refused',
    run: ({ db }) => db.function('half_length', withLength(1.5)),
    throws: [...RANGE, /fn\.length must be a whole number/],
  },
  {
    name: 'aggregate: step.length negative is refused',
    run: ({ db }) => db.aggregate('neg_step', { step: withLength(-3) }),
    throws: [...RANGE, /step\.length must be a whole number/],
  },
  {
    name: 'aggregate: step.length a string is a TypeError naming it',
    run: ({ db }) => db.aggregate('string_step', { step: withLength('x') }),
    throws: [...TYPE, /step\.length must be a number, got type string/],
  },
  {
    name: 'function: options an array are refused',
    run: ({ db }) => db.function('array_options', () => 1, []),
    throws: [...TYPE, /db\.function: options must be an object .*Array/],
  },
  {
    name: "function: options a Map are refused (its 'deterministic' was ignored)",
    run: ({ db }) => db.function('map_options', () => 1, new Map([['deterministic', true]])),
    throws: [...TYPE, /db\.function: options must be an object .*Map/],
  },
  {
    name: 'function: options an AbortSignal are refused',
    run: ({ db }) => db.function('signal_options', () => 1, new AbortController().signal),
    throws: [...TYPE, /db\.function: options must be an object .*AbortSignal/],
  },
  {
    name: 'aggregate: a definition that is an array is refused',
    run: ({ db }) => db.aggregate('array_definition', Object.assign([], { step: (a) => a })),
    throws: [...TYPE, /db\.aggregate\(name, definition\): definition must be an object .*Array/],
  },
  {
    name: 'aggregate: a definition that is a Map is refused',
    run: ({ db }) => db.aggregate('map_definition', new Map([['step', (a) => a]])),
    throws: [...TYPE, /definition must be an object .*Map/],
  },
  {
    name: 'function: an unknown option is named, and the options it takes listed',
    run: ({ db }) => db.function('pure_option', () => 1, { pure: true }),
    throws: [...VALUE, /^db\.function: unknown option "pure": it takes deterministic, varargs and directOnly$/],
  },
  {
    name: 'aggregate: an unknown key of the definition is named, and the keys it takes listed',
    run: ({ db }) => db.aggregate('finish_key', { step: (a) => a, finish: (a) => a }),
    throws: [...VALUE, /unknown option "finish": it takes deterministic, .* step, inverse and result$/],
  },
  {
    name: 'function: a refused definition leaves nothing defined, and later ones work',
    run: async ({ db }) => {
      assert.throws(() => db.function('refused_then', withLength(-1)), RangeError)
      db.function('defined_after', (x) => x * 2)
      const after = await db.selectOne('SELECT defined_after(21) AS v')
      const refused = await db.select('SELECT refused_then()').catch((e) => e.message)
      return { after, refused }
    },
    resolves: { after: { v: 42 }, refused: 'no such function: refused_then' },
  },
  {
    name: 'function: one that throws a value whose getters throw keeps ERR_FUNCTION_THREW',
    run: ({ db }) => {
      const hostile = new Proxy(
        {},
        {
          get() {
            throw new Error('a getter threw')
          },
          getPrototypeOf() {
            throw new Error('getPrototypeOf threw')
          },
        },
      )
      db.function('throws_hostile', () => {
        throw hostile
      })
      return db.select('SELECT throws_hostile()')
    },
    rejects: [ResqliteError, 'ERR_FUNCTION_THREW', /throws_hostile\(\) threw: .*could not be described/],
  },
  {
    name: 'function: one that throws an Error whose message getter throws keeps ERR_FUNCTION_THREW',
    run: ({ db }) => {
      const error = new Error('unused')
      Object.defineProperty(error, 'message', {
        get() {
          throw new Error('message getter threw')
        },
      })
      db.function('throws_bad_message', () => {
        throw error
      })
      return db.select('SELECT throws_bad_message()')
    },
    rejects: [ResqliteError, 'ERR_FUNCTION_THREW', /throws_bad_message\(\) threw/],
  },
]

const PRAGMA = [
  {
    name: 'select: PRAGMA journal_mode only reads the mode, and is a read',
    run: ({ db }) => db.select('PRAGMA journal_mode'),
    resolves: [{ journal_mode: 'wal' }],
  },
  {
    name: 'selectOne: PRAGMA main.journal_mode is a read',
    run: ({ db }) => db.selectOne('PRAGMA main.journal_mode'),
    resolves: { journal_mode: 'wal' },
  },
  {
    name: 'iterate: PRAGMA journal_mode is a read',
    run: ({ db }) => drain(db.iterate('PRAGMA journal_mode')),
    resolves: [{ journal_mode: 'wal' }],
  },
  {
    name: 'select: PRAGMA journal_mode = DELETE is still refused',
    run: ({ db }) => db.select('PRAGMA journal_mode = DELETE'),
    rejects: [...NOT_READ_ONLY, /PRAGMA journal_mode with a value/],
  },
  {
    name: 'select: an INSERT reading pragma_journal_mode is still refused',
    run: ({ db }) => db.select('INSERT INTO t (a) SELECT journal_mode FROM pragma_journal_mode'),
    rejects: NOT_READ_ONLY,
  },
  {
    name: 'select: PRAGMA wal_checkpoint, which checkpoints, is still refused',
    run: ({ db }) => db.select('PRAGMA wal_checkpoint'),
    rejects: NOT_READ_ONLY,
  },
]

const PARAMETERS = [
  {
    name: 'params: { a } binds :a, @a and $a in one statement',
    run: ({ db }) => db.selectOne('SELECT :a AS colon, @a AS at, $a AS dollar', { a: 1 }),
    resolves: { colon: 1, at: 1, dollar: 1 },
  },
  {
    name: 'executeBatch: { a } binds :a and $a in every set',
    run: async ({ db }) => {
      await db.executeBatch('INSERT INTO t (a, b) VALUES (:a, $a || :b)', [
        { a: 'prefixes', b: 1 },
        { a: 'prefixes', b: 2 },
      ])
      return rowsOf(db, 'prefixes')
    },
    resolves: ['prefixes1', 'prefixes2'],
  },
  {
    name: 'executeBatch: a parameter set that grows while it is packed binds what it held',
    run: async ({ db }) => {
      const set = ['grows-inner', 1]
      Object.defineProperty(set, 0, {
        get() {
          set.push('pushed')
          return 'grows-inner'
        },
        enumerable: true,
      })
      const result = await db.executeBatch('INSERT INTO t (a, b) VALUES (?, ?)', [set, ['grows-inner', 2]])
      return { changes: result.changes, rows: await rowsOf(db, 'grows-inner') }
    },
    resolves: { changes: 2, rows: [1, 2] },
  },
  {
    name: 'executeBatch: parameter sets that grow while packed (a Proxy) run the sets it held',
    run: async ({ db }) => {
      const sets = [
        ['grows-outer', 1],
        ['grows-outer', 2],
      ]
      const proxy = new Proxy(sets, {
        get(target, key, receiver) {
          if (key === '0') target.push(['grows-outer', 3])
          return Reflect.get(target, key, receiver)
        },
      })
      const result = await db.executeBatch('INSERT INTO t (a, b) VALUES (?, ?)', proxy)
      return { changes: result.changes, rows: await rowsOf(db, 'grows-outer') }
    },
    resolves: { changes: 2, rows: [1, 2] },
  },
  {
    name: 'params: a detached Uint8Array is a TypeError naming the parameter',
    run: ({ db }) => db.select('SELECT ?', [detached()]),
    rejects: [...VALUE, /parameter 1 is a view of a detached \(transferred\) ArrayBuffer/],
  },
  {
    name: 'params: a detached Uint8Array by name is a TypeError naming it',
    run: ({ db }) => db.select('SELECT :blob', { blob: detached() }),
    rejects: [...VALUE, /parameter 'blob' is a view of a detached/],
  },
  {
    name: 'executeBatch: a detached Uint8Array in a set is refused, nothing written',
    run: ({ db }) =>
      db.executeBatch('INSERT INTO t (a, b) VALUES (?, ?)', [
        ['detached', 1],
        ['detached', detached()],
      ]),
    rejects: [...VALUE, /parameter 2 is a view of a detached/],
  },
  {
    name: 'executeBatch: after the refused detached set, no row of it was written',
    run: ({ db }) => rowsOf(db, 'detached'),
    resolves: [],
  },
  {
    name: 'params: an empty (not detached) Uint8Array still binds an empty blob',
    run: ({ db }) => db.selectOne('SELECT length(?) AS n, typeof(?) AS type', [new Uint8Array(0), new Uint8Array(0)]),
    resolves: { n: 0, type: 'blob' },
  },
]

const SURROGATE = /sql holds a lone surrogate/
const SQL_TEXT = [
  ['select', (db) => db.select("SELECT '\uD800' AS s")],
  ['selectOne', (db) => db.selectOne("SELECT '\uDC00'")],
  ['selectBytes', (db) => db.selectBytes("SELECT 'a\uD83D'")],
  ['iterate', (db) => drain(db.iterate("SELECT '\uD800'"))],
  ['execute', (db) => db.execute("INSERT INTO t (a) VALUES ('\uD800')")],
  ['executeBatch', (db) => db.executeBatch("INSERT INTO t (a) VALUES ('\uD800')", [[]])],
  ['prepare', (db) => db.prepare("SELECT '\uD800'")],
  ['columns', (db) => db.columns("SELECT '\uD800' AS s")],
  ['a transaction body', (db) => db.transaction((tx) => tx.execute("INSERT INTO t (a) VALUES ('\uD800')"))],
].map(([method, run]) => ({
  name: `${method}: a lone surrogate in the SQL text is refused, not replaced`,
  run: ({ db }) => run(db),
  rejects: [...VALUE, SURROGATE],
}))

const OTHER = [
  {
    name: 'sql text: nothing with a lone surrogate was written',
    run: ({ db }) => db.selectOne("SELECT count(*) AS n FROM t WHERE a = '\uFFFD'"),
    resolves: { n: 0 },
  },
  {
    name: 'sql text: a well-formed surrogate pair still runs',
    run: ({ db }) => db.selectOne("SELECT '\uD83D\uDE00' AS s"),
    resolves: { s: '\uD83D\uDE00' },
  },
  {
    name: 'processDiagnostics: a database is not counted once its close() resolved',
    run: async ({ file }) => {
      const before = Database.processDiagnostics().databases
      const counts = []
      for (let i = 0; i < 30; i++) {
        const db = await Database.open(file('counted.db'))
        await db.select('SELECT 1')
        await db.close()
        counts.push(Database.processDiagnostics().databases - before)
      }
      return counts.filter((n) => n !== 0)
    },
    resolves: [],
  },
]

runCases([...FUNCTIONS, ...PRAGMA, ...PARAMETERS, ...SQL_TEXT, ...OTHER], { label: 'bad input (edges)' })
