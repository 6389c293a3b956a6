// What reopening a reader connection costs (experiments/057, `idleTimeout`): on each of 60 fresh
// databases, the first read on the engine's threads (which opens a reader connection) against
// the next one (which finds it open). `node bench/experiments/reader-reopen.mjs [--encrypted]`.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Database } from '../../dist/esm/index.mjs'

const encryptionKey = process.argv.includes('--encrypted') ? 'reader reopen' : undefined
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-reopen-'))
const first = []
const next = []
try {
  for (let i = 0; i < 60; i++) {
    const db = await Database.open(path.join(dir, `r${i}.db`), { inlineBudget: 0, encryptionKey })
    await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
    await db.execute("INSERT INTO t (v) VALUES ('x')")
    for (const times of [first, next]) {
      const t0 = performance.now()
      await db.selectOne('SELECT v FROM t WHERE id = ?', [1])
      times.push(performance.now() - t0)
    }
    await db.close()
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
const median = (a) => a.sort((x, y) => x - y)[a.length >> 1].toFixed(3)
console.log(
  `${encryptionKey ? 'encrypted' : 'plaintext'}: first read (opens a reader) ${median(first)} ms, next read ${median(next)} ms (medians of 60)`,
)
