// The measuring loop shared by every lane, and the counting that keeps a lane honest.
//
// A lane declares, per sample, how many operations it issues and how many rows it reads or
// writes (`expect`). Statements and transactions handed to the lane through `counting()` count
// every call; after each timed sample (outside timing) the lane's `count(result)` reports rows,
// and a sample that did a different amount of work fails the lane. So a driver that returns
// early, drops rows or skips a statement cannot produce a number.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'

export const CONFIGS = {
  full: { name: 'full', warmupMs: 300, warmupIters: 3, budgetMs: 2500, minIters: 20, maxIters: 5000 },
  quick: { name: 'quick', warmupMs: 20, warmupIters: 1, budgetMs: 100, minIters: 3, maxIters: 200 },
  // Smoke (CI): every lane once, to prove it runs and does the work it declares.
  smoke: { name: 'smoke', warmupMs: 0, warmupIters: 1, budgetMs: 0, minIters: 1, maxIters: 1 },
  // Instruction counting (npm run ab -- --callgrind): a fixed amount of work, no time budget.
  callgrind: { name: 'callgrind', warmupMs: 0, warmupIters: 2, budgetMs: 0, minIters: 10, maxIters: 10 },
  // The same with 1 measured sample (npm run ab -- --callgrind --marginal): the difference is 9
  // samples' instructions, without what a run costs whatever it measures (start-up, data, JIT).
  'callgrind-base': { name: 'callgrind-base', warmupMs: 0, warmupIters: 2, budgetMs: 0, minIters: 1, maxIters: 1 },
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
    iterate: (p) => (ctr.ops++, s.iterate(p)),
    run: (p) => (ctr.ops++, s.run(p)),
    runBatch: (sets) => {
      ctr.ops += sets.length
      return s.runBatch(sets)
    },
  })
  // The lane's tx: a copy of the driver's tx (a plain object: its own properties are what the
  // driver needs to nest) with run/get counted and given the driver's own statement. A copy,
  // not Object.create(tx): a driver that makes a tx object per level would otherwise pay V8's
  // cost of turning each one into a prototype, about 2 µs a level.
  const wrapTx = (tx) => ({
    ...tx,
    run: (s, p) => (ctr.ops++, tx.run(s.inner, p)),
    get: (s, p) => (ctr.ops++, tx.get(s.inner, p)),
  })
  // Live queries (lanes/live-queries.mjs): writes count as operations, subscriptions as watches.
  ctr.watches ??= 0
  const live = d.live && {
    watch: (sql, params, tables, onRows) => (ctr.watches++, d.live.watch(sql, params, tables, onRows)),
    write: (sql, params) => (ctr.ops++, d.live.write(sql, params)),
    counters: () => d.live.counters(),
  }
  return {
    ...d,
    ctr,
    uncounted: d,
    prepare: async (sql, options) => wrapStmt(await d.prepare(sql, options)),
    transaction: (body) => d.transaction((tx) => body(wrapTx(tx))),
    ...(live ? { live } : {}),
  }
}

export function checkCounts(expect, got, when) {
  for (const [k, v] of Object.entries(expect)) {
    if (got[k] !== v)
      throw new Error(`work check failed ${when}: ${k} = ${got[k]}, expected ${v} (${JSON.stringify(got)})`)
  }
}

// One timed call: wall and JS-thread time (sync: JS = wall), the operations it counted.
// gaps: the op's own synchronous work between its calls (lanes/interleaved.mjs), which it
// times into gaps.ms; taken out of both clocks (synchronous, so its wall time is JS time).
async function timedCall(d, op, gaps) {
  const ops0 = d.ctr.ops
  if (gaps) gaps.ms = 0
  const skip = () => gaps?.ms ?? 0
  if (d.sync) {
    const t0 = now()
    const result = op()
    const w = now() - t0 - skip()
    return { result, ops: d.ctr.ops - ops0, w, j: w }
  }
  const e0 = performance.eventLoopUtilization()
  const t0 = now()
  const result = await op()
  const w = now() - t0
  return { result, ops: d.ctr.ops - ops0, w: w - skip(), j: performance.eventLoopUtilization(e0).active - skip() }
}

// Runs op repeatedly; returns raw per-call wall and JS-thread samples (ms). Sync: JS = wall.
// Async: JS = event-loop active time (ELU) over the call: what the JS thread did meanwhile.
// Options:
//   expect {ops, rows, …} per sample; count(result) → {rows, …} (may be async, runs untimed)
//   reset()  before every call (warm-up too), untimed
//   stall    also record the longest event-loop delay around each call (1 ms resolution,
//            minus that 1 ms)
//   gaps     { ms }: the op times its own work between calls into gaps.ms, left out of the
//            sample (lanes/interleaved.mjs)
export async function measure(d, op, cfg, { expect, count, reset, stall = false, gaps } = {}) {
  if (!expect || !count || !d.ctr)
    throw new Error('measure: a lane must declare expect and count, on a counting() driver')
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
    const { result, ops, w, j } = await timedCall(d, op, gaps)
    wall.push(w)
    js.push(j)
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

// Variants of one operation measured in alternation in one process — a, b, a, b, … — so every
// variant sees the same machine noise (the encryption lane: plaintext vs encrypted). `variants`
// is { name: { op, expect, count, reset? } }, each with the rules of measure(); d is the
// counting driver whose counter every variant's statements count into. Each variant gets the
// budget one measure() call would get. Returns { name: measurement } like measure().
export async function measureAlternating(d, variants, cfg) {
  const names = Object.keys(variants)
  for (const k of names)
    if (!variants[k].expect || !variants[k].count)
      throw new Error(`measureAlternating: variant ${k} must declare expect and count`)
  const t = now()
  for (let i = 0; i < cfg.warmupIters || now() - t < cfg.warmupMs * names.length; i++) {
    for (const k of names) {
      await variants[k].reset?.()
      await timedCall(d, variants[k].op)
    }
  }
  globalThis.gc?.()
  const out = Object.fromEntries(
    names.map((k) => [k, { n: 0, samples: { wall: [], js: [] }, expect: variants[k].expect, checkedSamples: 0 }]),
  )
  const start = now()
  const n = () => out[names[0]].n
  while (n() < cfg.maxIters && (n() < cfg.minIters || now() - start < cfg.budgetMs * names.length)) {
    for (const k of names) {
      const v = variants[k]
      await v.reset?.()
      const { result, ops, w, j } = await timedCall(d, v.op)
      const m = out[k]
      m.samples.wall.push(w)
      m.samples.js.push(j)
      m.n++
      checkCounts(v.expect, { ops, ...(await v.count(result)) }, `in sample ${m.n} of ${k}`)
      m.checkedSamples++
    }
  }
  return out
}
