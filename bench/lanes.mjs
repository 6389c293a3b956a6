// Lane definitions, shared by every library. A driver (drivers/*.mjs) gives prepare(sql) →
// { all, get, bytes }; sync drivers return values, async drivers return promises.
import { performance, monitorEventLoopDelay } from 'node:perf_hooks'
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { rng, NARROW_ROWS } from './data.mjs'
import { summarize } from './stats.mjs'

const FULL = { warmupMs: 300, warmupIters: 3, budgetMs: 2500, minIters: 20, maxIters: 5000 }
const QUICK = { warmupMs: 20, warmupIters: 1, budgetMs: 100, minIters: 3, maxIters: 200 }

const POINT_BATCH = 2_000 // queries per point-lane sample
const IN_FLIGHT = 64
const RANGES_PER_BATCH = 100
const RANGE_ROWS = 500
const RANGE_TABLE = 50_000 // ranges are drawn from ids 1..50,000

const hash = (data) => createHash('sha1').update(data).digest('hex').slice(0, 12)
const hashRows = (rows) => hash(JSON.stringify(rows))
const now = () => performance.now()

// Runs op repeatedly; returns per-call wall and JS-thread samples (ms). Sync: JS = wall.
// Async: JS = event-loop active time (ELU) over the call. stall: also record the longest
// event-loop delay around each call (monitorEventLoopDelay, 1 ms resolution, minus that 1 ms).
async function measure(d, op, cfg, { stall = false } = {}) {
  const t = now()
  for (let i = 0; i < cfg.warmupIters || now() - t < cfg.warmupMs; i++) d.sync ? op() : await op()
  globalThis.gc?.()
  const wall = []
  const js = []
  const stalls = []
  const start = now()
  while (wall.length < cfg.maxIters && (wall.length < cfg.minIters || now() - start < cfg.budgetMs)) {
    let h
    if (stall) {
      h = monitorEventLoopDelay({ resolution: 1 })
      h.enable()
      await sleep(3)
    }
    if (d.sync) {
      const t0 = now()
      op()
      const w = now() - t0
      wall.push(w)
      js.push(w)
    } else {
      const e0 = performance.eventLoopUtilization()
      const t0 = now()
      await op()
      wall.push(now() - t0)
      js.push(performance.eventLoopUtilization(e0).active)
    }
    if (stall) {
      await sleep(3)
      h.disable()
      stalls.push(Math.max(0, h.max / 1e6 - 1))
    }
  }
  const res = { n: wall.length, wall: summarize(wall), js: summarize(js) }
  if (stall) res.stall = summarize(stalls)
  return res
}

async function select(d, cfg) {
  const q = await d.prepare('SELECT * FROM t WHERE id <= ?')
  const cases = []
  for (const n of [10, 100, 1_000, 10_000]) {
    const check = hashRows(await q.all([n]))
    cases.push({ id: `select.${n}`, title: `select → rows, ${n.toLocaleString('en')}`, check, ...(await measure(d, () => q.all([n]), cfg)) })
  }
  return cases
}

async function wide(d, cfg) {
  const q = await d.prepare('SELECT * FROM w')
  const check = hashRows(await q.all([]))
  return [{ id: 'wide.1000', title: 'wide 20 cols, 1,000 rows', check, ...(await measure(d, () => q.all([]), cfg)) }]
}

async function bytes(d, cfg) {
  const q = await d.prepare('SELECT * FROM t WHERE id <= ?')
  const check = hash(await q.bytes([10_000]))
  return [{ id: 'bytes.10000', title: 'selectBytes / JSON bytes, 10,000', check, ...(await measure(d, () => q.bytes([10_000]), cfg)) }]
}

async function point(d, cfg) {
  const q = await d.prepare('SELECT * FROM t WHERE id = ?')
  const rand = rng(7)
  const ids = Array.from({ length: 100_000 }, () => 1 + Math.floor(rand() * NARROW_ROWS))
  const first = []
  for (let i = 0; i < 100; i++) first.push(await q.get([ids[i]]))
  let k = 0
  const next = () => ids[k++ % ids.length]
  const op = d.sync
    ? () => {
        for (let i = 0; i < POINT_BATCH; i++) q.get([next()])
      }
    : async () => {
        let issued = 0
        const worker = async () => {
          while (issued < POINT_BATCH) {
            issued++
            await q.get([next()])
          }
        }
        await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
      }
  const m = await measure(d, op, cfg)
  const qps = { median: (POINT_BATCH / m.wall.median) * 1000, p90: (POINT_BATCH / m.wall.p90) * 1000 }
  return [{ id: 'point', title: `point query, ${POINT_BATCH.toLocaleString('en')} per sample (${d.sync ? 'loop' : `${IN_FLIGHT} in flight`})`, check: hashRows(first), qps, ...m }]
}

async function batch(d, cfg) {
  const q = await d.prepare('SELECT * FROM t WHERE id BETWEEN ? AND ?')
  const rand = rng(11)
  const batches = Array.from({ length: 10 }, () =>
    Array.from({ length: RANGES_PER_BATCH }, () => {
      const lo = 1 + Math.floor(rand() * (RANGE_TABLE - RANGE_ROWS + 1))
      return [lo, lo + RANGE_ROWS - 1]
    }),
  )
  const check = hashRows(await Promise.all(batches[0].map((r) => q.all(r))))
  let b = 0
  const op = d.sync
    ? () => {
        for (const r of batches[b++ % batches.length]) q.all(r)
      }
    : () => Promise.all(batches[b++ % batches.length].map((r) => q.all(r)))
  return [{ id: 'batch', title: `${RANGES_PER_BATCH} queries × ${RANGE_ROWS} rows (${d.sync ? 'loop' : 'concurrent'})`, check, ...(await measure(d, op, cfg)) }]
}

async function stall(d, cfg) {
  const q = await d.prepare('SELECT * FROM t')
  const check = hashRows(await q.all([]))
  const c = { ...cfg, minIters: Math.min(cfg.minIters, 10) }
  return [{ id: 'stall', title: `longest stall, select ${NARROW_ROWS.toLocaleString('en')} rows`, check, ...(await measure(d, () => q.all([]), c, { stall: true })) }]
}

export const LANES = { select, wide, bytes, point, batch, stall }

export function runLane(name, driver, quick) {
  return LANES[name](driver, quick ? QUICK : FULL)
}
