// Where the fn.scalar lane's longest event-loop stall comes from (experiments/065): a select
// calling a JavaScript function over the narrow table's 100,000 rows runs on the JS thread in
// slices (experiments/054). Per run, the longest gap between turns of a setImmediate loop,
// beside the longest garbage-collection pause V8 reported meanwhile (PerformanceObserver 'gc').
//
//   node bench/experiments/sliced-stall-gc.mjs <db> [runs=60] [--better-sqlite3]
//
// --better-sqlite3 runs the same select with better-sqlite3 instead (one synchronous call: its
// stall is the call). Both print the collections of each kind over the runs.
import { copyFileSync, existsSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { PerformanceObserver } from 'node:perf_hooks'
import { generate } from '../data.mjs'

const root = process.env.ROOT ?? new URL('../..', import.meta.url).pathname
const { Database } = await import(`${root}/dist/esm/index.mjs`)
const args = process.argv.slice(2)
const against = args.includes('--better-sqlite3')
const [base, runsArg] = args.filter((a) => !a.startsWith('--'))
if (!existsSync(base)) generate(base)
const file = `${base}.stall`
copyFileSync(base, file)
const runs = Number(runsArg ?? 60)
const SQL = 'SELECT scale(value) AS v FROM t'
const GC_KINDS = { 1: 'scavenge', 2: 'minor mark-sweep', 4: 'mark-compact', 8: 'incremental', 16: 'weak callbacks' }

const scale = (v) => v * 2 + 1
let select
let close
if (against) {
  const Better = createRequire(import.meta.url)('better-sqlite3')
  const db = new Better(file)
  db.function('scale', { deterministic: true }, scale)
  const statement = db.prepare(SQL)
  select = async () => statement.all()
  close = async () => db.close()
} else {
  const db = await Database.open(file)
  db.function('scale', scale, { deterministic: true })
  select = () => db.select(SQL)
  close = () => db.close()
}

let gcLongest = { ms: 0, kind: '' }
let counting = false
const gcCounts = {}
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = GC_KINDS[e.detail?.kind] ?? '?'
    if (counting) gcCounts[kind] = (gcCounts[kind] ?? 0) + 1
    if (e.duration > gcLongest.ms) gcLongest = { ms: e.duration, kind }
  }
}).observe({ entryTypes: ['gc'] })

let turning = false
let last = 0
let longestGap = 0
const turn = () => {
  const t = performance.now()
  longestGap = Math.max(longestGap, t - last)
  last = t
  if (turning) setImmediate(turn)
}
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

for (let i = 0; i < 5; i++) await select() // warm-up
counting = true
const byCause = {}
for (let i = 0; i < runs; i++) {
  await pause(3)
  gcLongest = { ms: 0, kind: 'none' }
  longestGap = 0
  turning = true
  last = performance.now()
  setImmediate(turn)
  await select()
  await pause(3)
  turning = false
  await pause(1) // the observer's entries arrive after the pause that held them
  // A gap that a GC pause makes up most of is that GC kind's.
  const cause = gcLongest.ms > longestGap / 2 ? gcLongest.kind : 'no GC'
  byCause[cause] ??= []
  byCause[cause].push(longestGap)
}
await close()
for (const end of ['', '-wal', '-shm']) rmSync(file + end, { force: true })

const q = (a, p) => a[Math.min(a.length - 1, Math.floor(a.length * p))]
for (const [cause, gaps] of Object.entries(byCause)) {
  gaps.sort((a, b) => a - b)
  console.log(
    `${cause}: ${gaps.length} runs, longest gap median ${q(gaps, 0.5).toFixed(2)} ms, max ${gaps.at(-1).toFixed(2)} ms`,
  )
}
const all = Object.values(byCause)
  .flat()
  .sort((a, b) => a - b)
console.log(`all runs: p90 of the longest gap ${q(all, 0.9).toFixed(2)} ms`)
console.log(`collections over ${runs} runs: ${JSON.stringify(gcCounts)}`)
