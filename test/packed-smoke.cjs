// The smoke run of an installed resqlite: test/packed-install.test.mjs (Node), test/runtimes.test.mjs
// (Deno, Bun) and test/platforms/ (other architectures and libcs) call `smoke(Database, dir)`
// from an ESM and a CommonJS entry, inside a directory where resqlite was installed from its
// packed tarballs. It returns what it saw; the tests compare it with SMOKE_EXPECTED
// (test/platform-helpers.mjs). Plain JavaScript that every runtime runs: no node:test here.
const fs = require('node:fs')
const path = require('node:path')

const LARGE = 50_000

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

  // Writes one after another and together, a transaction, then a large result three ways.
  await db.execute('CREATE TABLE big (n INTEGER, label TEXT)')
  for (let i = 0; i < 20; i++) await db.execute('INSERT INTO big VALUES (?, ?)', [i, `row ${i}`])
  await Promise.all(Array.from({ length: 20 }, (_, i) => db.execute('INSERT INTO big VALUES (?, ?)', [20 + i, 'x'])))
  const inTransaction = await db.transaction(async (tx) => {
    await tx.execute(
      `WITH RECURSIVE s(n) AS (SELECT 40 UNION ALL SELECT n + 1 FROM s WHERE n < ${LARGE - 1})
       INSERT INTO big SELECT n, 'row ' || n FROM s`,
    )
    return (await tx.selectOne('SELECT count(*) AS n FROM big')).n
  })
  const large = await db.select('SELECT n, label FROM big ORDER BY n')
  const largeOk =
    large.length === LARGE && large.every((r, i) => r.n === i) && large[LARGE - 1].label === `row ${LARGE - 1}`
  const largeJson = JSON.parse((await db.selectBytes('SELECT n FROM big ORDER BY n')).toString())
  // SQL functions in JavaScript: a select calling one over every row, an aggregate, and a
  // write calling one.
  db.function('twice', (n) => n * 2)
  db.aggregate('total', { start: 0, step: (sum, n) => sum + n })
  const functionSum = (await db.select('SELECT twice(n) AS t FROM big')).reduce((sum, r) => sum + r.t, 0)
  const aggregate = (await db.selectOne('SELECT total(n) AS s FROM big')).s
  await db.execute('UPDATE big SET label = twice(n) WHERE n = 7')
  const written = (await db.selectOne('SELECT label FROM big WHERE n = 7')).label
  let iterated = 0
  let iterSum = 0
  for await (const row of db.iterate('SELECT n FROM big', [], { pageRows: 4_096 })) {
    iterated++
    iterSum += row.n
  }
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
  return {
    rows,
    json,
    counts,
    inTransaction,
    large: largeOk ? LARGE : large.length,
    largeJson: largeJson.length,
    iterated,
    iterSum,
    functionSum,
    aggregate,
    written,
    plainHeader,
    wrongKey,
    reopened,
  }
}
