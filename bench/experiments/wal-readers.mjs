// The wal-readers lane's workload standalone (issue 43, experiments/070), against any build:
// 6 clients loop awaited selects of a few ms, one inserts a row at a time (none with
// --no-writes). Prints the WAL's largest size, read p50/p99 and inserts per second.
// Run: node bench/experiments/wal-readers.mjs [--seconds=60] [--no-writes] [--dist=<a build's dist/>]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { measureWalReaders } from '../lanes/wal.mjs'

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback
const seconds = Number(arg('seconds', 60))
const writes = !process.argv.includes('--no-writes')
const dist = resolve(arg('dist', new URL('../../dist', import.meta.url).pathname))
const { Database } = await import(pathToFileURL(join(dist, 'esm/index.mjs')).href)

const dir = mkdtempSync(join(tmpdir(), 'resqlite-walr-'))
try {
  const m = await measureWalReaders({ Database, dir, seconds, writes })
  const sorted = m.reads.sort((a, b) => a - b)
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
  console.log(
    JSON.stringify({
      dist,
      seconds,
      writes,
      walMaxMiB: +(m.walMax / 2 ** 20).toFixed(2),
      reads: sorted.length,
      readP50ms: +q(0.5).toFixed(3),
      readP99ms: +q(0.99).toFixed(3),
      insertsPerSec: Math.round(m.inserts / seconds),
      walHeldMs: m.held,
    }),
  )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
