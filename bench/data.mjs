// Seeded data generation: one base database file, copied for every (library, lane) child.
// Run under Node 24 (it uses better-sqlite3 13): node bench/data.mjs <path>
import { createRequire } from 'node:module'
import { rmSync } from 'node:fs'

export const NARROW_ROWS = 100_000 // table t: lanes select, bytes, point, batch, stall
export const WIDE_ROWS = 1_000 // table w: lane wide

export function rng(seed) {
  // mulberry32
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz'
function word(rand, min, max) {
  const len = min + Math.floor(rand() * (max - min + 1))
  let s = ''
  for (let i = 0; i < len; i++) s += LETTERS[Math.floor(rand() * 26)]
  return s
}
// Mostly ASCII words; every 20th string carries non-ASCII text and characters JSON must escape.
function text(rand, min, max) {
  const s = word(rand, min, max)
  return rand() < 0.05 ? `${s} Müller "€" \\ ✓` : s
}

// One row of table t / table w (also used by the write lanes, for rows of the same shape).
export const narrowRow = (rand, id) => [id, text(rand, 6, 24), rand() * 10_000 - 5_000]
export function wideRow(rand, id) {
  const row = [id]
  for (let i = 0; i < 6; i++) row.push(Math.floor(rand() * 10 ** (2 + 2 * i)) - (i === 5 ? 2 ** 40 : 0))
  for (let i = 0; i < 7; i++) row.push(i === 6 && rand() < 0.1 ? null : text(rand, 4, 40))
  for (let i = 0; i < 6; i++) row.push(i === 0 ? Math.round(rand() * 100) / 4 : rand() * 10 ** i)
  return row
}

export function wideColumns() {
  const cols = ['id INTEGER PRIMARY KEY']
  for (let i = 1; i <= 6; i++) cols.push(`i${i} INTEGER`)
  for (let i = 1; i <= 7; i++) cols.push(`t${i} TEXT`)
  for (let i = 1; i <= 6; i++) cols.push(`r${i} REAL`)
  return cols // 20 columns
}

export function generate(path) {
  const require = createRequire(import.meta.url)
  const Database = require('better-sqlite3-13')
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true })
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value REAL)')
  db.exec(`CREATE TABLE w (${wideColumns().join(', ')})`)
  const rand = rng(42)
  const insT = db.prepare('INSERT INTO t (id, name, value) VALUES (?, ?, ?)')
  const insW = db.prepare(`INSERT INTO w VALUES (${Array(20).fill('?').join(', ')})`)
  db.transaction(() => {
    for (let id = 1; id <= NARROW_ROWS; id++) insT.run(narrowRow(rand, id))
    for (let id = 1; id <= WIDE_ROWS; id++) insW.run(wideRow(rand, id))
  })()
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close() // last connection: WAL checkpointed and removed; the file stays in WAL mode
}

if (import.meta.url === `file://${process.argv[1]}`) generate(process.argv[2])
