// SQL functions written in JavaScript (issue 31), on the narrow table t (3 columns, 100,000
// rows): a cheap scalar over every row (with the event loop's longest stall), an aggregate over
// every row, a window function over 10,000 rows, and 1,000 awaited UPDATEs by key calling a
// function. Only the libraries that define functions: better-sqlite3, node:sqlite, resqlite.
import { NARROW_ROWS } from '../data.mjs'
import { measure } from '../measure.mjs'
import { fmtN, hash, hashRows, makeCase, rowsOf } from './common.mjs'

const WINDOW_ROWS = 10_000
const UPDATES = 1_000

// The same JavaScript for every library: cheap, so the lanes show what a call costs.
const scale = (v) => v * 2 + 1
const sum = { start: 0, step: (acc, v) => acc + v }
const movingSum = { start: 0, step: (acc, v) => acc + v, inverse: (acc, v) => acc - v }

async function define(d) {
  await d.defineFunction('scale', scale, { deterministic: true })
  await d.defineAggregate('jssum', sum)
  await d.defineAggregate('jsmoving', movingSum)
}

// A lane selecting `sql` (its result `rows` long) with the functions defined.
const rowsLane =
  (id, title, sql, rows, options = {}) =>
  async (d, cfg) => {
    await define(d)
    const q = await d.prepare(sql)
    const check = hashRows(await q.all([]))
    const m = await measure(d, () => q.all([]), cfg, { ...options, expect: { ops: 1, rows }, count: rowsOf })
    return [makeCase('functions', id, title, check, m)]
  }

const scalar = rowsLane(
  'fn.scalar',
  `SELECT scale(value) over ${fmtN(NARROW_ROWS)} rows`,
  'SELECT scale(value) AS v FROM t',
  NARROW_ROWS,
  { stall: true },
)
const aggregate = rowsLane(
  'fn.aggregate',
  `SELECT jssum(value) over ${fmtN(NARROW_ROWS)} rows`,
  'SELECT jssum(value) AS s FROM t',
  1,
  { stall: true },
)
const windowed = rowsLane(
  'fn.window',
  `a window function (jsmoving … ROWS 10 PRECEDING) over ${fmtN(WINDOW_ROWS)} rows`,
  `SELECT jsmoving(value) OVER (ORDER BY id ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS s FROM t WHERE id <= ${WINDOW_ROWS}`,
  WINDOW_ROWS,
)

// UPDATE … SET name = scale(value) WHERE id = ?, awaited one at a time (a loop for sync ones).
async function update(d, cfg) {
  await define(d)
  const u = await d.prepare("UPDATE t SET name = 'n' || scale(value) WHERE id = ?")
  const ids = Array.from({ length: UPDATES }, (_, i) => [1 + ((i * 97) % NARROW_ROWS)])
  const op = d.sync
    ? () => {
        for (const p of ids) u.run(p)
      }
    : async () => {
        for (const p of ids) await u.run(p)
      }
  const m = await measure(d, op, cfg, { expect: { ops: UPDATES }, count: () => ({}) })
  const check = hash(JSON.stringify(await (await d.prepare('SELECT name FROM t WHERE id <= 500 ORDER BY id')).all([])))
  return [
    makeCase('functions', 'fn.update', `${fmtN(UPDATES)} UPDATEs by key calling a function, awaited`, check, m, {
      perSample: [UPDATES, 'updates'],
    }),
  ]
}

export const FUNCTION_LANES = {
  'fn-scalar': scalar,
  'fn-aggregate': aggregate,
  'fn-window': windowed,
  'fn-update': update,
}
const WITH_FUNCTIONS = ['resqlite', 'better-sqlite3', 'node-sqlite', 'photostructure']
export const FUNCTION_LIBRARIES = Object.fromEntries(Object.keys(FUNCTION_LANES).map((lane) => [lane, WITH_FUNCTIONS]))
