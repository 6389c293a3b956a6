// The smoke run of test/packed-install.test.mjs, inside a directory where resqlite was installed
// from its packed tarballs. `smoke(Database, dir)` is called by an ESM and a CommonJS entry; it
// returns what it saw, and the test compares it with what it should be.
const fs = require('node:fs')
const path = require('node:path')

exports.smoke = async (Database, dir) => {
  const file = path.join(dir, 'smoke.db')
  const db = await Database.open(file, { encryptionKey: 'smoke key' })
  await db.execute('CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT)')
  // The live query's first result, then its re-run after the insert commits.
  const counts = []
  let emitted
  const emission = () =>
    new Promise((resolve) => {
      emitted = resolve
    })
  let next = emission()
  const stop = db.stream('SELECT count(*) AS n FROM notes').subscribe(([row]) => {
    counts.push(row.n)
    emitted()
  })
  await next
  next = emission()
  await db.execute('INSERT INTO notes (title) VALUES (?)', ['packed'])
  await next
  stop()
  const rows = await db.select('SELECT id, title FROM notes')
  const json = (await db.selectBytes('SELECT id, title FROM notes')).toString()
  await db.close()

  // Encrypted at rest: the file is not plain SQLite, and the wrong key is refused.
  const plainHeader = fs.readFileSync(file).subarray(0, 15).toString() === 'SQLite format 3'
  let wrongKey
  try {
    await (await Database.open(file, { encryptionKey: 'another key' })).close()
  } catch (err) {
    wrongKey = err.code
  }
  const again = await Database.open(file, { encryptionKey: 'smoke key' })
  const reopened = await again.select('SELECT title FROM notes')
  await again.close()
  return { rows, json, counts, plainHeader, wrongKey, reopened }
}
