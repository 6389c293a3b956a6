// Read replicas with live queries that follow the primary (docs/replication.md), on one machine:
// two LiteFS nodes (a primary and a replica, each its own `litefs mount` with its own files,
// joined only by LiteFS's HTTP stream on loopback), a primary process that commits, and a
// replica process whose live query prints the primary's new rows. Runs for RUN_SECONDS (default 5),
// then stops everything. Needs litefs and fusermount3 (see docs/replication.md).
// Run from a clone after `npm install` and `npm run build`: `npm run example:replicas`.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { cluster } from './litefs.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const seconds = Number(process.env.RUN_SECONDS ?? 5)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-replicas-'))
const { primary, replicas } = await cluster(dir)
const [replica] = replicas
const children = []
const run = (script, file) => {
  const child = spawn(process.execPath, [path.join(here, script), file], { stdio: 'inherit' })
  children.push(child)
  return child
}
try {
  await primary.start()
  await replica.start()
  run('replica.mjs', replica.file('app.db'))
  run('primary.mjs', primary.file('app.db'))
  await new Promise((r) => setTimeout(r, seconds * 1000))
} finally {
  for (const child of children) child.kill()
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode === null ? c.once('exit', r) : r()))))
  await replica.stop()
  await primary.stop()
  fs.rmSync(dir, { recursive: true, force: true })
}
