// Where the fn.scalar lane's longest event-loop stall comes from (experiments/065): a select
// calling a JavaScript function over the narrow table's 100,000 rows runs on the JS thread in
// slices (experiments/054). Per run, the longest gap between turns of a setImmediate loop,
// beside the longest garbage-collection pause V8 reported meanwhile (PerformanceObserver 'gc').
//
//   node bench/experiments/sliced-stall-gc.mjs <db> [runs=60]
import { copyFileSync, existsSync, rmSync } from 'node:fs'
import { PerformanceObserver } from 'node:perf_hooks'
import { generate } from '../data.mjs'

const root = process.env.ROOT ?? new URL('../..', import.meta.url).pathname
const { Database } = await import(`${root}/dist/esm/index.mjs`)
const [base, runsArg] = process.argv.slice(2)
if (!existsSync(base)) generate(base)
const file = `${base}.stall`
copyFileSync(base, file)
const runs = Number(runsArg ?? 60)
const SQL = 'SELECT scale(value) AS v FROM t'
const GC_KINDS = { 1: 'scavenge', 2: 'minor mark-sweep', 4: 'mark-compact', 8: 'incremental', 16: 'weak callbacks' }

const db = await Database.open(file)
db.function('scale', (v) => v * 2 + 1, { deterministic: true })

let gcLongest = { ms: 0, kind: '' }
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if (e.duration > gcLongest.ms) gcLongest = { ms: e.duration, kind: GC_KINDS[e.detail?.kind] ?? '?' }
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

for (let i = 0; i < 5; i++) await db.select(SQL) // warm-up
const byCause = {}
for (let i = 0; i < runs; i++) {
  await pause(3)
  gcLongest = { ms: 0, kind: 'none' }
  longestGap = 0
  turning = true
  last = performance.now()
  setImmediate(turn)
  await db.select(SQL)
  await pause(3)
  turning = false
  await pause(1) // the observer's entries arrive after the pause that held them
  // A gap that a GC pause makes up most of is that GC kind's.
  const cause = gcLongest.ms > longestGap / 2 ? gcLongest.kind : 'no GC'
  ;(byCause[cause] ??= []).push(longestGap)
}
await db.close()
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
