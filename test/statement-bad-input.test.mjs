// Bad input to db.prepare and to a Statement's methods: a typed error naming what is wrong, as
// a rejected promise (never a synchronous throw), with the caller's frames in its stack.
// Harness and case format: bad-input-harness.mjs.
import assert from 'node:assert/strict'
import test from 'node:test'
import { ResqliteError } from '../dist/esm/index.mjs'
import { runCases } from './bad-input-harness.mjs'
import { openDb } from './helpers.mjs'

const TYPE = [TypeError, 'ERR_INVALID_ARG_TYPE']
const VALUE = [TypeError, 'ERR_INVALID_ARG_VALUE']
const CLOSED = [ResqliteError, 'ERR_DATABASE_CLOSED', /the database is closed/]

/** Runs `call` on a statement of `sql` prepared on the shared database. */
const on =
  (sql, call) =>
  async ({ db }) =>
    call(await db.prepare(sql))
const POINT = 'SELECT * FROM items WHERE id = ?'
const NAMED = 'SELECT * FROM items WHERE id = :id'
const INSERT = 'INSERT INTO t (a, b) VALUES (?, ?)'

const CASES = [
  [
    'prepare: sql a number',
    ({ db }) => db.prepare(42),
    { rejects: [...TYPE, /sql must be a string, got type number/] },
  ],
  [
    'prepare: sql missing',
    ({ db }) => db.prepare(),
    { rejects: [...TYPE, /sql must be a string, got type undefined/] },
  ],
  [
    'prepare: an option',
    ({ db }) => db.prepare(POINT, { signal: undefined }),
    { rejects: [...VALUE, /unknown option 'signal': prepare takes no options/] },
  ],
  ['prepare: options an array', ({ db }) => db.prepare(POINT, []), { rejects: [...TYPE, /options must be an object/] }],
  ['prepare: no options ({})', async ({ db }) => (await db.prepare(POINT, {})).sql, { resolves: POINT }],
  [
    'SQL given again as the first argument',
    on(POINT, (s) => s.selectOne(POINT, [1])),
    { rejects: [...TYPE, /params must be an array \(positional\) or a plain object \(named\), got type string/] },
  ],
  [
    'too many positional parameters',
    on(POINT, (s) => s.selectOne([1, 2])),
    { rejects: [ResqliteError, 'ERR_PARAMETER_COUNT'] },
  ],
  ['no parameters given', on(POINT, (s) => s.select()), { rejects: [ResqliteError, 'ERR_PARAMETER_COUNT'] }],
  [
    'a named parameter missing',
    on(NAMED, (s) => s.selectOne({ ID: 1 })),
    { rejects: [ResqliteError, 'ERR_PARAMETER_NAME'] },
  ],
  [
    'a boolean parameter',
    on(POINT, (s) => s.selectOne([true])),
    { rejects: [...TYPE, /parameter 1 has an unsupported type \(type boolean\)/] },
  ],
  [
    'an undefined parameter',
    on(INSERT, (s) => s.execute([1, undefined])),
    { rejects: [...TYPE, /parameter 2 is undefined; pass null for NULL/] },
  ],
  [
    'select: options not an object',
    on(POINT, (s) => s.select([1], 'array')),
    { rejects: [...TYPE, /options must be an object/] },
  ],
  [
    'select: an unknown option',
    on(POINT, (s) => s.select([1], { rowmode: 'array' })),
    { rejects: [...VALUE, /unknown option 'rowmode'/] },
  ],
  [
    'select: a bad rowMode',
    on(POINT, (s) => s.select([1], { rowMode: 'arrays' })),
    { rejects: [...VALUE, /rowMode must be 'object' or 'array'/] },
  ],
  [
    'selectBytes: rowMode',
    on(POINT, (s) => s.selectBytes([1], { rowMode: 'array' })),
    { rejects: [...VALUE, /selectBytes takes no rowMode/] },
  ],
  [
    'execute: a signal',
    on(INSERT, (s) => s.execute([1, 2], { signal: new AbortController().signal })),
    { rejects: [...VALUE, /execute takes no signal/] },
  ],
  [
    'executeBatch: parameter sets not an array',
    on(INSERT, (s) => s.executeBatch([1, 2][0])),
    { rejects: [...TYPE, /paramSets must be an array/] },
  ],
  [
    'executeBatch: a bad set',
    on(INSERT, (s) =>
      s.executeBatch([
        [1, 2],
        [1, Symbol('x')],
      ]),
    ),
    { rejects: [...TYPE, /parameter 2 has an unsupported type \(type symbol\)/] },
  ],
  [
    'executeBatch: a signal',
    on(INSERT, (s) => s.executeBatch([[1, 2]], { signal: new AbortController().signal })),
    { rejects: [...VALUE, /executeBatch takes no signal/] },
  ],
  [
    'select on a statement that writes',
    on(INSERT, (s) => s.select([1, 2])),
    { rejects: [ResqliteError, 'ERR_NOT_READ_ONLY'] },
  ],
  [
    'iterate: a bad pageRows (first step)',
    on(POINT, async (s) => {
      for await (const _ of s.iterate([1], { pageRows: 0 })) return 'ran'
    }),
    { rejects: [RangeError, 'ERR_OUT_OF_RANGE', /pageRows/] },
  ],
  [
    'a statement of a closed database',
    async (ctx) => {
      const other = await ctx.fresh()
      await other.execute('CREATE TABLE t (a)')
      const s = await other.prepare('SELECT a FROM t')
      await other.close()
      return s.select()
    },
    { rejects: CLOSED },
  ],
]

runCases(
  CASES.map(([name, run, expectation]) => ({ name, run, ...expectation })),
  { label: 'statement' },
)

/** The rejection of `call()`, awaited from a function whose name the stack must show. */
async function rejectionOf(call) {
  async function applicationFrame() {
    await call()
  }
  try {
    await applicationFrame()
  } catch (error) {
    return error
  }
  assert.fail('expected a rejection')
}

for (const [label, options] of [
  ['on the JS thread', undefined],
  ['on the threads', { inlineBudget: 0 }],
]) {
  test(`a statement's errors name the caller's frames (${label})`, async (t) => {
    const db = await openDb(t, options)
    await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v NOT NULL)')
    const point = await db.prepare('SELECT * FROM t WHERE id = ?')
    const insert = await db.prepare('INSERT INTO t VALUES (?, ?)')
    await insert.execute([1, 1])
    const cases = [
      [() => point.selectOne([1, 2]), 'ERR_PARAMETER_COUNT'],
      [() => point.selectOne([{}]), 'ERR_INVALID_ARG_TYPE'],
      [() => insert.execute([1, 2]), 'SQLITE_CONSTRAINT_PRIMARYKEY'],
      [() => insert.executeBatch([[2, null]]), 'SQLITE_CONSTRAINT_NOTNULL'],
      [() => db.prepare('SELECT * FROM missing'), 'SQLITE_ERROR'],
      [() => db.transaction(async () => insert.execute([1, 3])), 'SQLITE_CONSTRAINT_PRIMARYKEY'],
    ]
    for (const [call, code] of cases) {
      const error = await rejectionOf(call)
      assert.equal(error.code, code, error.message)
      assert.match(error.stack, /applicationFrame/, `the stack does not name the caller:\n${error.stack}`)
    }
    await db.close()
    const closed = await rejectionOf(() => point.selectOne([1]))
    assert.equal(closed.code, 'ERR_DATABASE_CLOSED')
    assert.match(closed.stack, /applicationFrame/, closed.stack)
  })
}
