// Run by write-group-retention.test.mjs with --expose-gc: writes with 30 KB parameters issued
// together (a write group), awaited, then dropped; prints the ArrayBuffer memory still in use
// after GC beyond what it was before (bytes).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Database } from '../dist/esm/index.mjs'

const BLOB = 30_000 // well under the 64 KB of parameters a write on the JS thread takes
const WRITES = 16
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-group-retention-'))
// inline-helpers.mjs's PLACEMENT (not imported: it loads node:test, whose output would mix with
// this child's): on a loaded machine a write overrunning the default budget would leave the JS
// thread, and no group would form.
const db = await Database.open(path.join(dir, 'g.db'), { inlineBudget: 10 })
await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)')
const insert = 'INSERT INTO t (b) VALUES (?)'

/** Writes issued together: the first runs alone, the others in a write group. */
async function together() {
  const blob = Buffer.alloc(BLOB, 7)
  await Promise.all(Array.from({ length: WRITES }, () => db.execute(insert, [blob])))
  await db.execute('DELETE FROM t')
}

function arrayBuffers() {
  globalThis.gc()
  globalThis.gc()
  return process.memoryUsage().arrayBuffers
}

const groups = async () => (await db.diagnostics()).inline.groups

await together() // warm up
const before = arrayBuffers()
// Rounds until five ran a group (one may not: a checkpoint on the writer thread, say).
let grouped = 0
for (let round = 0; round < 50 && grouped < 5; round++) {
  const ran = await groups()
  await together()
  if ((await groups()) > ran) grouped++
}
const after = arrayBuffers()
await db.close()
fs.rmSync(dir, { recursive: true, force: true })
console.log(JSON.stringify({ kept: after - before, grouped }))
