// The primary of the read-replica example (run.mjs beside this file; docs/replication.md):
// opens the database on the primary's LiteFS mount and commits a transaction every INTERVAL ms
// (default 200). Each transaction adds k rows (1–4) to `items` and k to `meta.total`, so a state
// that holds part of one has count(items) ≠ meta.total. Prints `ack <tx>` once a commit resolves.
// With SLOW_TX=1 each transaction prints `mid <tx>` halfway and waits 300 ms before it
// commits, so a test can kill the primary inside it. CHECKPOINTS=external leaves checkpoints to
// Litestream (docs/replication.md).
// Usage: node primary.mjs <database path>
import { Database } from '../../dist/esm/index.mjs'

const file = process.argv[2]
const interval = Number(process.env.INTERVAL ?? 200)
const slow = process.env.SLOW_TX === '1'
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const db = await Database.open(file, { checkpoints: process.env.CHECKPOINTS === 'external' ? 'external' : 'auto' })
await db.execute(
  'CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, tx INTEGER NOT NULL, k INTEGER NOT NULL, note TEXT)',
)
await db.execute('CREATE TABLE IF NOT EXISTS meta (one INTEGER PRIMARY KEY CHECK (one = 1), total INTEGER NOT NULL)')
await db.execute('INSERT OR IGNORE INTO meta (one, total) VALUES (1, 0)')
let tx = (await db.selectOne('SELECT coalesce(max(tx), 0) AS last FROM items')).last
console.log(`primary: ${file}, last transaction ${tx}`)

for (;;) {
  tx++
  const k = 1 + (tx % 4)
  await db.transaction(async (t) => {
    for (let i = 1; i <= k; i++) {
      await t.execute('INSERT INTO items (tx, k, note) VALUES (?, ?, ?)', [tx, k, `tx ${tx} row ${i}/${k}`])
      if (slow && i === 1) {
        console.log(`mid ${tx}`)
        await sleep(300)
      }
    }
    await t.execute('UPDATE meta SET total = total + ? WHERE one = 1', [k])
  })
  console.log(`ack ${tx}`)
  await sleep(interval)
}
