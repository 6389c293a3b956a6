// What a replica read through Litestream's VFS costs while nothing happens (experiments/055): a
// live query on a replica opened with `vfs: 'litestream'` and `replica: true`, no commits, for
// 10 s per setting; the CPU this process used (resqlite's checks and re-runs, and the VFS's own
// pollers, one per connection) and how often the live query re-ran. Settings: the VFS's
// poll_interval, watchExternalChanges' interval and the number of readers.
// Run: LITESTREAM_VFS=<path of litestream-vfs.so> node bench/experiments/replica-idle-vfs.mjs
//      (litestream on PATH; scripts/build-litestream-vfs.sh builds the extension)

import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Database } from '../../dist/esm/index.mjs'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-replica-idle-vfs-'))
const file = path.join(dir, 'i.db')
const replicaUrl = `file://${path.join(dir, 'replica')}`
fs.writeFileSync(
  path.join(dir, 'litestream.yml'),
  `dbs:\n  - path: ${file}\n    replica:\n      url: ${replicaUrl}\n      sync-interval: 10ms\n    monitor-interval: 10ms\n`,
)
const p = await Database.open(file, { checkpoints: 'external' })
await p.execute('CREATE TABLE t (id INTEGER PRIMARY KEY)')
await p.execute('INSERT INTO t VALUES (1)')
const ls = spawn('litestream', ['replicate', '-config', path.join(dir, 'litestream.yml')], { stdio: 'ignore' })
while (!fs.existsSync(path.join(dir, 'replica', 'ltx'))) await sleep(50)
await sleep(1000)
await Database.loadExtension(process.env.LITESTREAM_VFS)
try {
  for (const [poll, watch, readers] of [
    ['10ms', 10, undefined],
    ['10ms', 10, 1],
    ['10ms', 100, undefined],
    ['10ms', 1000, undefined],
    ['1s', 1000, undefined],
  ]) {
    const r = await Database.open(`file:i.db?replica_url=${replicaUrl}&poll_interval=${poll}`, {
      vfs: 'litestream',
      replica: true,
      watchExternalChanges: { interval: watch },
      ...(readers ? { readers } : {}),
    })
    const sub = r.stream('SELECT count(*) n FROM t').subscribe(() => {})
    await sleep(500)
    const before = (await r.diagnostics()).streams.requeries
    const c0 = process.cpuUsage()
    const t0 = Date.now()
    await sleep(10000)
    const cpu = process.cpuUsage(c0)
    const s = (Date.now() - t0) / 1000
    const requeries = (await r.diagnostics()).streams.requeries - before
    console.log(
      `poll_interval ${poll}, watch ${watch} ms, readers ${r.readers}: ${((cpu.user + cpu.system) / 1e4 / s).toFixed(2)} % of a core, ` +
        `${(requeries / s).toFixed(1)} live-query re-runs/s`,
    )
    sub.unsubscribe()
    await r.close()
  }
} finally {
  await p.close()
  ls.kill()
  fs.rmSync(dir, { recursive: true, force: true })
}
