// Focused A/B for experiments/019: awaited inserts, concurrent inserts and interactive
// transactions, median of 60 rounds. ROOT=<a checkout with dist/ and native/> picks the build
// (default: this repository).
const root = process.env.ROOT ?? new URL('../..', import.meta.url).pathname
const { Database } = await import(`${root}/dist/esm/index.mjs`)
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
const dir = mkdtempSync(join(tmpdir(), 'resqlite-wr-'))
const db = await Database.open(dir + '/a.db')
await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value REAL)')
const rows = Array.from({ length: 100 }, (_, i) => [i + 1, 'name' + i, i * 0.5])
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1]
const seq = [], tx = [], conc = []
for (let round = 0; round < 60; round++) {
  await db.execute('DELETE FROM t')
  let t0 = performance.now()
  for (const r of rows) await db.execute('INSERT INTO t VALUES (?, ?, ?)', r)
  seq.push(performance.now() - t0)
  await db.execute('DELETE FROM t')
  t0 = performance.now()
  await Promise.all(rows.map((r) => db.execute('INSERT INTO t VALUES (?, ?, ?)', r)))
  conc.push(performance.now() - t0)
  await db.execute('DELETE FROM t')
  t0 = performance.now()
  for (let i = 0; i < 100; i += 2) {
    await db.transaction(async (t) => {
      await t.execute('INSERT INTO t VALUES (?, ?, ?)', rows[i])
      await t.execute('INSERT INTO t VALUES (?, ?, ?)', rows[i + 1])
      await t.selectOne('SELECT count(*) AS n FROM t')
    })
  }
  tx.push(performance.now() - t0)
}
console.log(process.env.ROOT ?? 'this build', 'seq', med(seq).toFixed(2), 'conc', med(conc).toFixed(2), 'tx50', med(tx).toFixed(2))
await db.close()
