// How much of the chat lane's synchronous time is its 60 commits? better-sqlite3 runs the chat
// ops (a) as the lane does, one autocommit per write, (b) with every write in one transaction,
// (c) in transactions of 8 calls, (d) reads only, one autocommit each or all in one transaction
// (experiments/050), (e) writes only; interleaved rounds. Usage (Node 24):
//   node bench/experiments/chat-commits.mjs <db>
import { copyFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { generate } from '../data.mjs'
import { CHAT_RESET, CHAT_SQL, chatOps } from '../lanes/scenarios.mjs'

const require = createRequire(import.meta.url)
const Database = require('better-sqlite3')
const base = process.argv[2]
if (!process.env.NOGEN) generate(base)
const file = `${base}.work`
copyFileSync(base, file)
const db = new Database(file)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
const ops = chatOps().map((o) => [o.kind, o.params])
const s = Object.fromEntries(Object.entries(CHAT_SQL).map(([kind, sql]) => [kind, db.prepare(sql)]))
const reset = () => db.exec(CHAT_RESET)
const run = (o) =>
  o[0] === 'user' ? s.user.get(...o[1]) : o[0] === 'last20' ? s.last20.all(...o[1]) : s[o[0]].run(...o[1])
const variants = {
  autocommit: () => {
    for (const o of ops) run(o)
  },
  oneTx: () => {
    db.exec('BEGIN')
    for (const o of ops) run(o)
    db.exec('COMMIT')
  },
  groups8: () => {
    for (let i = 0; i < ops.length; i += 8) {
      db.exec('BEGIN')
      for (const o of ops.slice(i, i + 8)) run(o)
      db.exec('COMMIT')
    }
  },
  readsOnly: () => {
    for (const o of ops) if (o[0] === 'user' || o[0] === 'last20') run(o)
  },
  readsOneTx: () => {
    db.exec('BEGIN')
    for (const o of ops) if (o[0] === 'user' || o[0] === 'last20') run(o)
    db.exec('COMMIT')
  },
  writesOnly: () => {
    for (const o of ops) if (!(o[0] === 'user' || o[0] === 'last20')) run(o)
  },
}
const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]))
for (let round = 0; round < 300; round++) {
  for (const [k, f] of Object.entries(variants)) {
    if (process.env.ONLY && k !== process.env.ONLY) continue
    reset()
    const t0 = process.hrtime.bigint()
    f()
    times[k].push(Number(process.hrtime.bigint() - t0) / 1e3)
  }
}
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1]
for (const [k, a] of Object.entries(times)) if (a.length > 0) console.log(k, med(a).toFixed(0), 'µs')
// Per kind of op, in the lane's order (autocommit), median over rounds of each kind's total.
const perKind = {}
const first = []
for (let round = 0; round < 200; round++) {
  reset()
  const sums = {}
  let firstWrite = true
  for (const o of ops) {
    const t0 = process.hrtime.bigint()
    run(o)
    const us = Number(process.hrtime.bigint() - t0) / 1e3
    if (firstWrite && (o[0] === 'insert' || o[0] === 'seen')) {
      first.push(us)
      firstWrite = false
      continue
    }
    sums[o[0]] = (sums[o[0]] ?? 0) + us
  }
  for (const [k, v] of Object.entries(sums)) {
    perKind[k] ??= []
    perKind[k].push(v)
  }
}
for (const [k, a] of Object.entries(perKind)) console.log('kind', k, med(a).toFixed(0), 'µs')
console.log('first write', med(first).toFixed(0), 'µs')
