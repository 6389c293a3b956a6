// Seeded data generation: one base database file, copied for every (library, lane) child.
// Run under Node 24 (it uses better-sqlite3 13): node bench/data.mjs <path>

import { rmSync } from 'node:fs'
import { createRequire } from 'node:module'

export const NARROW_ROWS = 100_000 // table t: lanes select, bytes, point, batch, stall, scaling
export const WIDE_ROWS = 1_000 // table w (20 columns) and the other shape tables
export const SHAPE_ROWS = 1_000 // text_heavy, numeric, nullable
export const CHAT = { users: 2_000, conversations: 500, messages: 50_000, minPerConversation: 20 }
export const FEED_POSTS = 20_000

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

// Zipf-distributed index in 0..n-1 (weight of rank k ∝ 1 / (k+1)^s): a few conversations get
// most messages, as in a real chat app.
export function zipf(rand, n, s = 1.1) {
  const cdf = new Float64Array(n)
  let sum = 0
  for (let k = 0; k < n; k++) cdf[k] = sum += 1 / (k + 1) ** s
  return () => {
    const x = rand() * sum
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cdf[mid] < x) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

// Schema shapes (lane shapes), 1,000 rows each besides t (narrow) and w (wide).
const SHAPES = {
  text_heavy: {
    columns: ['id INTEGER PRIMARY KEY', 'a TEXT', 'b TEXT', 'c TEXT', 'd TEXT', 'e TEXT'],
    row: (rand, id) => [id, ...Array.from({ length: 5 }, () => text(rand, 20, 200))],
  },
  numeric: {
    columns: [
      'id INTEGER PRIMARY KEY',
      ...[1, 2, 3, 4, 5].map((i) => `i${i} INTEGER`),
      ...[1, 2, 3, 4, 5].map((i) => `r${i} REAL`),
    ],
    row: (rand, id) => [
      id,
      ...Array.from({ length: 5 }, (_, i) => Math.floor(rand() * 10 ** (3 + 2 * i))),
      ...Array.from({ length: 5 }, () => rand() * 1e6 - 5e5),
    ],
  },
  nullable: {
    columns: [
      'id INTEGER PRIMARY KEY',
      'i1 INTEGER',
      'i2 INTEGER',
      'i3 INTEGER',
      'i4 INTEGER',
      't1 TEXT',
      't2 TEXT',
      't3 TEXT',
      't4 TEXT',
      'r1 REAL',
      'r2 REAL',
    ],
    row(rand, id) {
      const half = (v) => (rand() < 0.5 ? null : v)
      return [
        id,
        ...[1, 2, 3, 4].map(() => half(Math.floor(rand() * 1e6))),
        ...[1, 2, 3, 4].map(() => half(word(rand, 4, 30))),
        half(rand() * 100),
        half(rand() * 100),
      ]
    },
  },
}
export const SHAPE_TABLES = Object.keys(SHAPES)

function generateChat(db, rand) {
  db.exec(`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, last_seen INTEGER NOT NULL);
    CREATE TABLE conversations (id INTEGER PRIMARY KEY, title TEXT NOT NULL, created_at INTEGER NOT NULL);
    CREATE TABLE messages (id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, user_id INTEGER NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL);
    CREATE INDEX messages_by_conversation ON messages (conversation_id, id)`)
  const insU = db.prepare('INSERT INTO users VALUES (?, ?, ?, ?)')
  const insC = db.prepare('INSERT INTO conversations VALUES (?, ?, ?)')
  const insM = db.prepare('INSERT INTO messages VALUES (?, ?, ?, ?, ?)')
  for (let id = 1; id <= CHAT.users; id++)
    insU.run(id, word(rand, 4, 12), `${word(rand, 4, 10)}@example.com`, 1_700_000_000 + id)
  for (let id = 1; id <= CHAT.conversations; id++) insC.run(id, text(rand, 5, 40), 1_700_000_000 + id)
  // Every conversation gets at least minPerConversation messages (so "last 20" always returns
  // 20 rows); the rest are Zipf-distributed over conversations.
  const pick = zipf(rand, CHAT.conversations)
  for (let id = 1; id <= CHAT.messages; id++) {
    const conv = id <= CHAT.conversations * CHAT.minPerConversation ? 1 + ((id - 1) % CHAT.conversations) : 1 + pick()
    insM.run(id, conv, 1 + Math.floor(rand() * CHAT.users), text(rand, 5, 160), 1_700_000_000 + id)
  }
}

function generateFeed(db, rand) {
  db.exec(
    `CREATE TABLE posts (id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL, likes INTEGER NOT NULL)`,
  )
  const ins = db.prepare('INSERT INTO posts VALUES (?, ?, ?, ?, ?)')
  for (let id = 1; id <= FEED_POSTS; id++)
    ins.run(id, 1 + Math.floor(rand() * CHAT.users), text(rand, 40, 280), 1_700_000_000 + id, 0)
}

export function generate(path) {
  const require = createRequire(import.meta.url)
  const Database = require('better-sqlite3')
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
    for (const [name, shape] of Object.entries(SHAPES)) {
      db.exec(`CREATE TABLE ${name} (${shape.columns.join(', ')})`)
      const ins = db.prepare(`INSERT INTO ${name} VALUES (${shape.columns.map(() => '?').join(', ')})`)
      for (let id = 1; id <= SHAPE_ROWS; id++) ins.run(shape.row(rand, id))
    }
    generateChat(db, rand)
    generateFeed(db, rand)
  })()
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close() // last connection: WAL checkpointed and removed; the file stays in WAL mode
}

if (import.meta.url === `file://${process.argv[1]}`) generate(process.argv[2])
