// Statement cache: cost of a miss (prepare) vs a hit, and a working set just above/below capacity.
// Run: <node 24> bench/experiments/statement-cache.mjs <database made by bench/data.mjs>

import { performance } from 'node:perf_hooks'
import { Database } from '../../dist/esm/index.mjs'

const db = await Database.open(process.argv[2], { readers: 1 })
const N = 20000
async function run(label, sqlOf) {
  for (let i = 0; i < 2000; i++) await db.selectOne(sqlOf(i), [1 + (i % 1000)])
  const t = performance.now()
  for (let i = 0; i < N; i++) await db.selectOne(sqlOf(i), [1 + (i % 1000)])
  console.log(label.padEnd(44), (((performance.now() - t) / N) * 1000).toFixed(2), 'µs/query')
}
const q = (k) => `SELECT * FROM w WHERE id = ? /* ${k} */`
for (let r = 0; r < 2; r++) {
  await run('1 statement (always a hit)', () => q(0))
  await run('120 statements in rotation (fits in 128)', (i) => q(i % 120))
  await run('136 statements in rotation (LRU thrashes)', (i) => q(i % 136))
  await run('every statement new (always a miss)', (i) => q(`u${r}-${i}`))
}
await db.close()
