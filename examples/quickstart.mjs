// Opens a database file, writes, reads, prints selectBytes output, follows a live query
// through a transaction, and exits.
// Run from a clone after `npm install`: `npm run example`.
import { fileURLToPath } from 'node:url'
import { Database } from '../dist/esm/index.mjs'

const file = fileURLToPath(new URL('./quickstart.db', import.meta.url))
const db = await Database.open(file)

// Several statements and no parameters: execute runs them all (migrations).
await db.execute(`
  CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, stars REAL);
  DELETE FROM notes;
`)
const { lastInsertRowid } = await db.execute('INSERT INTO notes (title, stars) VALUES (?, ?)', ['Hello, SQLite', 4.5])
const { changes } = await db.executeBatch('INSERT INTO notes (title, stars) VALUES (:title, :stars)', [
  { title: 'Reads run on reader threads', stars: 5 },
  { title: 'Writes run on the writer thread', stars: 4 },
])
console.log(`inserted row ${lastInsertRowid}, then ${changes} more in one transaction`)

// Reads run in parallel on the reader pool; the event loop only decodes finished results.
const [top, count] = await Promise.all([
  db.select('SELECT id, title, stars FROM notes WHERE stars >= ? ORDER BY stars DESC', [4.5]),
  db.selectOne('SELECT count(*) AS n FROM notes'),
])
console.log('select →', top)
console.log('selectOne →', count)

// selectBytes: the JSON an HTTP handler would send, built natively, no JS objects.
const json = await db.selectBytes('SELECT id, title, stars FROM notes ORDER BY id')
console.log(`selectBytes → ${json.length} bytes: ${json.toString('utf8')}`)

// A live query: the current rows now, then new rows after each committed write that changed
// them. The transaction below commits once, so the stream re-runs once.
const live = db.stream('SELECT count(*) AS n, max(stars) AS best FROM notes')
for await (const [row] of live) {
  console.log('stream →', row)
  if (row.n === 3) {
    await db.transaction(async (tx) => {
      await tx.execute('INSERT INTO notes (title, stars) VALUES (?, ?)', ['Live queries re-run on commit', 5])
      await tx.execute('UPDATE notes SET stars = stars + 0.5 WHERE id = ?', [lastInsertRowid])
    })
  } else break // leaving the loop unsubscribes
}
const { streams } = await db.diagnostics()
console.log(
  `diagnostics → ${streams.requeries} re-run, ${streams.emissions} rows delivered, ${streams.active} subscribed`,
)

await db.close()
