// Holds a database's write lock from another process (`node lock.mjs <file>`): prints "locked"
// once it holds it, and rolls back and exits when its standard input closes. Another process,
// because two copies of SQLite in one process (resqlite's and better-sqlite3's) do not see each
// other's locks.
import { Database } from '../../dist/esm/index.mjs'

const db = await Database.open(process.argv[2])
await db
  .transaction(
    async (tx) => {
      await tx.execute('INSERT INTO "Tag" ("name") VALUES (\'lock\')')
      process.stdout.write('locked\n')
      await new Promise((resolve) => process.stdin.on('close', resolve).resume())
      throw new Error('rolled back')
    },
    { mode: 'immediate' },
  )
  .catch(() => {})
await db.close()
