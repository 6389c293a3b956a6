// Read lanes: rows and JSON bytes at several sizes and shapes, concurrency, point queries,
// parameterized batches, reads inside a transaction, and the event loop's longest stall.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { setImmediate as immediate, setTimeout as sleep } from 'node:timers/promises'
import { NARROW_ROWS, rng, SHAPE_ROWS, WIDE_ROWS } from '../data.mjs'
import { checkCounts, measure } from '../measure.mjs'
import { fmtN, hash, hashRows, makeCase, rowsOf, rowsOfMany } from './common.mjs'

const POINT_BATCH = 2_000 // queries per point-lane sample
const IN_FLIGHT = 64 // point lane, async libraries
export const POINT_AWAITED = 200 // point-awaited: queries per sample, one at a time
const RANGES_PER_BATCH = 100
const RANGE_ROWS = 500
const RANGE_TABLE = 50_000 // ranges are drawn from ids 1..50,000
const CONCURRENT_ROWS = 1_000 // rows per query in the concurrent lane
const TX_READS = 100 // point reads inside one transaction

// SELECT * FROM t WHERE id <= n → n rows, for each n; one case per size.
async function selectSizes(d, cfg, group, idPrefix, sizes) {
  const q = await d.prepare('SELECT * FROM t WHERE id <= ?')
  const cases = []
  for (const n of sizes) {
    const check = hashRows(await q.all([n]))
    const m = await measure(d, () => q.all([n]), cfg, { expect: { ops: 1, rows: n }, count: rowsOf })
    cases.push(makeCase(group, `${idPrefix}.${n}`, `select → rows, ${fmtN(n)}`, check, m))
  }
  return cases
}

const select = (d, cfg) => selectSizes(d, cfg, 'select', 'select', [10, 100, 1_000, 10_000])
const scaling = (d, cfg) => selectSizes(d, cfg, 'scaling', 'scale', [500, 5_000, 20_000])

// selectBytes (resqlite: JSON built natively) vs rows + JSON.stringify + Buffer.from (peers).
// Rows are counted in the bytes by their opening `{"id":` (outside timing).
const countJsonRows = (buf) => {
  let n = 0
  for (let i = buf.indexOf('{"id":'); i >= 0; i = buf.indexOf('{"id":', i + 6)) n++
  return { rows: n, array: buf[0] === 0x5b && buf[buf.length - 1] === 0x5d }
}
async function bytes(d, cfg) {
  const q = await d.prepare('SELECT * FROM t WHERE id <= ?')
  const n = 10_000
  const check = hash(await q.bytes([n]))
  const m = await measure(d, () => q.bytes([n]), cfg, {
    expect: { ops: 1, rows: n, array: true },
    count: countJsonRows,
  })
  return [makeCase('bytes', 'bytes.10000', 'selectBytes / rows + JSON.stringify, 10,000', check, m)]
}

// Schema shapes: the same 1,000 rows' worth of work over differently shaped tables.
const SHAPES = [
  ['narrow', 'narrow (3 cols: int, text, real)', `SELECT * FROM t WHERE id <= ${SHAPE_ROWS}`, SHAPE_ROWS],
  ['wide', 'wide (20 cols)', 'SELECT * FROM w', WIDE_ROWS],
  ['text', 'text-heavy (5 × 20–200 chars)', 'SELECT * FROM text_heavy', SHAPE_ROWS],
  ['numeric', 'numeric-heavy (5 int + 5 real)', 'SELECT * FROM numeric', SHAPE_ROWS],
  ['nullable', 'nullable (10 cols, half NULL)', 'SELECT * FROM nullable', SHAPE_ROWS],
]
async function shapes(d, cfg) {
  const cases = []
  for (const [id, title, sql, rows] of SHAPES) {
    const q = await d.prepare(sql)
    const check = hashRows(await q.all([]))
    const m = await measure(d, () => q.all([]), cfg, { expect: { ops: 1, rows }, count: rowsOf })
    cases.push(makeCase('shapes', `shape.${id}`, `${title}, ${fmtN(rows)} rows`, check, m))
  }
  return cases
}

// N queries of 1,000 rows each (different ranges) in flight together: Promise.all for async
// libraries, a loop for sync ones (which cannot overlap them).
async function concurrent(d, cfg) {
  const q = await d.prepare('SELECT * FROM t WHERE id BETWEEN ? AND ?')
  const cases = []
  for (const n of [1, 2, 4, 8]) {
    const ranges = Array.from({ length: n }, (_, i) => [1 + i * 5_000, i * 5_000 + CONCURRENT_ROWS])
    const op = d.sync ? () => ranges.map((r) => q.all(r)) : () => Promise.all(ranges.map((r) => q.all(r)))
    const check = hashRows(await Promise.all(ranges.map((r) => q.all(r))))
    const m = await measure(d, op, cfg, { expect: { ops: n, rows: n * CONCURRENT_ROWS }, count: rowsOfMany })
    cases.push(
      makeCase(
        'concurrent',
        `concurrent.${n}`,
        `${n} × ${fmtN(CONCURRENT_ROWS)} rows ${d.sync ? '(loop)' : 'in flight'}`,
        check,
        m,
      ),
    )
  }
  return cases
}

// The point lanes' statement, the rows of their first 100 ids (the check), and the next id of
// a seeded random sequence that moves on with every query.
export async function pointQueries(d, seed) {
  const q = await d.prepare('SELECT * FROM t WHERE id = ?')
  const rand = rng(seed)
  const ids = Array.from({ length: 100_000 }, () => 1 + Math.floor(rand() * NARROW_ROWS))
  const first = []
  for (let i = 0; i < 100; i++) first.push(await q.get([ids[i]]))
  let k = 0
  return { q, first, next: () => ids[k++ % ids.length] }
}

// 2,000 point queries on seeded random ids: a loop (sync) or 64 kept in flight (async).
// The op returns how many rows it found (every id exists).
async function point(d, cfg) {
  const { q, first, next } = await pointQueries(d, 7)
  const op = d.sync
    ? () => {
        let found = 0
        for (let i = 0; i < POINT_BATCH; i++) if (q.get([next()])) found++
        return found
      }
    : async () => {
        let issued = 0
        let found = 0
        const worker = async () => {
          while (issued < POINT_BATCH) {
            issued++
            if (await q.get([next()])) found++
          }
        }
        await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
        return found
      }
  const m = await measure(d, op, cfg, {
    expect: { ops: POINT_BATCH, rows: POINT_BATCH },
    count: (found) => ({ rows: found }),
  })
  return [
    makeCase(
      'point',
      'point',
      `point query, ${fmtN(POINT_BATCH)} per sample (${d.sync ? 'loop' : `${IN_FLIGHT} in flight`})`,
      hashRows(first),
      m,
      { perSample: [POINT_BATCH, 'q'] },
    ),
  ]
}

// Point queries one at a time: 200 per sample, each awaited before the next is issued (a loop
// on sync libraries), on seeded random ids that move on every sample. Beside `point` (64 in
// flight): this is the latency of one small query, and its JS-thread time per query.
async function pointAwaited(d, cfg) {
  const { q, first, next } = await pointQueries(d, 8)
  const op = d.sync
    ? () => {
        let found = 0
        for (let i = 0; i < POINT_AWAITED; i++) if (q.get([next()])) found++
        return found
      }
    : async () => {
        let found = 0
        for (let i = 0; i < POINT_AWAITED; i++) if (await q.get([next()])) found++
        return found
      }
  const m = await measure(d, op, cfg, {
    expect: { ops: POINT_AWAITED, rows: POINT_AWAITED },
    count: (found) => ({ rows: found }),
  })
  return [
    makeCase(
      'point',
      'point-awaited',
      `point query one at a time, ${fmtN(POINT_AWAITED)} per sample (${d.sync ? 'loop' : 'each awaited'})`,
      hashRows(first),
      m,
      { perSample: [POINT_AWAITED, 'q'] },
    ),
  ]
}

// 100 parameterized range queries × 500 rows: all issued at once (async) or a loop (sync).
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
    ? () => batches[b++ % batches.length].map((r) => q.all(r))
    : () => Promise.all(batches[b++ % batches.length].map((r) => q.all(r)))
  const m = await measure(d, op, cfg, {
    expect: { ops: RANGES_PER_BATCH, rows: RANGES_PER_BATCH * RANGE_ROWS },
    count: rowsOfMany,
  })
  return [
    makeCase(
      'batch',
      'batch',
      `${RANGES_PER_BATCH} queries × ${RANGE_ROWS} rows (${d.sync ? 'loop' : 'concurrent'})`,
      check,
      m,
    ),
  ]
}

// Reads inside a transaction: one transaction doing 100 point reads one after another (on
// resqlite they run on the writer's connection, as a read-your-writes transaction must).
async function txReads(d, cfg) {
  const q = await d.prepare('SELECT * FROM t WHERE id = ?')
  const rand = rng(12)
  const ids = Array.from({ length: TX_READS }, () => 1 + Math.floor(rand() * NARROW_ROWS))
  const txn = d.transaction(
    d.sync
      ? (tx) => ids.map((id) => tx.get(q, [id]))
      : async (tx) => {
          const out = []
          for (const id of ids) out.push(await tx.get(q, [id]))
          return out
        },
  )
  const first = await txn()
  const m = await measure(d, () => txn(), cfg, {
    expect: { ops: TX_READS, rows: TX_READS },
    count: (rs) => ({ rows: rs.filter(Boolean).length }),
  })
  return [makeCase('tx-reads', 'tx-reads', `transaction with ${TX_READS} point reads`, hashRows(first), m)]
}

// The event loop's longest stall while 100,000 rows are selected.
async function stall(d, cfg) {
  const q = await d.prepare('SELECT * FROM t')
  const check = hashRows(await q.all([]))
  const c = { ...cfg, minIters: Math.min(cfg.minIters, 10) }
  const m = await measure(d, () => q.all([]), c, { stall: true, expect: { ops: 1, rows: NARROW_ROWS }, count: rowsOf })
  return [makeCase('stall', 'stall', `longest stall, select ${fmtN(NARROW_ROWS)} rows`, check, m)]
}

// A statement cheap for a while, then heavy: `SELECT count(*) FROM grow WHERE v > ?` runs 200
// times, one at a time, while `grow` has 100 rows; then (untimed, not watched) the table grows
// to 400,000 rows and the same statement runs 10 more times, each a full scan. Every run is
// awaited (sync: called) and followed by a turn of the event loop. One sample is
// the whole sequence; the table is cut back to its 100 rows before every sample. Each phase is
// watched by its own event-loop delay histogram (as in `stall`): `stall` is the longest stall
// of the sample, `stallCheap` / `stallHeavy` that of each phase. An engine that learns to run
// a statement on the JS thread because it has been cheap must not stall the loop when it stops
// being cheap. The result is one row per run; the counts are checked against the values
// computed here (the heavy ones show the grown table was scanned).
const GROW_SMALL = 100
const GROW_BIG = 400_000
const CHEAP_RUNS = 200
const HEAVY_RUNS = 10
const growThreshold = (k) => (k % 10) / 10 // the parameter of run k
const growFill = (from, to) =>
  `WITH RECURSIVE s(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM s WHERE i < ${to}) ` +
  'INSERT INTO grow (id, v) SELECT i, (i * 7919) % 1000 / 1000.0 FROM s'
const growValue = (i) => ((i * 7919) % 1000) / 1000 // the same value in JS

async function stallGrow(d, cfg) {
  const u = d.uncounted
  await u.exec('DROP TABLE IF EXISTS grow; CREATE TABLE grow (id INTEGER PRIMARY KEY, v REAL)')
  const reset = () => u.exec(`DELETE FROM grow; ${growFill(1, GROW_SMALL)}; PRAGMA wal_checkpoint(PASSIVE)`)
  const grow = () => u.exec(`${growFill(GROW_SMALL + 1, GROW_BIG)}; PRAGMA wal_checkpoint(PASSIVE)`)
  // the counts every run must return: sum over a phase's runs
  const countAbove = (n, t) => {
    let c = 0
    for (let i = 1; i <= n; i++) if (growValue(i) > t) c++
    return c
  }
  const expectedSum = (runs, n) => {
    const per = Array.from({ length: 10 }, (_, k) => countAbove(n, growThreshold(k)))
    let sum = 0
    for (let k = 0; k < runs; k++) sum += per[k % 10]
    return sum
  }
  const expect = {
    ops: CHEAP_RUNS + HEAVY_RUNS,
    rows: CHEAP_RUNS + HEAVY_RUNS,
    cheapSum: expectedSum(CHEAP_RUNS, GROW_SMALL),
    heavySum: expectedSum(HEAVY_RUNS, GROW_BIG),
  }
  const q = await d.prepare('SELECT count(*) AS c FROM grow WHERE v > ?')
  // One phase: n runs one at a time, each followed by a turn of the event loop (setImmediate),
  // so a stall is one run's, not a loop's (a sync loop would block for all its runs at once);
  // watched by an event-loop delay histogram from 3 ms before to 3 ms after. Wall and JS-thread
  // time are summed over the runs alone (sync: JS = wall; async: event-loop utilization).
  const phase = async (n) => {
    const h = monitorEventLoopDelay({ resolution: 1 })
    h.enable()
    await sleep(3)
    const counts = []
    let w = 0
    let j = 0
    for (let k = 0; k < n; k++) {
      if (d.sync) {
        const t0 = performance.now()
        const r = q.get([growThreshold(k)])
        const dt = performance.now() - t0
        w += dt
        j += dt
        counts.push(r?.c)
      } else {
        const e0 = performance.eventLoopUtilization()
        const t0 = performance.now()
        const r = await q.get([growThreshold(k)])
        w += performance.now() - t0
        j += performance.eventLoopUtilization(e0).active
        counts.push(r?.c)
      }
      await immediate()
    }
    await sleep(3)
    h.disable()
    return { w, j, stall: Math.max(0, h.max / 1e6 - 1), counts }
  }
  const sample = async () => {
    await reset()
    const ops0 = d.ctr.ops
    const cheap = await phase(CHEAP_RUNS)
    await grow()
    const heavy = await phase(HEAVY_RUNS)
    return { cheap, heavy, ops: d.ctr.ops - ops0 }
  }
  const sum = (xs) => xs.reduce((a, b) => a + (b ?? 0), 0)
  for (let i = 0; i < Math.min(cfg.warmupIters, 1); i++) await sample()
  globalThis.gc?.()
  const n = Math.min(cfg.minIters, 10)
  const samples = { wall: [], js: [], stall: [], stallCheap: [], stallHeavy: [] }
  let last
  for (let i = 0; i < n; i++) {
    const { cheap, heavy, ops } = await sample()
    samples.wall.push(cheap.w + heavy.w)
    samples.js.push(cheap.j + heavy.j)
    samples.stall.push(Math.max(cheap.stall, heavy.stall))
    samples.stallCheap.push(cheap.stall)
    samples.stallHeavy.push(heavy.stall)
    const all = [...cheap.counts, ...heavy.counts]
    checkCounts(
      expect,
      {
        ops,
        rows: all.filter((c) => c !== undefined).length,
        cheapSum: sum(cheap.counts),
        heavySum: sum(heavy.counts),
      },
      `in sample ${i + 1}`,
    )
    last = all
  }
  return [
    makeCase(
      'stall',
      'stall-grow',
      `longest stall, a count cheap ${CHEAP_RUNS} times (${fmtN(GROW_SMALL)} rows), then heavy ${HEAVY_RUNS} times (${fmtN(GROW_BIG)} rows)`,
      hash(JSON.stringify(last)),
      { n, samples, expect, checkedSamples: n },
    ),
  ]
}

export const READ_LANES = {
  select,
  bytes,
  shapes,
  scaling,
  concurrent,
  point,
  'point-awaited': pointAwaited,
  batch,
  'tx-reads': txReads,
  stall,
  'stall-grow': stallGrow,
}
