// Small statements on a narrow table (issue 31): the shape where each call's own cost shows
// most. `narrow (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER)`, 10,000 rows of small integers,
// made by the lane. Statements are prepared once, in each library's fastest form: resqlite's
// `db.prepare()` Statement (the driver's `prepare(sql, { statement: true })`), better-sqlite3's
// and node:sqlite's `stmt.get(id)` with the parameters as arguments. Each lane's ratio against
// better-sqlite3 is a target (targets.mjs), so a loss shows as a failed target.
import { rng } from '../data.mjs'
import { measure } from '../measure.mjs'
import { fmtN, hashRows, makeCase } from './common.mjs'

const ROWS = 10_000
const POINT_READS = 1_000 // narrow-point-awaited: awaited point selects per sample
const TX_COUNT = 10 // narrow-tx-reads: transactions per sample…
const TX_READS = 100 // …of this many point reads each
const TX_INTERACTIVE = 100 // narrow-tx-interactive: transactions per sample (2 inserts + 1 select)
const NARROW = 'id INTEGER PRIMARY KEY, a INTEGER, b INTEGER'
const POINT = 'SELECT * FROM narrow WHERE id = ?'

/** The lanes' read table, made once per child process: a batch insert, which every library
 * runs (Turso 0.7.2 has no recursive CTE to generate the rows in SQL). */
async function narrowTable(d) {
  const u = d.uncounted
  await u.exec(`DROP TABLE IF EXISTS narrow; CREATE TABLE narrow (${NARROW})`)
  const rows = Array.from({ length: ROWS }, (_, k) => [k + 1, ((k + 1) * 7) % 1000, (k + 1) % 13])
  await (await u.prepare('INSERT INTO narrow VALUES (?, ?, ?)')).runBatch(rows)
  await u.exec('PRAGMA wal_checkpoint(PASSIVE)')
}

/** Seeded random ids of the read table that move on with every call. */
function ids(seed) {
  const rand = rng(seed)
  const all = Array.from({ length: 100_000 }, () => 1 + Math.floor(rand() * ROWS))
  let k = 0
  return { next: () => all[k++ % all.length], first: all.slice(0, 100) }
}

// 1,000 point selects one at a time (sync: a loop; async: each awaited before the next).
async function pointAwaited(d, cfg) {
  await narrowTable(d)
  const q = await d.prepare(POINT, { statement: true })
  const { next, first } = ids(31)
  const check = []
  for (const id of first) check.push(await q.get([id]))
  const op = d.sync
    ? () => {
        let found = 0
        for (let i = 0; i < POINT_READS; i++) if (q.get([next()])) found++
        return found
      }
    : async () => {
        let found = 0
        for (let i = 0; i < POINT_READS; i++) if (await q.get([next()])) found++
        return found
      }
  const m = await measure(d, op, cfg, {
    expect: { ops: POINT_READS, rows: POINT_READS },
    count: (found) => ({ rows: found }),
  })
  return [
    makeCase(
      'narrow',
      'narrow-point-awaited',
      `narrow table: ${fmtN(POINT_READS)} point selects one at a time through a prepared statement`,
      hashRows(check),
      m,
      { perSample: [POINT_READS, 'q'] },
    ),
  ]
}

// 10 transactions one after another, each 100 point reads one at a time.
async function txReads(d, cfg) {
  await narrowTable(d)
  const q = await d.prepare(POINT, { statement: true })
  const { next, first } = ids(32)
  const txn = d.transaction(
    d.sync
      ? (tx) => {
          const out = []
          for (let i = 0; i < TX_READS; i++) out.push(tx.get(q, [next()]))
          return out
        }
      : async (tx) => {
          const out = []
          for (let i = 0; i < TX_READS; i++) out.push(await tx.get(q, [next()]))
          return out
        },
  )
  const op = d.sync
    ? () => {
        let found = 0
        for (let t = 0; t < TX_COUNT; t++) found += txn().filter(Boolean).length
        return found
      }
    : async () => {
        let found = 0
        for (let t = 0; t < TX_COUNT; t++) found += (await txn()).filter(Boolean).length
        return found
      }
  const check = []
  for (const id of first) check.push(await q.get([id]))
  const m = await measure(d, op, cfg, {
    expect: { ops: TX_COUNT * TX_READS, rows: TX_COUNT * TX_READS },
    count: (found) => ({ rows: found }),
  })
  return [
    makeCase(
      'narrow',
      'narrow-tx-reads',
      `narrow table: ${TX_COUNT} transactions of ${TX_READS} point reads`,
      hashRows(check),
      m,
      { perSample: [TX_COUNT, 'tx'] },
    ),
  ]
}

// 100 transactions one after another, each: 2 inserts, then select the first row back.
async function txInteractive(d, cfg) {
  const u = d.uncounted
  await u.exec(`DROP TABLE IF EXISTS narrow_w; CREATE TABLE narrow_w (${NARROW})`)
  const reset = () => u.exec('DELETE FROM narrow_w; PRAGMA wal_checkpoint(PASSIVE)')
  const ins = await d.prepare('INSERT INTO narrow_w (id, a, b) VALUES (?, ?, ?)', { statement: true })
  const sel = await d.prepare('SELECT * FROM narrow_w WHERE id = ?', { statement: true })
  const countStmt = await u.prepare('SELECT count(*) AS c FROM narrow_w')
  let k = 0 // the transaction being run inserts ids 2k + 1 and 2k + 2
  const txn = d.transaction(
    d.sync
      ? (tx) => {
          tx.run(ins, [2 * k + 1, k, 1])
          tx.run(ins, [2 * k + 2, k, 2])
          return tx.get(sel, [2 * k + 1])
        }
      : async (tx) => {
          await tx.run(ins, [2 * k + 1, k, 1])
          await tx.run(ins, [2 * k + 2, k, 2])
          return tx.get(sel, [2 * k + 1])
        },
  )
  const op = d.sync
    ? () => {
        const out = []
        for (k = 0; k < TX_INTERACTIVE; k++) out.push(txn())
        return out
      }
    : async () => {
        const out = []
        for (k = 0; k < TX_INTERACTIVE; k++) out.push(await txn())
        return out
      }
  const m = await measure(d, op, cfg, {
    reset,
    expect: { ops: 3 * TX_INTERACTIVE, rows: 2 * TX_INTERACTIVE, read: TX_INTERACTIVE },
    count: async (out) => ({ rows: (await countStmt.all([]))[0].c, read: out.filter(Boolean).length }),
  })
  await reset()
  const out = await op()
  return [
    makeCase(
      'narrow',
      'narrow-tx-interactive',
      `narrow table: ${TX_INTERACTIVE} transactions of 2 inserts + 1 select`,
      hashRows(out),
      m,
      { perSample: [TX_INTERACTIVE, 'tx'] },
    ),
  ]
}

export const STATEMENT_LANES = {
  'narrow-point-awaited': pointAwaited,
  'narrow-tx-reads': txReads,
  'narrow-tx-interactive': txInteractive,
}
