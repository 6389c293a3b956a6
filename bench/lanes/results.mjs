// Results a user keeps or streams (issue "Results"):
// - retained: the heap still in use, after GC, by one ~2 KB value kept from each of 20 results
//   of 5,000 rows (the rest dropped). A value that is a slice of a string made for its whole
//   result keeps that result alive.
// - iterate: 1,000,000 rows read one at a time through the library's iterator (resqlite
//   db.iterate, better-sqlite3 and node:sqlite .iterate()): wall, JS-thread time, the event
//   loop's longest stall and the RSS growth at its peak while iterating.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { fmtN, hash, makeCase } from './common.mjs'

const MB = 1024 * 1024
const KEEP_RESULTS = 20
const KEEP_ROWS = 5_000
const ITERATE_COPIES = 10 // × table t's 100,000 rows

function gc() {
  if (!globalThis.gc) throw new Error('the results lanes need --expose-gc')
  globalThis.gc()
  globalThis.gc()
}

async function retained(d, cfg) {
  const u = d.uncounted
  await u.exec('DROP TABLE IF EXISTS keep_t; CREATE TABLE keep_t (id INTEGER PRIMARY KEY, body TEXT, note TEXT)')
  const ins = await u.prepare('INSERT INTO keep_t (id, body, note) VALUES (?, ?, ?)')
  const body = (i) => `${i}-${'abcdefghij'.repeat(200)}`.slice(0, 2_000)
  await ins.runBatch(Array.from({ length: KEEP_ROWS }, (_, i) => [i + 1, body(i + 1), `n${i}`]))
  const q = await d.prepare('SELECT * FROM keep_t')
  const samples = { wall: [], js: [], kept: [] }
  const iters = Math.max(1, Math.min(cfg.minIters, 5))
  const keep = async (i) => {
    const rows = d.sync ? q.all([]) : await q.all([])
    return rows[(i * 251) % KEEP_ROWS].body
  }
  await keep(0) // warm-up
  for (let s = 0; s < iters; s++) {
    gc()
    const before = process.memoryUsage().heapUsed
    const ops0 = d.ctr.ops
    const t0 = performance.now()
    const e0 = performance.eventLoopUtilization()
    const values = []
    for (let i = 0; i < KEEP_RESULTS; i++) values.push(await keep(i))
    const wall = performance.now() - t0
    samples.js.push(d.sync ? wall : performance.eventLoopUtilization(e0).active)
    samples.wall.push(wall)
    gc()
    samples.kept.push((process.memoryUsage().heapUsed - before) / MB)
    if (d.ctr.ops - ops0 !== KEEP_RESULTS) throw new Error(`work check failed: ${d.ctr.ops - ops0} queries`)
    values.forEach((v, i) => {
      if (v !== body(((i * 251) % KEEP_ROWS) + 1)) throw new Error(`work check failed: value ${i}`)
    })
  }
  const check = hash((await keep(1)).slice(0, 40))
  return [
    makeCase(
      'memory',
      'memory.retained',
      `heap kept by ${KEEP_RESULTS} values of ~2 KB kept from ${KEEP_RESULTS} results of ${fmtN(KEEP_ROWS)} rows (MB)`,
      check,
      { n: iters, samples, checkedSamples: iters },
    ),
  ]
}

async function iterate(d, cfg) {
  const copies = Array.from({ length: ITERATE_COPIES }, (_, i) => `(${i})`).join(', ')
  const q = await d.prepare(`SELECT t.* FROM t CROSS JOIN (VALUES ${copies})`)
  const rows = ITERATE_COPIES * 100_000
  const samples = { wall: [], js: [], stall: [], rss: [] }
  const iters = Math.max(1, Math.min(cfg.minIters, 5))
  let check
  for (let s = 0; s < iters + 1; s++) {
    gc()
    const rss0 = process.memoryUsage.rss()
    let peak = rss0
    let n = 0
    let sum = 0
    const h = monitorEventLoopDelay({ resolution: 1 })
    h.enable()
    const ops0 = d.ctr.ops
    const e0 = performance.eventLoopUtilization()
    const t0 = performance.now()
    const visit = (row) => {
      sum += row.id
      if ((++n & 16_383) === 0) peak = Math.max(peak, process.memoryUsage.rss())
    }
    if (d.sync) for (const row of q.iterate([])) visit(row)
    else for await (const row of q.iterate([])) visit(row)
    const wall = performance.now() - t0
    const js = d.sync ? wall : performance.eventLoopUtilization(e0).active
    h.disable()
    if (n !== rows || d.ctr.ops - ops0 !== 1) throw new Error(`work check failed: ${n} rows, ${d.ctr.ops - ops0} ops`)
    check = String(sum)
    if (s === 0) continue // warm-up
    samples.wall.push(wall)
    samples.js.push(js)
    // A synchronous iterator holds the loop for the whole iteration: its stall is the wall time.
    samples.stall.push(d.sync ? wall : Math.max(0, h.max / 1e6 - 1))
    samples.rss.push((peak - rss0) / MB)
  }
  return [
    makeCase('iterate', 'iterate', `iterate ${fmtN(rows)} rows one at a time`, check, {
      n: iters,
      samples,
      checkedSamples: iters,
    }),
  ]
}

export const RESULTS_LANES = { retained, iterate }
// Only libraries with an iterator run `iterate`.
export const RESULTS_LIBRARIES = { iterate: ['resqlite', 'better-sqlite3', 'node-sqlite', 'photostructure'] }
