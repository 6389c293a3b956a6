// Lane definitions, shared by every library. A driver (drivers/*.mjs) gives exec(sql),
// prepare(sql) → { all, get, bytes, run, runBatch } and transaction(body) → a reusable
// transaction function; sync drivers return values, async drivers return promises.
import { performance, monitorEventLoopDelay } from 'node:perf_hooks'
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { rng, NARROW_ROWS, narrowRow, wideRow, wideColumns } from './data.mjs'
import { summarize } from './stats.mjs'
import { LIVE_LANES } from './live-lanes.mjs'

const FULL = { warmupMs: 300, warmupIters: 3, budgetMs: 2500, minIters: 20, maxIters: 5000 }
const QUICK = { warmupMs: 20, warmupIters: 1, budgetMs: 100, minIters: 3, maxIters: 200, quick: true }

const POINT_BATCH = 2_000 // queries per point-lane sample
const IN_FLIGHT = 64
const RANGES_PER_BATCH = 100
const RANGE_ROWS = 500
const RANGE_TABLE = 50_000 // ranges are drawn from ids 1..50,000
const BATCH_ROWS = 10_000 // batch-insert, batch-insert-wide
const SMALL_WRITES = 100 // insert-concurrent, insert-sequential: inserts per sample
const TX_PER_SAMPLE = 100 // tx-interactive, savepoints: transactions per sample, one after another
const SAVEPOINT_LEVELS = 5 // savepoints: BEGIN + 4 nested SAVEPOINTs, one row inserted at each level

const hash = (data) => createHash('sha1').update(data).digest('hex').slice(0, 12)
const hashRows = (rows) => hash(JSON.stringify(rows))
const now = () => performance.now()

// Runs op repeatedly; returns per-call wall and JS-thread samples (ms). Sync: JS = wall.
// Async: JS = event-loop active time (ELU) over the call. stall: also record the longest
// event-loop delay around each call (monitorEventLoopDelay, 1 ms resolution, minus that 1 ms).
// reset: run before every call (warm-up too), outside timing.
async function measure(d, op, cfg, { stall = false, reset } = {}) {
  const t = now()
  for (let i = 0; i < cfg.warmupIters || now() - t < cfg.warmupMs; i++) {
    if (reset) await reset()
    d.sync ? op() : await op()
  }
  globalThis.gc?.()
  const wall = []
  const js = []
  const stalls = []
  const start = now()
  while (wall.length < cfg.maxIters && (wall.length < cfg.minIters || now() - start < cfg.budgetMs)) {
    if (reset) await reset()
    let h
    if (stall) {
      h = monitorEventLoopDelay({ resolution: 1 })
      h.enable()
      await sleep(3)
    }
    if (d.sync) {
      const t0 = now()
      op()
      const w = now() - t0
      wall.push(w)
      js.push(w)
    } else {
      const e0 = performance.eventLoopUtilization()
      const t0 = now()
      await op()
      wall.push(now() - t0)
      js.push(performance.eventLoopUtilization(e0).active)
    }
    if (stall) {
      await sleep(3)
      h.disable()
      stalls.push(Math.max(0, h.max / 1e6 - 1))
    }
  }
  const res = { n: wall.length, wall: summarize(wall), js: summarize(js) }
  if (stall) res.stall = summarize(stalls)
  return res
}

async function select(d, cfg) {
  const q = await d.prepare('SELECT * FROM t WHERE id <= ?')
  const cases = []
  for (const n of [10, 100, 1_000, 10_000]) {
    const check = hashRows(await q.all([n]))
    cases.push({ id: `select.${n}`, title: `select → rows, ${n.toLocaleString('en')}`, check, ...(await measure(d, () => q.all([n]), cfg)) })
  }
  return cases
}

async function wide(d, cfg) {
  const q = await d.prepare('SELECT * FROM w')
  const check = hashRows(await q.all([]))
  return [{ id: 'wide.1000', title: 'wide 20 cols, 1,000 rows', check, ...(await measure(d, () => q.all([]), cfg)) }]
}

async function bytes(d, cfg) {
  const q = await d.prepare('SELECT * FROM t WHERE id <= ?')
  const check = hash(await q.bytes([10_000]))
  return [{ id: 'bytes.10000', title: 'selectBytes / JSON bytes, 10,000', check, ...(await measure(d, () => q.bytes([10_000]), cfg)) }]
}

async function point(d, cfg) {
  const q = await d.prepare('SELECT * FROM t WHERE id = ?')
  const rand = rng(7)
  const ids = Array.from({ length: 100_000 }, () => 1 + Math.floor(rand() * NARROW_ROWS))
  const first = []
  for (let i = 0; i < 100; i++) first.push(await q.get([ids[i]]))
  let k = 0
  const next = () => ids[k++ % ids.length]
  const op = d.sync
    ? () => {
        for (let i = 0; i < POINT_BATCH; i++) q.get([next()])
      }
    : async () => {
        let issued = 0
        const worker = async () => {
          while (issued < POINT_BATCH) {
            issued++
            await q.get([next()])
          }
        }
        await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
      }
  const m = await measure(d, op, cfg)
  const qps = { median: (POINT_BATCH / m.wall.median) * 1000, p90: (POINT_BATCH / m.wall.p90) * 1000 }
  return [{ id: 'point', title: `point query, ${POINT_BATCH.toLocaleString('en')} per sample (${d.sync ? 'loop' : `${IN_FLIGHT} in flight`})`, check: hashRows(first), qps, ...m }]
}

async function batch(d, cfg) {
  const q = await d.prepare('SELECT * FROM t WHERE id BETWEEN ? AND ?')
  const rand = rng(11)
  const batches = Array.from({ length: 10 }, () =>
    Array.from({ length: RANGES_PER_BATCH }, () => {
      const lo = 1 + Math.floor(rand() * (RANGE_TABLE - RANGE_ROWS + 1))
      return [lo, lo + RANGE_ROWS - 1]
    }),
  )
  const check = hashRows(await Promise.all(batches[0].map((r) => q.all(r))))
  let b = 0
  const op = d.sync
    ? () => {
        for (const r of batches[b++ % batches.length]) q.all(r)
      }
    : () => Promise.all(batches[b++ % batches.length].map((r) => q.all(r)))
  return [{ id: 'batch', title: `${RANGES_PER_BATCH} queries × ${RANGE_ROWS} rows (${d.sync ? 'loop' : 'concurrent'})`, check, ...(await measure(d, op, cfg)) }]
}

async function stall(d, cfg) {
  const q = await d.prepare('SELECT * FROM t')
  const check = hashRows(await q.all([]))
  const c = { ...cfg, minIters: Math.min(cfg.minIters, 10) }
  return [{ id: 'stall', title: `longest stall, select ${NARROW_ROWS.toLocaleString('en')} rows`, check, ...(await measure(d, () => q.all([]), c, { stall: true })) }]
}

// ---- write lanes
// Each writes into its own table, created empty here. Before every sample (outside timing) the
// table is emptied and the WAL checkpointed, so every sample of every library starts from the
// same state and inserts the same rows (explicit ids). After measuring, one more sample runs
// and the check is the table's row count + a hash of its content (+ what that sample returned).
async function writeLane(d, cfg, { id, title, table, columns = 'id INTEGER PRIMARY KEY, name TEXT, value REAL', per, setup, returns = false }) {
  await d.exec(`DROP TABLE IF EXISTS ${table}; CREATE TABLE ${table} (${columns})`)
  const reset = () => d.exec(`DELETE FROM ${table}; PRAGMA wal_checkpoint(PASSIVE)`)
  const op = await setup() // prepares statements (the table exists now); returns the timed call
  const m = await measure(d, op, cfg, { reset })
  await reset()
  const out = await op()
  const rows = await (await d.prepare(`SELECT * FROM ${table} ORDER BY id`)).all([])
  const check = `${rows.length} rows ${hashRows(rows)}${returns ? ` returned ${hashRows(out)}` : ''}`
  const [count, unit] = per // e.g. [100, 'tx']: a rate in unit/s from the wall times
  const rate = { unit: `${unit}/s`, median: (count / m.wall.median) * 1000, p90: (count / m.wall.p90) * 1000 }
  return [{ id, title, check, rate, ...m }]
}

const narrowRows = (n, seed) => {
  const rand = rng(seed)
  return Array.from({ length: n }, (_, i) => narrowRow(rand, i + 1))
}
const INSERT_T = 'INSERT INTO write_t (id, name, value) VALUES (?, ?, ?)'

// resqlite executeBatch; better-sqlite3 a loop in db.transaction(); node:sqlite BEGIN/loop/COMMIT;
// sqlite3 BEGIN, every run issued at once, COMMIT.
const batchInsert = (d, cfg) =>
  writeLane(d, cfg, {
    id: 'batch-insert',
    per: [BATCH_ROWS, 'rows'],
    title: `batch insert ${BATCH_ROWS.toLocaleString('en')} rows × 3 (one transaction)`,
    table: 'write_t',
    setup: async () => {
      const ins = await d.prepare(INSERT_T)
      const rows = narrowRows(BATCH_ROWS, 21)
      return () => ins.runBatch(rows)
    },
  })

const batchInsertWide = (d, cfg) =>
  writeLane(d, cfg, {
    id: 'batch-insert-wide',
    per: [BATCH_ROWS, 'rows'],
    title: `batch insert ${BATCH_ROWS.toLocaleString('en')} rows × 20 (one transaction)`,
    table: 'write_w',
    columns: wideColumns().join(', '),
    setup: async () => {
      const ins = await d.prepare(`INSERT INTO write_w VALUES (${Array(20).fill('?').join(', ')})`)
      const rand = rng(22)
      const rows = Array.from({ length: BATCH_ROWS }, (_, i) => wideRow(rand, i + 1))
      return () => ins.runBatch(rows)
    },
  })

// 100 single-row inserts, each its own (autocommit) transaction: issued at once (async
// libraries, Promise.all) or in a loop (sync).
const insertConcurrent = (d, cfg) =>
  writeLane(d, cfg, {
    id: 'insert-concurrent',
    per: [SMALL_WRITES, 'rows'],
    title: `${SMALL_WRITES} single inserts (${d.sync ? 'loop' : 'concurrent'})`,
    table: 'write_t',
    setup: async () => {
      const ins = await d.prepare(INSERT_T)
      const rows = narrowRows(SMALL_WRITES, 23)
      return d.sync
        ? () => {
            for (const r of rows) ins.run(r)
          }
        : async () => {
            await Promise.all(rows.map((r) => ins.run(r)))
          }
    },
  })

// The same, each awaited before the next.
const insertSequential = (d, cfg) =>
  writeLane(d, cfg, {
    id: 'insert-sequential',
    per: [SMALL_WRITES, 'rows'],
    title: `${SMALL_WRITES} single inserts (${d.sync ? 'loop' : 'each awaited'})`,
    table: 'write_t',
    setup: async () => {
      const ins = await d.prepare(INSERT_T)
      const rows = narrowRows(SMALL_WRITES, 24)
      return d.sync
        ? () => {
            for (const r of rows) ins.run(r)
          }
        : async () => {
            for (const r of rows) await ins.run(r)
          }
    },
  })

// One sample = 100 transactions one after another, each: BEGIN, 2 inserts, select the first
// inserted row back (read-your-writes), COMMIT. Returns the 100 selected rows.
const txInteractive = (d, cfg) =>
  writeLane(d, cfg, {
    id: 'tx-interactive',
    per: [TX_PER_SAMPLE, 'tx'],
    title: `${TX_PER_SAMPLE} transactions: 2 inserts + 1 select`,
    table: 'write_t',
    returns: true,
    setup: async () => {
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
            for (k = 0; k < TX_PER_SAMPLE; k++) out.push(txn())
            return out
          }
        : async () => {
            const out = []
            for (k = 0; k < TX_PER_SAMPLE; k++) out.push(await txn())
            return out
          }
    },
  })

// One sample = 100 transactions one after another, each nested 5 levels deep (BEGIN, then a
// SAVEPOINT per inner level), every level inserting one row; everything is committed.
const savepoints = (d, cfg) =>
  writeLane(d, cfg, {
    id: 'savepoints',
    per: [TX_PER_SAMPLE, 'tx'],
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
  })

// Encryption (resqlite only; other libraries have no cases here): the same work on this
// plaintext database and on an encrypted copy (default cipher, chacha20), measured in
// alternation in one process so both see the same machine noise. Warm reads hit the page
// cache, which holds decrypted pages: the select pair shows what an encrypted database costs
// once its pages are cached; writes encrypt every page they commit.
const ENC_OPTIONS = { encryptionKey: 'bench passphrase' }

async function measurePair(d, ops, cfg, reset) {
  const names = Object.keys(ops)
  for (let i = 0; i < cfg.warmupIters; i++) for (const k of names) await reset?.(k), await ops[k]()
  globalThis.gc?.()
  const wall = Object.fromEntries(names.map((k) => [k, []]))
  const js = Object.fromEntries(names.map((k) => [k, []]))
  const start = now()
  while (wall[names[0]].length < cfg.maxIters && (wall[names[0]].length < cfg.minIters || now() - start < 2 * cfg.budgetMs)) {
    for (const k of names) {
      await reset?.(k)
      const e0 = performance.eventLoopUtilization()
      const t0 = now()
      await ops[k]()
      wall[k].push(now() - t0)
      js[k].push(performance.eventLoopUtilization(e0).active)
    }
  }
  return Object.fromEntries(names.map((k) => [k, { n: wall[k].length, wall: summarize(wall[k]), js: summarize(js[k]) }]))
}

async function encryption(d, cfg) {
  if (!d.encryptedCopy) return []
  const enc = await d.encryptedCopy(`${d.path}-encrypted.db`, ENC_OPTIONS)
  const dbs = { plain: d, encrypted: enc }
  const cases = []

  const selects = {}
  for (const [k, db] of Object.entries(dbs)) {
    const q = await db.prepare('SELECT * FROM t WHERE id <= ?')
    selects[k] = () => q.all([10_000])
  }
  const checks = {}
  for (const k of Object.keys(dbs)) checks[k] = hashRows(await selects[k]())
  let m = await measurePair(d, selects, cfg)
  for (const k of Object.keys(dbs)) cases.push({ id: `enc.select.${k}`, title: `select 10,000 rows, ${k}`, check: checks[k], ...m[k] })

  const inserts = {}
  const rows = narrowRows(BATCH_ROWS, 21)
  for (const [k, db] of Object.entries(dbs)) {
    await db.exec('DROP TABLE IF EXISTS write_t; CREATE TABLE write_t (id INTEGER PRIMARY KEY, name TEXT, value REAL)')
    const ins = await db.prepare(INSERT_T)
    inserts[k] = () => ins.runBatch(rows)
  }
  m = await measurePair(d, inserts, cfg, (k) => dbs[k].exec('DELETE FROM write_t; PRAGMA wal_checkpoint(PASSIVE)'))
  for (const k of Object.keys(dbs)) {
    const n = (await (await dbs[k].prepare('SELECT count(*) AS n FROM write_t')).get([])).n
    cases.push({ id: `enc.batch.${k}`, title: `batch insert 10,000 rows, ${k}`, check: `${n} rows`, ...m[k] })
  }

  // open (every connection: its key derived, its first read) + the first query, then close
  // outside the timing
  const paths = { plain: d.path, encrypted: enc.path }
  const opens = {}
  const opened = []
  for (const k of Object.keys(dbs)) {
    const options = k === 'encrypted' ? ENC_OPTIONS : {}
    opens[k] = async () => {
      const db = await d.Database.open(paths[k], options)
      await db.selectOne('SELECT count(*) AS n FROM t')
      opened.push(db)
    }
  }
  const closeOpened = async () => {
    for (const db of opened.splice(0)) await db.close()
  }
  m = await measurePair(d, opens, { ...cfg, maxIters: Math.min(cfg.maxIters, 60) }, closeOpened)
  await closeOpened()
  for (const k of Object.keys(dbs)) cases.push({ id: `enc.open.${k}`, title: `open + first query, ${k}`, check: 'opened', ...m[k] })
  await enc.close()
  return cases
}

export const LANES = {
  ...LIVE_LANES,
  select,
  wide,
  bytes,
  point,
  batch,
  stall,
  'batch-insert': batchInsert,
  'insert-concurrent': insertConcurrent,
  'insert-sequential': insertSequential,
  'tx-interactive': txInteractive,
  'batch-insert-wide': batchInsertWide,
  savepoints,
  encryption,
}

export function runLane(name, driver, quick) {
  return LANES[name](driver, quick ? QUICK : FULL)
}
