// Power-loss workload (test/power-loss.test.mjs), run with the shim preloaded (shim.c). It opens
// <dir>/db, creates the schema and runs a seeded random mix of transactions, each inserting a
// known set of rows, through single executes, write groups, transaction bodies and executeBatch,
// with checkpoints and (encrypted) rekeys between them. Around each call it writes a line to
// <dir>/acks through fs.writeSync, which the shim logs too: the issue of each call, and its
// acknowledgement once its promise resolved, ordered exactly against the engine's file calls.
//   I <txn> <rows>  a transaction issued      A <txn>  acknowledged
//   K <i>           rekey to key i issued     R <i>    acknowledged
//   S               schema acknowledged       E        close() resolved
// argv[2]: the directory; argv[3]: JSON { seed, ops, encrypted, synchronous, ackEarly }. Prints
// diagnostics()' inline and groupCommit counters at the end.
// ackEarly writes each acknowledgement before issuing the call (the must-fail check).
import fs from 'node:fs'
import path from 'node:path'
import { Database } from '../../dist/esm/index.mjs'
import { keyFor, prng, rowsFor } from './workload.mjs'

const dir = process.argv[2]
const config = JSON.parse(process.argv[3])
const rand = prng(config.seed)
const pick = (n) => Math.floor(rand() * n)
const acks = fs.openSync(path.join(dir, 'acks'), 'w')
const mark = (line) => fs.writeSync(acks, `${line}\n`)

/** The one place the durability setting is applied: the open option `synchronous` ('normal' |
 * 'full'); 'off' is no value of it (the must-fail check), so that one is the writer's PRAGMA.
 * Nothing sets it again after a rekey: a setting the rekey dropped is what the test would see. */
async function open(file, options) {
  if (config.synchronous !== 'off') return Database.open(file, { ...options, synchronous: config.synchronous })
  const db = await Database.open(file, options)
  await db.execute('PRAGMA synchronous = OFF')
  return db
}

let rekeys = 0
const db = await open(path.join(dir, 'db'), config.encrypted ? { encryptionKey: keyFor(config.seed, 0) } : {})
await db.execute(`CREATE TABLE t (id INTEGER PRIMARY KEY, txn INTEGER NOT NULL, k INTEGER NOT NULL,
                                  v INTEGER NOT NULL, pad BLOB);
                  CREATE INDEX t_txn ON t (txn)`)
mark('S')

const INSERT = 'INSERT INTO t (txn, k, v, pad) VALUES (?, ?, ?, ?)'
const pad = () => {
  const b = Buffer.alloc(rand() < 0.2 ? 3000 + pick(5000) : pick(600))
  for (let i = 0; i < b.length; i++) b[i] = pick(256)
  return b
}
const row = (txn, k) => [txn, k, txn * 1000 + k, pad()]

/** Runs `call` for transaction `txn` of `n` rows between its issue and acknowledgement marks. */
function tracked(txn, n, call) {
  mark(`I ${txn} ${n}`)
  if (config.ackEarly) mark(`A ${txn}`)
  return call().then(() => {
    if (!config.ackEarly) mark(`A ${txn}`)
  })
}

let txn = 0
for (let op = 0; op < config.ops; op++) {
  const r = rand()
  if (r < 0.25) {
    // one statement: one row (may run on the JS thread) or several in one VALUES list
    const id = ++txn
    const n = rowsFor(id)
    const rows = Array.from({ length: n }, (_, k) => row(id, k))
    await tracked(id, n, () =>
      db.execute(
        `${INSERT.slice(0, INSERT.indexOf('VALUES'))}VALUES ${rows.map(() => '(?, ?, ?, ?)').join(', ')}`,
        rows.flat(),
      ),
    )
  } else if (r < 0.4) {
    // a write group: single-row writes issued together, each its own transaction
    const pending = []
    for (let i = 2 + pick(4); i > 0; i--) {
      const id = ++txn
      pending.push(tracked(id, 1, () => db.execute(INSERT, row(id, 0))))
    }
    await Promise.all(pending)
  } else if (r < 0.6) {
    const id = ++txn
    const n = rowsFor(id)
    await tracked(id, n, () =>
      db.transaction(async (tx) => {
        const half = Math.ceil(n / 2)
        for (let k = 0; k < half; k++) await tx.execute(INSERT, row(id, k))
        if (n > half)
          await tx.executeBatch(
            INSERT,
            Array.from({ length: n - half }, (_, i) => row(id, half + i)),
          )
      }),
    )
  } else if (r < 0.8) {
    const id = ++txn
    const n = rowsFor(id)
    await tracked(id, n, () =>
      db.executeBatch(
        INSERT,
        Array.from({ length: n }, (_, k) => row(id, k)),
      ),
    )
  } else if (r < 0.92 || !config.encrypted) {
    const mode = ['PASSIVE', 'FULL', 'RESTART', 'TRUNCATE'][pick(4)]
    await db.execute(`PRAGMA wal_checkpoint(${mode})`)
  } else {
    const i = ++rekeys
    mark(`K ${i}`)
    await db.rekey(keyFor(config.seed, i))
    mark(`R ${i}`)
  }
}
// where the writes ran, for the test to show the log covers each path (stdout is not logged)
const d = await db.diagnostics()
console.log(JSON.stringify({ inline: d.inline, groupCommit: d.groupCommit }))
await db.close()
mark('E')
