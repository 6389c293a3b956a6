// Memory: the process's resident set size (RSS) growth across one call, with the call's result
// still held — select 10,000 → rows, 10,000 → JSON bytes, batch insert 10,000 rows.
//
// Each sample: full GC (--expose-gc), RSS, the call, RSS again. The first sample in the fresh
// child process includes growing the heap and the native buffers (rssFirst); later ones mostly
// reuse memory freed by the previous sample, so the median is the steady state. RSS counts
// native memory too (resqlite's and the peers' buffers), which heap statistics would miss.
import { performance } from 'node:perf_hooks'
import { narrowRow, rng } from '../data.mjs'
import { hashRows, makeCase } from './common.mjs'

const N = 10_000
const MB = 1024 * 1024

async function rssLoop(d, cfg, op, { expect, count, reset }) {
  if (!globalThis.gc) throw new Error('memory lane needs --expose-gc')
  const samples = { wall: [], js: [], rss: [] }
  const iters = Math.max(cfg.minIters, 1)
  for (let i = 0; i < iters; i++) {
    if (reset) await reset()
    globalThis.gc()
    const ops0 = d.ctr.ops
    const rss0 = process.memoryUsage.rss()
    const e0 = performance.eventLoopUtilization()
    const t0 = performance.now()
    const result = d.sync ? op() : await op()
    const wall = performance.now() - t0
    const rss1 = process.memoryUsage.rss()
    samples.wall.push(wall)
    samples.js.push(d.sync ? wall : performance.eventLoopUtilization(e0).active)
    samples.rss.push((rss1 - rss0) / MB)
    const got = { ops: d.ctr.ops - ops0, ...(await count(result)) }
    for (const [k, v] of Object.entries(expect))
      if (got[k] !== v) throw new Error(`work check failed: ${k} = ${got[k]}, expected ${v}`)
  }
  return { n: iters, samples, expect, checkedSamples: iters, rssFirst: samples.rss[0] }
}

async function memory(d, cfg) {
  const u = d.uncounted
  const q = await d.prepare('SELECT * FROM t WHERE id <= ?')
  const cases = []
  const rows = await rssLoop(d, cfg, () => q.all([N]), {
    expect: { ops: 1, rows: N },
    count: (r) => ({ rows: r.length }),
  })
  cases.push(
    makeCase('memory', 'memory.rows', 'RSS growth: select 10,000 → rows (MB)', hashRows(await q.all([N])), rows),
  )
  const json = await rssLoop(d, cfg, () => q.bytes([N]), {
    expect: { ops: 1, bytes: true },
    count: (b) => ({ bytes: b.length > 0 }),
  })
  cases.push(
    makeCase(
      'memory',
      'memory.json',
      'RSS growth: select 10,000 → JSON bytes (MB)',
      String((await q.bytes([N])).length),
      json,
    ),
  )

  await u.exec('DROP TABLE IF EXISTS write_t; CREATE TABLE write_t (id INTEGER PRIMARY KEY, name TEXT, value REAL)')
  const ins = await d.prepare('INSERT INTO write_t (id, name, value) VALUES (?, ?, ?)')
  const rand = rng(21)
  const data = Array.from({ length: N }, (_, i) => narrowRow(rand, i + 1))
  const countStmt = await u.prepare('SELECT count(*) AS c FROM write_t')
  const insert = await rssLoop(d, cfg, () => ins.runBatch(data), {
    reset: () => u.exec('DELETE FROM write_t; PRAGMA wal_checkpoint(PASSIVE)'),
    expect: { ops: N, rows: N },
    count: async () => ({ rows: (await countStmt.all([]))[0].c }),
  })
  cases.push(makeCase('memory', 'memory.insert', 'RSS growth: batch insert 10,000 rows (MB)', `${N} rows`, insert))
  return cases
}

export const MEMORY_LANES = { memory }
