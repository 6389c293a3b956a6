// WAL growth while a long read holds a snapshot and writes continue (experiments/012).
// Run: <node> bench/experiments/wal-growth.mjs
// Phase 1: 1 s of writes, no long read. Phase 2: writes while a ~3 s read holds a snapshot.
// Phase 3: writes after the read ended. Prints the WAL file size over time.
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Database } from '../../dist/esm/index.mjs'

const dir = mkdtempSync(join(tmpdir(), 'resqlite-wal-'))
const file = join(dir, 'w.db')
const db = await Database.open(file)
await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, payload TEXT)')
const walMiB = () => {
  try {
    return statSync(`${file}-wal`).size / 2 ** 20
  } catch {
    return 0
  }
}
const payload = 'x'.repeat(200)
const sets = Array.from({ length: 1000 }, () => [payload])
let writes = 0
async function writeFor(ms) {
  const end = performance.now() + ms
  while (performance.now() < end) {
    await db.executeBatch('INSERT INTO t (payload) VALUES (?)', sets)
    await db.execute('DELETE FROM t WHERE id <= (SELECT max(id) - 5000 FROM t)')
    writes++
  }
}
const samples = []
const t0 = performance.now()
const timer = setInterval(() => samples.push([(performance.now() - t0) / 1000, walMiB()]), 250)

await writeFor(1000)
const phase1 = walMiB()
// A read that holds its snapshot for ~3 s: a slow recursive CTE over the table.
const longRead = db.select(
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 6000000) SELECT count(*) AS n, (SELECT count(*) FROM t) AS rows FROM c',
)
await writeFor(3000)
await longRead
const duringMax = Math.max(...samples.filter(([t]) => t > 1).map(([, s]) => s))
await writeFor(1500)
clearInterval(timer)
console.log(`batches written: ${writes}`)
console.log(`WAL after phase 1 (no long read): ${phase1.toFixed(1)} MiB`)
console.log(`WAL max while the long read held its snapshot: ${duringMax.toFixed(1)} MiB`)
console.log(`WAL after the read ended and writes went on: ${walMiB().toFixed(1)} MiB`)
console.log(samples.map(([t, s]) => `${t.toFixed(2)}s:${s.toFixed(1)}`).join(' '))
await db.close()
rmSync(dir, { recursive: true, force: true })
