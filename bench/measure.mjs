// The measuring loop shared by every lane, and the counting that keeps a lane honest.
//
// A lane declares, per sample, how many operations it issues and how many rows it reads or
// writes (`expect`). Statements and transactions handed to the lane through `counting()` count
// every call; after each timed sample (outside timing) the lane's `count(result)` reports rows,
// and a sample that did a different amount of work fails the lane. So a driver that returns
// early, drops rows or skips a statement cannot produce a number.
import { performance, monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'

export const CONFIGS = {
  full: { name: 'full', warmupMs: 300, warmupIters: 3, budgetMs: 2500, minIters: 20, maxIters: 5000 },
  quick: { name: 'quick', warmupMs: 20, warmupIters: 1, budgetMs: 100, minIters: 3, maxIters: 200 },
  // Smoke (CI): every lane once, to prove it runs and does the work it declares.
  smoke: { name: 'smoke', warmupMs: 0, warmupIters: 1, budgetMs: 0, minIters: 1, maxIters: 1 },
  // Instruction counting (npm run ab -- --callgrind): a fixed amount of work, no time budget.
  callgrind: { name: 'callgrind', warmupMs: 0, warmupIters: 2, budgetMs: 0, minIters: 10, maxIters: 10 },
}

const now = () => performance.now()

// A view of driver d whose statements and transactions count their calls into ctr.ops.
// Counting is one increment per call, the same for every library.
export function counting(d, ctr) {
  const wrapStmt = (s) => ({
    inner: s,
    sql: s.sql,
    all: (p) => (ctr.ops++, s.all(p)),
    get: (p) => (ctr.ops++, s.get(p)),
    bytes: (p) => (ctr.ops++, s.bytes(p)),
    run: (p) => (ctr.ops++, s.run(p)),
    runBatch: (sets) => ((ctr.ops += sets.length), s.runBatch(sets)),
  })
  // The lane's tx: the driver's tx (prototype: keeps what the driver needs to nest) with
  // run/get counted and given the driver's own statement.
  const wrapTx = (tx) => {
    const c = Object.create(tx)
    c.run = (s, p) => (ctr.ops++, tx.run(s.inner, p))
    c.get = (s, p) => (ctr.ops++, tx.get(s.inner, p))
    return c
  }
  return {
    ...d,
    ctr,
    uncounted: d,
    prepare: async (sql) => wrapStmt(await d.prepare(sql)),
    transaction: (body) => d.transaction((tx) => body(wrapTx(tx))),
  }
}

function checkCounts(expect, got, when) {
  for (const [k, v] of Object.entries(expect)) {
    if (got[k] !== v) throw new Error(`work check failed ${when}: ${k} = ${got[k]}, expected ${v} (${JSON.stringify(got)})`)
  }
}

// Runs op repeatedly; returns raw per-call wall and JS-thread samples (ms). Sync: JS = wall.
// Async: JS = event-loop active time (ELU) over the call: what the JS thread did meanwhile.
// Options:
//   expect {ops, rows, …} per sample; count(result) → {rows, …} (may be async, runs untimed)
//   reset()  before every call (warm-up too), untimed
//   stall    also record the longest event-loop delay around each call (1 ms resolution,
//            minus that 1 ms)
export async function measure(d, op, cfg, { expect, count, reset, stall = false } = {}) {
  if (!expect || !count || !d.ctr) throw new Error('measure: a lane must declare expect and count, on a counting() driver')
  const t = now()
  for (let i = 0; i < cfg.warmupIters || now() - t < cfg.warmupMs; i++) {
    if (reset) await reset()
    d.sync ? op() : await op()
  }
  globalThis.gc?.()
  const wall = []
  const js = []
  const stalls = []
  const start = now()
  let checked = 0
  while (wall.length < cfg.maxIters && (wall.length < cfg.minIters || now() - start < cfg.budgetMs)) {
    if (reset) await reset()
    let h
    if (stall) {
      h = monitorEventLoopDelay({ resolution: 1 })
      h.enable()
      await sleep(3)
    }
    const ops0 = d.ctr.ops
    let result
    if (d.sync) {
      const t0 = now()
      result = op()
      const w = now() - t0
      wall.push(w)
      js.push(w)
    } else {
      const e0 = performance.eventLoopUtilization()
      const t0 = now()
      result = await op()
      wall.push(now() - t0)
      js.push(performance.eventLoopUtilization(e0).active)
    }
    const ops = d.ctr.ops - ops0
    if (stall) {
      await sleep(3)
      h.disable()
      stalls.push(Math.max(0, h.max / 1e6 - 1))
    }
    checkCounts(expect, { ops, ...(await count(result)) }, `in sample ${wall.length}`)
    checked++
  }
  const res = { n: wall.length, samples: { wall, js }, expect, checkedSamples: checked }
  if (stall) res.samples.stall = stalls
  return res
}
