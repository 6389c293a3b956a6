// Run by functions-differential.test.mjs with the benchmark's Node 24, which has better-sqlite3
// built for it: the same SQL functions and aggregates, the same random data and the same
// statements on better-sqlite3 and on resqlite. Prints { cases, mismatches } as JSON.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { Database } from '../dist/esm/index.mjs'
import { prng, randomValue } from './helpers.mjs'

const Better = createRequire(new URL('../bench/package.json', import.meta.url))('better-sqlite3')

// The functions, defined alike on both. Each returns what both libraries store the same way
// (a number is REAL in better-sqlite3 and INTEGER in resqlite when integral, as parameters
// bind): the statements compare JS values, and do no arithmetic on returned numbers in SQL.
const kindOf = (v) => (v === null ? 'null' : Buffer.isBuffer(v) ? 'blob' : typeof v)
const FUNCTIONS = {
  ident: [(v) => v, { deterministic: true }],
  kind: [kindOf, { deterministic: true }],
  size: [
    (v) => (v === null ? null : typeof v === 'string' ? v.length : Buffer.isBuffer(v) ? v.length : 8),
    { deterministic: true },
  ],
  mix: [(...a) => a.map(kindOf).join(','), { varargs: true }],
  picky: [
    (v) => {
      if (typeof v === 'string' && v.includes('é')) throw new Error(`refused ${v.length}`)
      return 1
    },
    {},
  ],
}
const AGGREGATES = {
  kinds: { start: () => [], step: (a, v) => void a.push(kindOf(v)), result: (a) => a.join(';') },
  nonnull: { start: 0, step: (n, v) => n + (v === null ? 0 : 1), inverse: (n, v) => n - (v === null ? 0 : 1) },
  strict: {
    start: 0,
    step: (n, v) => {
      if (Buffer.isBuffer(v) && v.length > 15) throw new Error('blob too long')
      return n + 1
    },
  },
}

const QUERIES = [
  'SELECT id, ident(v) AS a, kind(v) AS k, size(v) AS s FROM t ORDER BY id',
  "SELECT id FROM t WHERE kind(v) = 'string' ORDER BY size(v), id",
  'SELECT kind(v) AS k, count(*) AS n, kinds(v) AS ks FROM t GROUP BY kind(v) ORDER BY k',
  'SELECT id, nonnull(v) OVER (ORDER BY id ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS w FROM t ORDER BY id',
  'SELECT mix(v, id, NULL, ident(v)) AS m FROM t ORDER BY id',
  'SELECT picky(v) AS p FROM t ORDER BY id',
  'SELECT strict(v) AS n FROM t',
  'SELECT id FROM t ORDER BY kind(v) DESC, id LIMIT 20',
]
// Writes, on each library's own copy: a trigger and a CHECK constraint calling functions.
const SCHEMA = [
  'CREATE TABLE log (id, k)',
  'CREATE TRIGGER tr AFTER UPDATE ON t BEGIN INSERT INTO log VALUES (new.id, kind(new.v)); END',
  'CREATE TABLE c (v CHECK (size(v) IS NULL OR size(v) < 12))',
]

/** `o` with every bigint a number can hold exactly made a number. */
function asNumbers(o) {
  if (typeof o === 'bigint') return o >= -(2n ** 53n) && o <= 2n ** 53n ? Number(o) : o
  if (Array.isArray(o)) return o.map(asNumbers)
  if (o !== null && typeof o === 'object' && !Buffer.isBuffer(o)) {
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, asNumbers(v)]))
  }
  return o
}

function outcomeOf(run) {
  try {
    return { rows: run() }
  } catch (e) {
    // better-sqlite3 throws what the function threw; resqlite a ResqliteError with it as cause.
    const thrown = e?.code === 'ERR_FUNCTION_THREW' ? e.cause : e
    return { error: thrown?.code?.startsWith?.('SQLITE_') ? thrown.code : (thrown?.message ?? String(thrown)) }
  }
}
async function outcomeOfAsync(run) {
  try {
    return { rows: await run() }
  } catch (e) {
    const thrown = e?.code === 'ERR_FUNCTION_THREW' ? e.cause : e
    return { error: thrown?.code?.startsWith?.('SQLITE_') ? thrown.code : (thrown?.message ?? String(thrown)) }
  }
}

const dir = mkdtempSync(join(tmpdir(), 'resqlite-functions-'))
const mismatches = []
let cases = 0
try {
  for (const safeIntegers of [false, true]) {
    for (let seed = 1; seed <= 3; seed++) {
      const rand = prng(seed * 7919 + (safeIntegers ? 1 : 0))
      const base = join(dir, `base-${safeIntegers}-${seed}.db`)
      const setup = new Better(base)
      setup.defaultSafeIntegers(true)
      setup.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
      const insert = setup.prepare('INSERT INTO t (v) VALUES (?)')
      for (let i = 0; i < 120; i++) {
        const v = randomValue(rand, safeIntegers)
        insert.run(typeof v === 'number' && Number.isSafeInteger(v) && !Object.is(v, -0) ? BigInt(v) : v)
      }
      for (const [name, [fn, options]] of Object.entries(FUNCTIONS)) setup.function(name, options, fn)
      for (const sql of SCHEMA) setup.exec(sql)
      setup.close()
      const [bFile, rFile] = ['b', 'r'].map((who) => {
        const file = join(dir, `${who}-${safeIntegers}-${seed}.db`)
        copyFileSync(base, file)
        return file
      })

      const b = new Better(bFile)
      b.defaultSafeIntegers(safeIntegers)
      const r = await Database.open(rFile, { safeIntegers })
      for (const [name, [fn, options]] of Object.entries(FUNCTIONS)) {
        b.function(name, options, fn)
        r.function(name, fn, options)
      }
      for (const [name, def] of Object.entries(AGGREGATES)) {
        b.aggregate(name, def)
        r.aggregate(name, def)
      }
      // A function's integral number is stored as INTEGER here, as a parameter binds, and as
      // REAL by better-sqlite3: read back with safeIntegers, it is a bigint here and a number
      // there (docs/api.md "Functions"). Compared as numbers; every other difference counts.
      const same = safeIntegers ? asNumbers : (o) => o
      const compare = (what, expected, actual) => {
        cases++
        if (!isDeepStrictEqual(same(expected), same(actual)))
          mismatches.push({ safeIntegers, seed, what, expected, actual })
      }
      for (const sql of QUERIES) {
        compare(
          sql,
          outcomeOf(() => b.prepare(sql).all()),
          await outcomeOfAsync(() => r.select(sql)),
        )
      }
      // Writes: the trigger logs kind(new.v) for each updated row; the CHECK refuses long values.
      const update = 'UPDATE t SET v = ident(v) WHERE id % 3 = 0'
      compare(
        update,
        outcomeOf(() => b.prepare(update).run().changes),
        await outcomeOfAsync(async () => (await r.execute(update)).changes),
      )
      const log = 'SELECT id, k FROM log ORDER BY id'
      compare(
        log,
        outcomeOf(() => b.prepare(log).all()),
        await outcomeOfAsync(() => r.select(log)),
      )
      const ids = (await r.select('SELECT id FROM t ORDER BY id')).map((row) => row.id)
      for (const id of ids.slice(0, 40)) {
        const check = 'INSERT INTO c SELECT v FROM t WHERE id = ?'
        compare(
          `${check} [${id}]`,
          outcomeOf(() => b.prepare(check).run(id).changes),
          await outcomeOfAsync(async () => (await r.execute(check, [id])).changes),
        )
      }
      const kept = 'SELECT kind(v) AS k, size(v) AS s FROM c ORDER BY rowid'
      compare(
        kept,
        outcomeOf(() => b.prepare(kept).all()),
        await outcomeOfAsync(() => r.select(kept)),
      )
      b.close()
      await r.close()
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
process.stdout.write(
  JSON.stringify({ cases, mismatches }, (_, v) =>
    typeof v === 'bigint' ? `${v}n` : Buffer.isBuffer(v) ? `0x${v.toString('hex')}` : v,
  ),
)
