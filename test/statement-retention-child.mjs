// Run by statement.test.mjs with --expose-gc (not a test file itself): a statement that is
// kept must not keep its last result alive, nor its database once closed. Prints JSON.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Database } from '../dist/esm/index.mjs'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-stmt-retention-'))
const collect = async () => {
  for (let i = 0; i < 4; i++) {
    globalThis.gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
}

/** Opens a database, prepares a statement, reads with it and closes: the statement and weak
 * references to the last rows and the database (in a function of its own, so nothing of its
 * frame is left to keep them). */
async function run() {
  const db = await Database.open(path.join(dir, 'r.db'))
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  await db.executeBatch(
    'INSERT INTO t (v) VALUES (?)',
    Array.from({ length: 2000 }, (_, i) => [`value ${i}`.repeat(20)]),
  )
  const statement = await db.prepare('SELECT * FROM t')
  const small = await db.prepare('SELECT * FROM t WHERE id = ?')
  // A result too large for the JS thread's budget (a reader's), and a small one (the JS thread's).
  const rowsRef = new WeakRef(await statement.select())
  const rowRef = new WeakRef(await small.select([1]))
  await db.close()
  return { statement, rowsRef, rowRef, dbRef: new WeakRef(db) }
}
const { statement, rowsRef, rowRef, dbRef } = await run()
await collect()
const out = {
  rowsCollected: rowsRef.deref() === undefined && rowRef.deref() === undefined,
  databaseCollected: dbRef.deref() === undefined,
}
out.stillRejects = await statement.select().then(
  () => 'resolved',
  (error) => error.code,
)
fs.rmSync(dir, { recursive: true, force: true })
process.stdout.write(JSON.stringify(out))
