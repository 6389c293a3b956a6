// What a LiteFS replica's change detection costs while nothing happens (experiments/052): a live
// query on a replica opened with replica: true, watchExternalChanges every 10, 100 and 1,000 ms,
// no commits for 10 s each; the CPU the resqlite process and the replica's LiteFS process used.
// Run: node bench/experiments/replica-idle.mjs   (needs litefs and fusermount3)

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Database } from '../../dist/esm/index.mjs'
import { cluster } from '../../examples/replicas/litefs.mjs'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-replica-idle-'))
const {
  primary,
  replicas: [replica],
} = await cluster(dir)
await primary.start()
await replica.start()
const p = await Database.open(primary.file('i.db'))
await p.execute('CREATE TABLE t (id INTEGER PRIMARY KEY)')
await p.execute('INSERT INTO t VALUES (1)')
while (!fs.existsSync(replica.file('i.db'))) await sleep(50)
await sleep(500)
const ticks = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return Number(f[11]) + Number(f[12])
}
for (const watch of [10, 100, 1000]) {
  const r = await Database.open(replica.file('i.db'), { replica: true, watchExternalChanges: { interval: watch } })
  const sub = r.stream('SELECT count(*) n FROM t').subscribe(() => {})
  await sleep(500)
  const c0 = process.cpuUsage()
  const l0 = ticks(replica.process.pid)
  const t0 = Date.now()
  await sleep(10000)
  const cpu = process.cpuUsage(c0)
  const l = ticks(replica.process.pid) - l0
  const s = (Date.now() - t0) / 1000
  console.log(
    `watch ${watch} ms, idle: resqlite process ${((cpu.user + cpu.system) / 1e4 / s).toFixed(2)} % of a core, LiteFS replica ${(l / s).toFixed(2)} % of a core`,
  )
  sub.unsubscribe()
  await r.close()
}
await p.close()
await replica.stop()
await primary.stop()
fs.rmSync(dir, { recursive: true, force: true })
