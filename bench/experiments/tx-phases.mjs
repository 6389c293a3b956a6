// Where an interactive transaction's time goes, phase by phase (experiments/060): the suite's
// narrow-tx-interactive shape (2 inserts and a select back), 100 transactions after each reset
// (DELETE and a PASSIVE checkpoint, as the lane's), the medians of each phase of the first
// transactions after a reset:
//
//   node bench/experiments/tx-phases.mjs <resqlite root | better-sqlite3> [--samples=400]
//
// Phases: begin (the call to the body's first line), the two inserts, the select, commit (the
// body's end to the transaction's settling). better-sqlite3 runs its own `db.transaction(fn)`.
import { mkdtempSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const args = process.argv.slice(2)
const flag = (name, fallback) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback
const lib = args.find((a) => !a.startsWith('--'))
const samples = Number(flag('samples', '400'))
const SHOWN = 6 // the first transactions after a reset, each on a line
const WARMUP = 50 // samples not counted
const dir = mkdtempSync(join(tmpdir(), 'tx-phases-'))
const TABLE = 'CREATE TABLE narrow_w (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER)'
const now = () => performance.now()

/** One transaction of the lane, its phases' end times pushed to `t`; and the reset. */
async function resqlite(root) {
  const { Database } = await import(pathToFileURL(join(resolve(root), 'dist/esm/index.mjs')).href)
  const db = await Database.open(join(dir, 'r.db'))
  await db.execute(TABLE)
  const ins = await db.prepare('INSERT INTO narrow_w (id, a, b) VALUES (?, ?, ?)')
  const sel = await db.prepare('SELECT * FROM narrow_w WHERE id = ?')
  return {
    tx: (w, t) =>
      db.transaction(async () => {
        t.push(now())
        await ins.execute([2 * w + 1, w, 1])
        t.push(now())
        await ins.execute([2 * w + 2, w, 2])
        t.push(now())
        await sel.selectOne([2 * w + 1])
        t.push(now())
      }),
    reset: () => db.execute('DELETE FROM narrow_w; PRAGMA wal_checkpoint(PASSIVE)'),
    after: async () => JSON.stringify((await db.diagnostics()).inline),
  }
}

function betterSqlite3() {
  const Database = createRequire(import.meta.url)('better-sqlite3')
  const db = new Database(join(dir, 'b.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec(TABLE)
  const ins = db.prepare('INSERT INTO narrow_w (id, a, b) VALUES (?, ?, ?)')
  const sel = db.prepare('SELECT * FROM narrow_w WHERE id = ?')
  const tx = db.transaction((w, t) => {
    t.push(now())
    ins.run(2 * w + 1, w, 1)
    t.push(now())
    ins.run(2 * w + 2, w, 2)
    t.push(now())
    sel.get(2 * w + 1)
    t.push(now())
  })
  return {
    tx: async (w, t) => tx(w, t),
    reset: async () => {
      db.exec('DELETE FROM narrow_w')
      db.pragma('wal_checkpoint(PASSIVE)')
    },
    after: async () => '',
  }
}

const side = lib === 'better-sqlite3' ? betterSqlite3() : await resqlite(lib)
const PHASES = ['begin', 'insert', 'insert', 'select', 'commit']
const times = Array.from({ length: SHOWN }, () => PHASES.map(() => []))
const whole = []
let w = 0
for (let s = 0; s < samples; s++) {
  await side.reset()
  const t0 = now()
  for (let k = 0; k < 100; k++) {
    w++
    const t = [now()]
    await side.tx(w, t)
    t.push(now())
    if (k < SHOWN && s >= WARMUP) for (let p = 1; p < t.length; p++) times[k][p - 1].push((t[p] - t[p - 1]) * 1000)
  }
  if (s >= WARMUP) whole.push(now() - t0)
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
console.log(`${lib}: µs per phase, medians of ${samples - WARMUP} samples; transaction k after a reset`)
console.log(`k  ${PHASES.map((p) => p.padStart(7)).join('')}    total`)
for (let k = 0; k < SHOWN; k++) {
  const m = times[k].map(median)
  console.log(
    `${k}  ${m.map((x) => x.toFixed(1).padStart(7)).join('')}  ${m
      .reduce((a, b) => a + b)
      .toFixed(1)
      .padStart(7)}`,
  )
}
console.log(`100 transactions: ${median(whole).toFixed(3)} ms (median)`)
const after = await side.after()
if (after) console.log(`diagnostics().inline ${after}`)
