// Child process for replication.test.mjs (not a test file itself): writes through resqlite until
// the parent kills it, and reports each commit's sequence number on stdout once it resolved
// (written synchronously, so what was reported is in the pipe even when the process is killed).
//
// Every commit holds rows of `items` that carry its sequence number `seq` and its row count `n`:
// one row for a single write (issued 32 at a time, so they group-commit), up to 500 rows of
// 300 bytes for a batch, and a transaction of several statements that also adds its rows to
// `meta.tx_rows`. Commits run in seq order, so any committed state holds exactly seqs 1..S,
// each with all its n rows.
// Now and then a read holds its snapshot for a while, as in experiments/012.
import fs from 'node:fs'
import { Database } from '../dist/esm/index.mjs'
import { prng, SLOW_SQL } from './helpers.mjs'

export const SCHEMA = `
  CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, n INTEGER NOT NULL, payload BLOB);
  CREATE INDEX IF NOT EXISTS items_seq ON items (seq);
  CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY, tx_rows INTEGER NOT NULL);
  INSERT OR IGNORE INTO meta VALUES (1, 0)`
/** Each round's seqs: 32 single writes, a batch, then the transaction (seq % TX_EVERY === 0). */
export const TX_EVERY = 34
const INSERT = 'INSERT INTO items (seq, n, payload) VALUES (?, ?, randomblob(300))'

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const [file, checkpoints, seed] = process.argv.slice(2)
  const random = prng(Number(seed))
  const db = await Database.open(file, { checkpoints })
  await db.execute(SCHEMA)
  const acked = (seq) => fs.writeSync(1, `${seq}\n`)
  let seq = 0
  let longRead = Promise.resolve()
  for (let round = 0; ; round++) {
    if (round % 8 === 7) longRead = longRead.then(() => db.select(SLOW_SQL, [2_000_000]))
    const writes = []
    for (let i = 0; i < 32; i++) {
      const s = ++seq
      writes.push(db.execute(INSERT, [s, 1]).then(() => acked(s)))
    }
    const batch = ++seq
    const n = 1 + Math.floor(random() * 500)
    writes.push(
      db
        .executeBatch(
          INSERT,
          Array.from({ length: n }, () => [batch, n]),
        )
        .then(() => acked(batch)),
    )
    await Promise.all(writes)
    const tx = ++seq
    const parts = 2 + Math.floor(random() * 4)
    await db.transaction(async (t) => {
      for (let i = 0; i < parts; i++)
        await t.executeBatch(
          INSERT,
          Array.from({ length: 10 }, () => [tx, parts * 10]),
        )
      await t.execute('UPDATE meta SET tx_rows = tx_rows + ? WHERE id = 1', [parts * 10])
    })
    acked(tx)
    // A steady stream rather than the disk's limit: the WAL still crosses 1,000 pages a few
    // times a second, and the test's files stay around 100 MB.
    await new Promise((r) => setTimeout(r, 10))
  }
}
