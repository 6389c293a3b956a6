// Run by retention.test.mjs with --expose-gc: keeps one value from each of many large results,
// drops the rest, and prints, per path a result can take, the heap still in use after GC
// beyond what it was before (bytes, as JSON).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Database } from '../dist/esm/index.mjs'

const ROWS = 5_000
const RESULTS = 20
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-retention-'))
const db = await Database.open(path.join(dir, 'r.db'))
await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT, note TEXT)')
// ~2 KB bodies, one in three non-ASCII; every value distinct.
await db.execute(
  `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS})
   INSERT INTO t SELECT x, printf('%d-', x) || CASE x % 3 WHEN 0 THEN 'é' ELSE 'e' END || hex(randomblob(1000)), printf('%012d', x) FROM c`,
)

/** The heap in use once the event loop has turned: a read's last turn may leave its result
 * reachable from a callback still queued (a decode's or a slice's next turn) until then, which
 * is not keeping it. A value held beyond that shows here all the same. */
async function heap() {
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setTimeout(resolve, 10))
  globalThis.gc()
  globalThis.gc()
  return process.memoryUsage().heapUsed
}

/** Heap kept by the values `take(i)` returns for i < RESULTS, each checked against its id. */
async function kept(
  take,
  check = (v, i) => typeof v === 'string' && v.startsWith(`${1 + i * 7}-`) && v.length >= 2000,
) {
  await take(0) // warm up: row makers, inline caches
  const before = await heap()
  const values = []
  for (let i = 0; i < RESULTS; i++) values.push(await take(i))
  const after = await heap()
  values.forEach((v, i) => {
    if (!check(v, i)) throw new Error(`wrong value ${i}`)
  })
  return after - before
}

const id = (i) => 1 + i * 7
const out = {
  // A reader's result in one part, and in many (a large result crosses in parts).
  select: await kept(async (i) => (await db.select('SELECT * FROM t'))[id(i) - 1].body),
  parts: await kept(async (i) => {
    const rows = await db.select('SELECT a.* FROM t a, (SELECT 1 UNION ALL SELECT 2) ORDER BY a.id')
    return rows[2 * (id(i) - 1)].body
  }),
  // Short ASCII values (12 characters) are slices of one string per 4,096 cells, which V8
  // copies: 300 of them kept from each result must not keep those strings.
  short: await kept(
    async () => {
      const rows = await db.select('SELECT * FROM t')
      return Array.from({ length: 300 }, (_, j) => rows[j * 16].note)
    },
    (v) => v.length === 300 && v.every((s, j) => s === String(j * 16 + 1).padStart(12, '0')),
  ),
  // A small result read on the JS thread (inline), and a transaction's read on the writer's connection.
  inline: await kept(async (i) => (await db.selectOne('SELECT body FROM t WHERE id = ?', [id(i)])).body),
  transaction: await kept((i) => db.transaction(async (tx) => (await tx.select('SELECT * FROM t'))[id(i) - 1].body)),
  // A live query's rows.
  live: await kept(
    (i) =>
      new Promise((resolve, reject) => {
        const sub = db.stream('SELECT * FROM t').subscribe({
          next: (rows) => {
            sub.unsubscribe()
            resolve(rows[id(i) - 1].body)
          },
          error: reject,
        })
      }),
  ),
  // A select calling a JavaScript function: on the JS thread, a slice at a time.
  sliced: await (async () => {
    db.function('same', (v) => v)
    return kept(async (i) => (await db.select('SELECT id, same(body) AS body FROM t'))[id(i) - 1].body)
  })(),
}
await db.close()
fs.rmSync(dir, { recursive: true, force: true })
console.log(JSON.stringify(out))
