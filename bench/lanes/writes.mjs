// Write lanes. Each writes into its own table, created empty here. Before every sample
// (outside timing) the table is emptied and the WAL checkpointed, so every sample of every
// library starts from the same state and inserts the same rows (explicit ids). After each
// sample (untimed) the table's row count is checked against what the lane declares; after
// measuring, one more sample runs and the check is the row count + a hash of the content
// (+ what that sample returned).
import { narrowRow, rng, wideColumns, wideRow } from '../data.mjs'
import { measure } from '../measure.mjs'
import { fmtN, hashRows, makeCase } from './common.mjs'

export const SMALL_WRITES = 100 // insert-concurrent, insert-sequential: inserts per sample
export const TX_PER_SAMPLE = 100 // tx-interactive, savepoints: transactions per sample, one after another
const SAVEPOINT_LEVELS = 5 // savepoints: BEGIN + 4 nested SAVEPOINTs, one row inserted at each level
const NARROW_COLUMNS = 'id INTEGER PRIMARY KEY, name TEXT, value REAL'
export const INSERT_T = 'INSERT INTO write_t (id, name, value) VALUES (?, ?, ?)'

// expect: per-sample {ops, rows} where rows = rows in the table after the sample (and `read`
// for lanes that also return rows). setup() prepares statements and returns the timed call.
// gaps: passed to measure() (lanes/interleaved.mjs).
export async function writeLane(
  d,
  cfg,
  { id, title, table, columns = NARROW_COLUMNS, per, expect, setup, returns = false, gaps },
) {
  const u = d.uncounted
  await u.exec(`DROP TABLE IF EXISTS ${table}; CREATE TABLE ${table} (${columns})`)
  const reset = () => u.exec(`DELETE FROM ${table}; PRAGMA wal_checkpoint(PASSIVE)`)
  // all()[0], not get(): sqlite3 leaves a get() statement un-reset, which keeps the table locked
  const countStmt = await u.prepare(`SELECT count(*) AS c FROM ${table}`)
  const count = async (out) => ({
    rows: (await countStmt.all([]))[0].c,
    ...(returns ? { read: out.filter(Boolean).length } : {}),
  })
  const op = await setup()
  const m = await measure(d, op, cfg, { reset, expect, count, gaps })
  await reset()
  const out = await op()
  const rows = await (await u.prepare(`SELECT * FROM ${table} ORDER BY id`)).all([])
  const check = `${rows.length} rows ${hashRows(rows)}${returns ? ` returned ${hashRows(out)}` : ''}`
  return makeCase('writes', id, title, check, m, { perSample: per })
}

export const narrowRows = (n, seed) => {
  const rand = rng(seed)
  return Array.from({ length: n }, (_, i) => narrowRow(rand, i + 1))
}

// Batch inserts in one transaction, 100 / 1,000 / 10,000 rows: resqlite executeBatch;
// better-sqlite3 and libsql a loop in db.transaction(); node:sqlite BEGIN/loop/COMMIT; sqlite3
// BEGIN, every run issued at once, COMMIT; PowerSync executeBatch.
async function batchInsert(d, cfg) {
  const cases = []
  for (const n of [100, 1_000, 10_000]) {
    cases.push(
      await writeLane(d, cfg, {
        id: `batch-insert.${n}`,
        per: [n, 'rows'],
        expect: { ops: n, rows: n },
        title: `batch insert ${fmtN(n)} rows × 3 (one transaction)`,
        table: 'write_t',
        setup: async () => {
          const ins = await d.prepare(INSERT_T)
          const rows = narrowRows(n, 21)
          return () => ins.runBatch(rows)
        },
      }),
    )
  }
  return cases
}

const BATCH_WIDE = 10_000
const batchInsertWide = async (d, cfg) => [
  await writeLane(d, cfg, {
    id: 'batch-insert-wide',
    per: [BATCH_WIDE, 'rows'],
    expect: { ops: BATCH_WIDE, rows: BATCH_WIDE },
    title: `batch insert ${fmtN(BATCH_WIDE)} rows × 20 (one transaction)`,
    table: 'write_w',
    columns: wideColumns().join(', '),
    setup: async () => {
      const ins = await d.prepare(`INSERT INTO write_w VALUES (${Array(20).fill('?').join(', ')})`)
      const rand = rng(22)
      const rows = Array.from({ length: BATCH_WIDE }, (_, i) => wideRow(rand, i + 1))
      return () => ins.runBatch(rows)
    },
  }),
]

// 100 single-row inserts, each its own (autocommit) transaction: a loop in sync libraries;
// in async ones issued at once (concurrent) or each awaited before the next (sequential).
const singleInserts = (id, seed, asyncLabel, runAsync) => async (d, cfg) => [
  await writeLane(d, cfg, {
    id,
    per: [SMALL_WRITES, 'rows'],
    expect: { ops: SMALL_WRITES, rows: SMALL_WRITES },
    title: `${SMALL_WRITES} single inserts (${d.sync ? 'loop' : asyncLabel})`,
    table: 'write_t',
    setup: async () => {
      const ins = await d.prepare(INSERT_T)
      const rows = narrowRows(SMALL_WRITES, seed)
      return d.sync
        ? () => {
            for (const r of rows) ins.run(r)
          }
        : () => runAsync(ins, rows)
    },
  }),
]

const insertConcurrent = singleInserts('insert-concurrent', 23, 'concurrent', async (ins, rows) => {
  await Promise.all(rows.map((r) => ins.run(r)))
})
const insertSequential = singleInserts('insert-sequential', 24, 'each awaited', async (ins, rows) => {
  for (const r of rows) await ins.run(r)
})

/** tx-interactive's sample, for its lane and the interleaved one: 100 transactions one after
 * another, each inserting rows[2k] and rows[2k + 1] and selecting the first back; `between`
 * (the interleaved lane's work) runs after each. */
export async function interactiveTransactions(d, between) {
  const ins = await d.prepare(INSERT_T)
  const sel = await d.prepare('SELECT * FROM write_t WHERE id = ?')
  const rows = narrowRows(2 * TX_PER_SAMPLE, 25)
  let k = 0 // the transaction being run: it inserts rows[2k] and rows[2k + 1]
  const txn = d.transaction(
    d.sync
      ? (tx) => {
          tx.run(ins, rows[2 * k])
          tx.run(ins, rows[2 * k + 1])
          return tx.get(sel, [rows[2 * k][0]])
        }
      : async (tx) => {
          await tx.run(ins, rows[2 * k])
          await tx.run(ins, rows[2 * k + 1])
          return tx.get(sel, [rows[2 * k][0]])
        },
  )
  return d.sync
    ? () => {
        const out = []
        for (k = 0; k < TX_PER_SAMPLE; k++) {
          out.push(txn())
          if (between) between()
        }
        return out
      }
    : async () => {
        const out = []
        for (k = 0; k < TX_PER_SAMPLE; k++) {
          out.push(await txn())
          if (between) between()
        }
        return out
      }
}

// One sample = 100 transactions one after another, each: BEGIN, 2 inserts, select the first
// inserted row back (read-your-writes), COMMIT. Returns the 100 selected rows.
const txInteractive = async (d, cfg) => [
  await writeLane(d, cfg, {
    id: 'tx-interactive',
    per: [TX_PER_SAMPLE, 'tx'],
    expect: { ops: 3 * TX_PER_SAMPLE, rows: 2 * TX_PER_SAMPLE, read: TX_PER_SAMPLE },
    title: `${TX_PER_SAMPLE} transactions: 2 inserts + 1 select`,
    table: 'write_t',
    returns: true,
    setup: () => interactiveTransactions(d),
  }),
]

// One sample = 100 transactions one after another, each nested 5 levels deep (BEGIN, then a
// SAVEPOINT per inner level), every level inserting one row; everything is committed.
const savepoints = async (d, cfg) => [
  await writeLane(d, cfg, {
    id: 'savepoints',
    per: [TX_PER_SAMPLE, 'tx'],
    expect: { ops: SAVEPOINT_LEVELS * TX_PER_SAMPLE, rows: SAVEPOINT_LEVELS * TX_PER_SAMPLE },
    title: `${TX_PER_SAMPLE} transactions, savepoints ${SAVEPOINT_LEVELS} levels deep`,
    table: 'write_t',
    setup: async () => {
      const ins = await d.prepare(INSERT_T)
      const rows = narrowRows(SAVEPOINT_LEVELS * TX_PER_SAMPLE, 26)
      let base = 0 // the transaction being run inserts rows[base .. base + 4]
      let txn // built innermost first: level L inserts rows[base + L - 1], then runs level L + 1
      for (let level = SAVEPOINT_LEVELS; level >= 1; level--) {
        const inner = txn
        const i = level - 1
        txn = d.transaction(
          d.sync
            ? (tx) => {
                tx.run(ins, rows[base + i])
                inner?.(tx)
              }
            : async (tx) => {
                await tx.run(ins, rows[base + i])
                if (inner) await inner(tx)
              },
        )
      }
      return d.sync
        ? () => {
            for (let t = 0; t < TX_PER_SAMPLE; t++) {
              base = t * SAVEPOINT_LEVELS
              txn()
            }
          }
        : async () => {
            for (let t = 0; t < TX_PER_SAMPLE; t++) {
              base = t * SAVEPOINT_LEVELS
              await txn()
            }
          }
    },
  }),
]

export const WRITE_LANES = {
  'batch-insert': batchInsert,
  'batch-insert-wide': batchInsertWide,
  'insert-concurrent': insertConcurrent,
  'insert-sequential': insertSequential,
  'tx-interactive': txInteractive,
  savepoints,
}
