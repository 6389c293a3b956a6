// Focused A/B for the row decoder (experiments/001-row-decoder.md): the JS-thread cost of
// turning one engine result into row objects, shapes decoded from the same raw result.
// Run: <node> bench/experiments/decoder.mjs [rows…]   (prints ns per row, median of rounds)

import { mkdtempSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const { binding } = require('../../dist/cjs/native.js')
const { RowsResult } = require('../../dist/cjs/decode.js')
const Better = require('../node_modules/better-sqlite3')

const file = join(mkdtempSync(join(tmpdir(), 'resqlite-dec-')), 'd.db')
const seed = new Better(file)
seed.pragma('journal_mode = WAL')
seed.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value REAL)')
const ins = seed.prepare('INSERT INTO t (name, value) VALUES (?, ?)')
seed.transaction(() => {
  for (let i = 0; i < 10000; i++) ins.run(`name-${i}-${(i * 7919) % 1000}`, i * 1.25)
})()
seed.close()

// Raw completions straight from the engine.
const waiting = new Map()
const native = new binding.NativeDatabase(
  file,
  2,
  5000,
  false,
  false,
  (done) => {
    for (let i = 0; i < done.length; i += 4) waiting.get(done[i])?.(done.slice(i, i + 4)), waiting.delete(done[i])
  },
  1,
)
let id = 1
const call = (f) =>
  new Promise((r) => {
    waiting.set(++id, r)
    f(id)
  })
native.ref()
await new Promise((r) => waiting.set(1, r))
const empty = Buffer.alloc(0)
const raw = (kind, sql) => call((i) => native.read(i, kind, sql, empty, 0, false))

function generic(ab, text) {
  // B: one loop, properties added one by one (no generated shape).
  const r = new RowsResult(ab, text, false)
  const out = []
  const names = r.names
  const cols = names.length
  const cell = (k) => {
    const t = r.tags[k]
    if (t === 1) return r.f64[k]
    if (t === 2) {
      const s = r.u32[2 * k]
      return r.text.slice(s, s + r.u32[2 * k + 1])
    }
    return null
  }
  for (let row = 0, k = 0; row < r.rows; row++, k += cols) {
    const o = {}
    for (let c = 0; c < cols; c++) o[names[c]] = cell(k + c)
    out.push(o)
  }
  return out
}

const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1]
function time(fn, rounds) {
  for (let i = 0; i < 20; i++) fn() // warm up
  const xs = []
  for (let i = 0; i < rounds; i++) {
    const t = process.hrtime.bigint()
    fn()
    xs.push(Number(process.hrtime.bigint() - t))
  }
  return median(xs)
}

const db = new Better(file, { readonly: true })
for (const n of process.argv
  .slice(2)
  .map(Number)
  .concat(process.argv.length > 2 ? [] : [1000, 10000])) {
  const sql = `SELECT * FROM t LIMIT ${n}`
  const [, , ab, text] = await raw(0, sql)
  const [, , json] = await raw(2, sql)
  const stmt = db.prepare(sql)
  const rounds = n >= 10000 ? 60 : 300
  const results = {
    'A generated literal (RowsResult.decode)': time(() => new RowsResult(ab, text, false).decode(), rounds),
    'B generic property loop': time(() => generic(ab, text), rounds),
    'C JSON.parse(selectBytes)': time(() => JSON.parse(json.toString('utf8')), rounds),
    'better-sqlite3 .all() (whole query)': time(() => stmt.all(), rounds),
  }
  console.log(
    `\n${n} rows (id INTEGER, name TEXT, value REAL), node ${process.version}, µs per call (median of ${rounds}):`,
  )
  for (const [k, v] of Object.entries(results)) console.log(`  ${k.padEnd(42)} ${(v / 1000).toFixed(1).padStart(9)}`)
}
db.close()
await call((i) => native.close(i))
native.release()
