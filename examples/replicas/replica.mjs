// The replica of the read-replica example (run.mjs beside this file; docs/replication.md):
// opens the database on a replica's LiteFS mount with `replica: true` and prints, each time its
// live query emits, the newest transaction the primary committed and its rows. The query reads
// everything in one statement, so one snapshot: `torn` would mean a state holding part of a
// transaction.
// Usage: node replica.mjs <database path>
// With LITESTREAM_VFS=<path of Litestream's VFS extension> it reads a Litestream replica instead:
// it loads the extension and opens <database path>, a URI naming the replica
// (`file:app.db?replica_url=file:///backups/app&poll_interval=10ms`), through the `litestream` VFS.
// (RESQLITE_REPLICA_WATCH=off turns change detection off, to see the live query stall.)
import fs from 'node:fs'
import { Database } from '../../dist/esm/index.mjs'

const file = process.argv[2]
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const vfs = process.env.LITESTREAM_VFS
if (vfs) await Database.loadExtension(vfs)
else while (!fs.existsSync(file)) await sleep(50) // the first transaction has not arrived yet

const off = process.env.RESQLITE_REPLICA_WATCH === 'off'
const db = await Database.open(file, {
  replica: true,
  ...(vfs ? { vfs: 'litestream' } : {}),
  ...(off ? { watchExternalChanges: false } : {}),
})
console.log(`replica: ${file}`)
const SUMMARY = `
  SELECT (SELECT count(*) FROM items) AS rows, (SELECT total FROM meta) AS total,
         (SELECT coalesce(max(tx), 0) FROM items) AS last,
         (SELECT count(*) FROM (SELECT tx FROM items GROUP BY tx HAVING count(*) != max(k))) AS partial,
         (SELECT group_concat(note, '; ') FROM items WHERE tx = (SELECT max(tx) FROM items)) AS newest`

// Until the primary created both tables and meta's row (three commits of its own: a state
// between them has no total, which would read as torn), wait and retry.
for (;;) {
  try {
    if ((await db.select(SUMMARY))[0].total !== null) break
  } catch {}
  await sleep(100)
}
db.stream(SUMMARY).subscribe({
  next: ([s]) => {
    const torn = s.rows !== s.total || s.partial !== 0 ? ' torn' : ''
    console.log(`replica: tx ${s.last}, ${s.rows} rows${torn}: ${s.newest ?? ''}`)
  },
  error: (e) => console.error(`replica: live query failed: ${e.code}: ${e.message}`),
})
