// Focused measurement for experiments/020: awaited single-row updates of a column no live
// query reads, with 50 live queries (`streams`) or none (`none`); N writes (default 20,000).
// Run under `valgrind --tool=callgrind` for instruction counts.
import { Database } from '../../dist/esm/index.mjs'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
const dir = mkdtempSync(join(tmpdir(), 'resqlite-cols-'))
const db = await Database.open(dir + '/a.db')
const cols = ['id INTEGER PRIMARY KEY']; for (let i = 1; i <= 6; i++) cols.push(`i${i} INTEGER`); for (let i = 1; i <= 7; i++) cols.push(`t${i} TEXT`); for (let i = 1; i <= 6; i++) cols.push(`r${i} REAL`)
await db.execute(`CREATE TABLE w (${cols.join(', ')})`)
await db.executeBatch('INSERT INTO w (id, i1, r6) VALUES (?, ?, ?)', Array.from({ length: 1000 }, (_, i) => [i + 1, i, i * 0.5]))
const streams = process.argv[2] === 'none' ? 0 : 50
const stops = []
for (let k = 0; k < streams; k++) stops.push(db.stream(`SELECT id, i1 FROM w WHERE id BETWEEN ${k * 20 + 1} AND ${k * 20 + 20}`).subscribe(() => {}))
await new Promise(r => setTimeout(r, 100))
const t0 = performance.now()
const N = Number(process.env.N ?? 20000)
for (let i = 0; i < N; i++) await db.execute('UPDATE w SET r6 = ? WHERE id = ?', [i, 1 + (i % 1000)])
console.log(process.argv[2], ((performance.now() - t0) / N * 1000).toFixed(1), 'µs/write')
for (const s of stops) s()
await db.close()
