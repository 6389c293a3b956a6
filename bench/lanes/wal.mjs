// The WAL under sustained reads (issue 43, experiments/070; resqlite only: it is about the
// engine's own checkpoints). Six clients loop awaited selects of a few ms while one client
// inserts a row at a time, then the same reads with no writes. Reported: the WAL file's largest
// size (sampled every 20 ms and after every insert), read latency (p50 as the median, p99) and
// inserts per second. Full runs last 60 s per case, as in the issue.
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { makeCase } from './common.mjs'

export const WAL_SECONDS = { full: 60, quick: 5, smoke: 1 }
const CLIENTS = 6
const R_ROWS = 20_000
// A read of a few ms: an aggregate over R_ROWS rows.
const READ = "SELECT count(*) AS n, sum(value) AS s, max(length(name)) AS l FROM r WHERE name LIKE '%7%'"
const EXPECTED_N = Array.from({ length: R_ROWS }, (_, i) => `name-${i}`).filter((s) => s.includes('7')).length

const p99 = (sorted) => sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))]

/** The workload on a fresh database in `dir`: `clients` loops of awaited reads for `seconds`,
 * beside one loop of single-row inserts when `writes`. Returns every read's latency (ms), the
 * WAL's largest size, the inserts made, and the JS thread's active time. */
export async function measureWalReaders({ Database, dir, seconds, clients = CLIENTS, writes, options }) {
  const file = join(dir, `wal-${writes ? 'writes' : 'reads'}.db`)
  const db = await Database.open(file, options)
  try {
    await db.execute('CREATE TABLE r (id INTEGER PRIMARY KEY, name TEXT, value REAL)')
    await db.execute('CREATE TABLE w (id INTEGER PRIMARY KEY, payload TEXT, at REAL)')
    await db.executeBatch(
      'INSERT INTO r (name, value) VALUES (?, ?)',
      Array.from({ length: R_ROWS }, (_, i) => [`name-${i}`, i * 1.5]),
    )
    const walBytes = () => {
      try {
        return statSync(`${file}-wal`).size
      } catch {
        return 0
      }
    }
    let walMax = walBytes()
    const sampler = setInterval(() => {
      walMax = Math.max(walMax, walBytes())
    }, 20)
    const reads = []
    let wrong = 0
    let inserts = 0
    const elu = performance.eventLoopUtilization()
    const end = performance.now() + seconds * 1000
    const reader = async () => {
      while (performance.now() < end) {
        const t = performance.now()
        const [row] = await db.select(READ)
        reads.push(performance.now() - t)
        if (row.n !== EXPECTED_N) wrong++
      }
    }
    const writer = async () => {
      while (performance.now() < end) {
        await db.execute('INSERT INTO w (payload, at) VALUES (?, ?)', ['x'.repeat(100), performance.now()])
        inserts++
        walMax = Math.max(walMax, walBytes())
      }
    }
    await Promise.all([...Array.from({ length: clients }, reader), writes ? writer() : undefined])
    clearInterval(sampler)
    const active = performance.eventLoopUtilization(elu).active
    walMax = Math.max(walMax, walBytes())
    const { n } = await db.selectOne('SELECT count(*) AS n FROM w')
    if (n !== inserts) throw new Error(`${inserts} inserts acknowledged, ${n} rows in w`)
    if (wrong) throw new Error(`${wrong} reads returned another count than ${EXPECTED_N}`)
    return { reads, walMax, inserts, seconds, active, held: (await db.diagnostics()).walHeldMs }
  } finally {
    await db.close()
  }
}

async function walReaders(d, cfg) {
  if (!d.Database || !d.path) throw new Error('the wal-readers lane needs a driver with path and Database (resqlite)')
  const seconds = WAL_SECONDS[cfg.name] ?? WAL_SECONDS.full
  const dir = mkdtempSync(join(dirname(d.path), 'resqlite-bench-wal-'))
  try {
    const cases = []
    for (const writes of [true, false]) {
      const m = await measureWalReaders({ Database: d.Database, dir, seconds, writes })
      const sorted = [...m.reads].sort((a, b) => a - b)
      const name = writes ? 'writes' : 'reads-only'
      cases.push(
        makeCase(
          'wal',
          `wal.${name}`,
          `${CLIENTS} clients reading back to back (a few ms a read)${writes ? ', 1 inserting a row at a time' : ', no writes'}, ${seconds} s: one sample is one read`,
          `count ${EXPECTED_N}`,
          {
            n: m.reads.length,
            samples: { wall: m.reads, js: [m.active / m.reads.length] },
            expect: { reads: m.reads.length },
            checkedSamples: m.reads.length,
          },
          {
            p99: p99(sorted),
            walMaxMiB: m.walMax / 2 ** 20,
            ...(writes ? { insertsPerSec: m.inserts / m.seconds } : {}),
          },
        ),
      )
    }
    return cases
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export const WAL_LANES = { 'wal-readers': walReaders }
export const WAL_LIBRARIES = { 'wal-readers': ['resqlite'] }
