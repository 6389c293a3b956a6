// An engine thread running a long statement steps aside while the JS thread waits for its CPU
// (crates/engine/src/threads/step_aside.rs, experiments/048). Linux only: the engine reads the
// JS thread's state from /proc. A child process pinned to one CPU (taskset) makes the JS thread
// and the reader share it.

import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { tempDir } from './helpers.mjs'

const ESM_ENTRY = new URL('../dist/esm/index.mjs', import.meta.url).href

// The child starts a read of a few hundred milliseconds on a reader, then keeps the JS thread
// busy (always runnable) until the read is done, checking the event loop is not needed for it.
const CHILD = `
import { Database } from ${JSON.stringify(ESM_ENTRY)}
const db = await Database.open(process.argv[2])
await db.execute('CREATE TABLE t(x INTEGER)')
await db.execute('WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < 200000) INSERT INTO t SELECT v FROM s')
const before = (await db.diagnostics()).steppedAside
let done = false
const read = db.selectOne('SELECT count(*) AS n FROM t a, t b WHERE a.x < 40 AND b.x % 7 = 0 AND a.x + b.x > 0')
  .then((row) => { done = true; return row })
const start = Date.now()
while (!done && Date.now() - start < 20000) {
  await new Promise((resolve) => setImmediate(resolve)) // lets the completion in
  const spin = Date.now() + 20
  while (Date.now() < spin) {}
}
const row = await read
const after = (await db.diagnostics()).steppedAside
await db.close()
console.log(JSON.stringify({ n: row.n, steppedAside: after - before, ms: Date.now() - start }))
`

test('a long read on a reader steps aside while the JS thread waits for its CPU', {
  skip: process.platform !== 'linux' && 'Linux only',
}, (t) => {
  const dir = tempDir(t)
  const script = path.join(dir, 'child.mjs')
  fs.writeFileSync(script, CHILD)
  const r = spawnSync('taskset', ['-c', '0', process.execPath, script, path.join(dir, 'db')], {
    encoding: 'utf8',
    timeout: 60_000,
  })
  assert.equal(r.status, 0, `the child failed: ${r.error ?? ''}\n${r.stdout}\n${r.stderr}`)
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1))
  assert.equal(out.n, 39 * Math.floor(200000 / 7), 'the read gave a wrong count')
  assert.ok(out.steppedAside > 0, `no engine thread stepped aside in ${out.ms} ms on a shared CPU`)
})
