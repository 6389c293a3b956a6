// Child of bad-input-close-races.test.mjs (issue 43, the freeze): on an encrypted database, a SQL
// function that subscribes to a live query, called by a live query, then by selects and writes
// issued around three rekeys. Prints what they settled with, what the rekeys did, and the rows
// the last key reads.

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Database } from '../dist/esm/index.mjs'

const inlineBudget = process.argv[2] === 'threads' ? 0 : undefined // 0: every statement on a thread
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-freeze-'))
const file = path.join(dir, 'enc.db')
const db = await Database.open(file, { encryptionKey: 'key 0', readers: 2, inlineBudget })
await db.execute('CREATE TABLE t (a)')
await db.executeBatch(
  'INSERT INTO t VALUES (?)',
  Array.from({ length: 200 }, (_, i) => [i]),
)
let calls = 0
db.function('subscribes', (a) => {
  calls++
  db.stream(`SELECT count(*) AS n FROM t WHERE a > ${calls % 7}`).subscribe({ next() {}, error() {} })
  return a
})
// A live query calling it: its first run (on this thread's connection when inline) called the
// function, whose subscription blocked this thread for good on the old code.
const live = await new Promise((resolve) => {
  db.stream('SELECT subscribes(a) AS v FROM t WHERE a < 2').subscribe({
    next: () => resolve('rows'),
    error: (error) => resolve(error.cause?.code ?? error.code),
  })
})
const outcome = (promise) =>
  promise.then(
    () => 'resolved',
    (error) => error.cause?.code ?? error.code,
  )
const issued = []
const rekeys = []
for (let i = 1; i <= 30; i++) {
  issued.push(outcome(db.execute('INSERT INTO t SELECT subscribes(a) + 1000 FROM t WHERE a < 2')))
  issued.push(outcome(db.select('SELECT subscribes(a) AS v FROM t WHERE a < 2')))
  if (i % 10 === 5) rekeys.push(outcome(db.rekey(`key ${rekeys.length + 1}`)))
  await new Promise((resolve) => setImmediate(resolve))
}
const settled = [...new Set(await Promise.all(issued))].join(',')
const rekeyed = (await Promise.all(rekeys)).every((r) => r === 'resolved')
await db.close()
const again = await Database.open(file, { encryptionKey: `key ${rekeys.length}` })
const [{ n }] = await again.select('SELECT count(*) AS n FROM t')
await again.close()
fs.rmSync(dir, { recursive: true, force: true })
console.log(JSON.stringify({ live, calls: settled, rekeyed, rows: n }))
