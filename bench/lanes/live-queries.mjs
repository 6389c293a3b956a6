// Live-query lanes (issue 4). (Not lanes/live.mjs: that is the scenarios' "live latest-50" view.)
//
// Every driver in LIVE_LIBS has `live`: watch(sql, params, tables, onRows) → stop (or a
// promise of it), write(sql, params), counters() → { requeries, emissions }. resqlite uses
// db.stream() and its diagnostics; PowerSync its own watched queries (customQuery().watch(),
// throttleMs: 0); the other peers do it themselves the way a Node user would
// (drivers/diy-live.mjs: re-run every watched query after each write, better-sqlite3 and
// libsql; sqlite3: re-run the queries on a table its update hook reported). node:sqlite would
// only repeat the synchronous re-run: left out. Through counting() (measure.mjs) every write
// counts as an operation and every subscription as a watch.
//
// What each lane checks (a lane that cannot do its work fails loudly):
// - per sample, the writes it issued and the subscriptions it made (checkCounts);
// - a delivery counts only when its rows show the write waited for (e.g. the value just
//   written), never "the next delivery", which could be a stale re-run of an older state;
// - at the end, the last rows delivered equal a fresh select.
// Extra fields per case: afterAck, plainWrite, plainJs, plainWall (samples, summarized by
// run.mjs like wall and js); counts ({ requeries, emissions, per }: what counters() says the
// library did); rate (live-columns, from perSample).
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { checkCounts } from '../measure.mjs'
import { hashRows, makeCase } from './common.mjs'

// The libraries whose drivers offer `live` (run.mjs runs these lanes for them only).
const LIVE_LIBS = ['resqlite', 'better-sqlite3', 'sqlite3', 'libsql', 'powersync']
const GROUP = 'live queries'
const TIMEOUT_MS = 10_000 // a delivery that never comes fails the lane
const now = () => performance.now()
const elu = (since) => performance.eventLoopUtilization(since)
const UPDATE_VALUE = 'UPDATE t SET value = ? WHERE id = ?'
// Samples by config: smoke proves the lane runs; quick is a short look; full is the suite.
const size = (cfg, smoke, quick, full) => (cfg.name === 'smoke' ? smoke : cfg.name === 'quick' ? quick : full)

function needLive(d) {
  if (!d.live)
    throw new Error('this driver has no `live` (watch / write / counters): it cannot run the live-query lanes')
}

/** A watched query that records each delivery. `until(shows)` resolves with the time of the
 * first delivery (the current rows included) whose rows satisfy shows(rows); no polling: a
 * busy JS thread would take a core from the readers. */
async function watcher(d, sql, params = [], tables = ['t']) {
  const w = { rows: undefined, count: 0, at: 0, waiters: [] }
  w.until = (shows, what = sql) => {
    if (w.count > 0 && shows(w.rows)) return Promise.resolve(w.at)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out: no delivery of ${what} showed the write within ${TIMEOUT_MS} ms`)),
        TIMEOUT_MS,
      )
      w.waiters.push({ shows, resolve: (at) => (clearTimeout(timer), resolve(at)) })
    })
  }
  w.stop = await d.live.watch(sql, params, tables, (rows) => {
    w.rows = rows
    w.count++
    w.at = now()
    w.waiters = w.waiters.filter((x) => (x.shows(rows) ? (x.resolve(w.at), false) : true))
  })
  await w.until(() => true, `${sql} (first rows)`)
  return w
}

/** The final rows must equal a fresh select: a lane cannot silently deliver stale rows. */
async function checkFinal(d, w, sql, params = []) {
  const fresh = await (await d.uncounted.prepare(sql)).all(params)
  if (hashRows(w.rows) !== hashRows(fresh))
    throw new Error(`the last delivered rows differ from a fresh select (${sql})`)
  return hashRows(fresh)
}

async function delta(d, before) {
  const after = await d.live.counters()
  return { requeries: after.requeries - before.requeries, emissions: after.emissions - before.emissions }
}
// Waits until the library's live machinery is idle: its re-run counter unchanged over 10 ms
// (re-runs queued by one burst must not land in the next one's timing or counts).
async function settle(d) {
  let last = (await d.live.counters()).requeries
  for (const t0 = now(); now() - t0 < TIMEOUT_MS; ) {
    await sleep(10)
    const c = (await d.live.counters()).requeries
    if (c === last) return
    last = c
  }
  throw new Error(`the live queries did not settle within ${TIMEOUT_MS} ms`)
}
const perWrite = (total, writes) => ({
  requeries: total.requeries / writes,
  emissions: total.emissions / writes,
  per: 'write',
})
const addCounts = (a, b) => ({ requeries: a.requeries + b.requeries, emissions: a.emissions + b.emissions })
const valueById = (rows, id) => rows.find((r) => r.id === id)?.value

// Write acknowledged → new rows delivered, for a 50-row stream. `wall` is write → delivered;
// `afterAck` is how long after the write's own acknowledgement the rows arrived (0 when they
// arrive first, as with the synchronous peers); `plainWrite` is the same write with no stream.
async function latency(d, cfg) {
  needLive(d)
  const sql = 'SELECT * FROM t WHERE id BETWEEN 1001 AND 1050'
  const samples = size(cfg, 3, 30, 400)
  const plainWrite = []
  for (let i = 0; i < samples; i++) {
    const ops0 = d.ctr.ops
    const t0 = now()
    await d.live.write(UPDATE_VALUE, [i + 0.25, 2001 + (i % 50)])
    plainWrite.push(now() - t0)
    checkCounts({ ops: 1 }, { ops: d.ctr.ops - ops0 }, `in plain write ${i + 1}`)
  }
  const w = await watcher(d, sql)
  const wall = []
  const afterAck = []
  const js = []
  for (let i = 0; i < samples; i++) {
    const [value, id] = [i + 0.5, 1001 + (i % 50)]
    const ops0 = d.ctr.ops
    const e0 = elu()
    const t0 = now()
    await d.live.write(UPDATE_VALUE, [value, id])
    const ack = now()
    const at = await w.until((rows) => valueById(rows, id) === value)
    js.push(elu(e0).active)
    wall.push(at - t0)
    afterAck.push(Math.max(0, at - ack))
    checkCounts({ ops: 1 }, { ops: d.ctr.ops - ops0 }, `in sample ${i + 1}`)
  }
  const check = await checkFinal(d, w, sql)
  w.stop()
  return [
    makeCase(GROUP, 'live-latency', 'live: invalidation latency, 50-row stream (write → rows delivered)', check, {
      n: samples,
      expect: { ops: 1 },
      checkedSamples: samples,
      samples: { wall, js, afterAck, plainWrite },
    }),
  ]
}

// 500 updates of a column no stream reads, 10 streams: how many re-runs and deliveries.
async function unrelated(d, cfg) {
  needLive(d)
  const sqlOf = (k) => `SELECT id, name FROM t WHERE id BETWEEN ${k * 100 + 1} AND ${k * 100 + 50}`
  const streams = []
  for (let k = 0; k < 10; k++) streams.push(await watcher(d, sqlOf(k)))
  const writes = size(cfg, 10, 50, 500)
  const before = await d.live.counters()
  const ops0 = d.ctr.ops
  const e0 = elu()
  const t0 = now()
  for (let i = 0; i < writes; i++) await d.live.write(UPDATE_VALUE, [i + 0.75, (i % 10) * 100 + 1 + (i % 50)])
  const wall = now() - t0
  const js = elu(e0).active
  checkCounts({ ops: writes }, { ops: d.ctr.ops - ops0 }, 'in the sample')
  await sleep(50) // re-runs still coming would count
  const counts = { ...(await delta(d, before)), per: `${writes} writes` }
  let check
  for (let k = 0; k < 10; k++) check = await checkFinal(d, streams[k], sqlOf(k))
  for (const s of streams) s.stop()
  return [
    makeCase(
      GROUP,
      'live-unrelated',
      `live: ${writes} updates to an unread column, 10 streams`,
      check,
      { n: 1, expect: { ops: writes }, checkedSamples: 1, samples: { wall: [wall], js: [js] } },
      { counts },
    ),
  ]
}

// 100 subscriptions of one query, then one relevant write: time until all 100 show it.
async function fanout(d, cfg) {
  needLive(d)
  const sql = 'SELECT * FROM t WHERE id BETWEEN 3001 AND 3050'
  const streams = []
  for (let k = 0; k < 100; k++) streams.push(await watcher(d, sql))
  const samples = size(cfg, 2, 5, 40)
  const wall = []
  const js = []
  let total = { requeries: 0, emissions: 0 }
  for (let i = 0; i < samples; i++) {
    const [value, id] = [i + 0.125, 3001 + (i % 50)]
    const before = await d.live.counters()
    const ops0 = d.ctr.ops
    const e0 = elu()
    const t0 = now()
    await d.live.write(UPDATE_VALUE, [value, id])
    const at = await Promise.all(streams.map((s) => s.until((rows) => valueById(rows, id) === value)))
    wall.push(Math.max(...at) - t0)
    js.push(elu(e0).active)
    checkCounts({ ops: 1 }, { ops: d.ctr.ops - ops0 }, `in sample ${i + 1}`)
    await sleep(5) // a late extra re-run or delivery would count
    total = addCounts(total, await delta(d, before))
  }
  const check = await checkFinal(d, streams[99], sql)
  for (const s of streams) s.stop()
  return [
    makeCase(
      GROUP,
      'live-fanout',
      'live: 100 identical streams, 1 relevant write (until all delivered)',
      check,
      { n: samples, expect: { ops: 1 }, checkedSamples: samples, samples: { wall, js } },
      { counts: perWrite(total, samples) },
    ),
  ]
}

// Writes to a column a stream reads that leave its result equal: JS-thread time per write with
// the stream vs without (plainJs), and the deliveries it caused.
async function unchanged(d, cfg) {
  needLive(d)
  const sql = 'SELECT count(*) AS n FROM t WHERE value > 0.5'
  const ids = (
    await (await d.uncounted.prepare('SELECT id FROM t WHERE value > 0.5 AND id > 50000 LIMIT 100')).all([])
  ).map((r) => r.id)
  if (ids.length < 100) throw new Error(`live-unchanged needs 100 rows with value > 0.5, found ${ids.length}`)
  const writes = size(cfg, 10, 40, 400)
  const run = async (offset) => {
    const js = []
    const wall = []
    for (let i = 0; i < writes; i++) {
      const ops0 = d.ctr.ops
      const e0 = elu()
      const t0 = now()
      await d.live.write(UPDATE_VALUE, [0.6 + ((i + offset) % 300) / 1000, ids[i % ids.length]])
      wall.push(now() - t0)
      js.push(elu(e0).active)
      checkCounts({ ops: 1 }, { ops: d.ctr.ops - ops0 }, `in write ${i + 1}`)
    }
    return { wall, js }
  }
  const plain = await run(0)
  const w = await watcher(d, sql)
  const before = await d.live.counters()
  const live = await run(1)
  await sleep(50)
  const counts = { ...(await delta(d, before)), per: `${writes} writes` }
  const check = await checkFinal(d, w, sql)
  w.stop()
  return [
    makeCase(
      GROUP,
      'live-unchanged',
      `live: ${writes} writes that leave a stream's result equal (per write)`,
      check,
      {
        n: writes,
        expect: { ops: 1 },
        checkedSamples: writes,
        samples: { wall: live.wall, js: live.js, plainJs: plain.js, plainWall: plain.wall },
      },
      { counts },
    ),
  ]
}

// 50 streams on the 20-column table, each reading id and i1: awaited single-row updates per
// second with no streams, updating a column none reads (r6, disjoint), and one all read (i1,
// overlapping). Rounds reverse the order of the three so drift hits each alike; before each
// burst the live machinery is idle (settle). One sample = one burst.
async function columns(d, cfg) {
  needLive(d)
  const writes = size(cfg, 10, 100, 1000)
  const rounds = size(cfg, 1, 3, 8)
  const samples = { none: { wall: [], js: [] }, disjoint: { wall: [], js: [] }, overlapping: { wall: [], js: [] } }
  const totals = { disjoint: { requeries: 0, emissions: 0 }, overlapping: { requeries: 0, emissions: 0 } }
  let v = 0
  const burst = async (mode) => {
    const column = mode === 'overlapping' ? 'i1' : 'r6'
    const ops0 = d.ctr.ops
    const e0 = elu()
    const t0 = now()
    for (let i = 0; i < writes; i++)
      await d.live.write(`UPDATE w SET ${column} = ? WHERE id = ?`, [++v, 1 + (i % 1000)])
    const wall = now() - t0
    const js = elu(e0).active
    checkCounts({ ops: writes }, { ops: d.ctr.ops - ops0 }, `in a ${mode} burst`)
    if (samples[mode]) samples[mode].wall.push(wall), samples[mode].js.push(js)
  }
  await burst('warm-up') // statements prepared, caches hot
  for (let r = 0; r < rounds; r++) {
    // Even rounds: none, disjoint, overlapping; odd rounds: overlapping, disjoint, none.
    await settle(d) // the previous round's streams are stopped; their last re-runs done
    if (r % 2 === 0) await burst('none')
    const streams = []
    for (let k = 0; k < 50; k++)
      streams.push(
        await watcher(d, `SELECT id, i1 FROM w WHERE id BETWEEN ${k * 20 + 1} AND ${k * 20 + 20}`, [], ['w']),
      )
    for (const mode of r % 2 ? ['overlapping', 'disjoint'] : ['disjoint', 'overlapping']) {
      const before = await d.live.counters()
      await burst(mode)
      await settle(d) // re-runs still coming count for this mode, and stay out of the next burst
      totals[mode] = addCounts(totals[mode], await delta(d, before))
    }
    await checkFinal(d, streams[0], 'SELECT id, i1 FROM w WHERE id BETWEEN 1 AND 20')
    for (const s of streams) s.stop()
    if (r % 2 === 1) await settle(d), await burst('none')
  }
  const check = hashRows(await (await d.uncounted.prepare('SELECT id, i1, r6 FROM w ORDER BY id')).all([]))
  return Object.entries(samples).map(([mode, s]) =>
    makeCase(
      GROUP,
      `live-columns.${mode}`,
      `live: ${writes} awaited single-row updates, ${mode === 'none' ? 'no streams' : `50 streams, ${mode} columns`}`,
      check,
      { n: rounds, expect: { ops: writes }, checkedSamples: rounds, samples: s },
      { perSample: [writes, 'writes'], ...(totals[mode] ? { counts: perWrite(totals[mode], rounds * writes) } : {}) },
    ),
  )
}

// 100 cycles of subscribe → first rows → unsubscribe, each on different parameters.
async function churn(d, cfg) {
  needLive(d)
  const sql = 'SELECT * FROM t WHERE id BETWEEN ? AND ?'
  const samples = size(cfg, 1, 3, 20)
  const wall = []
  const js = []
  let last
  for (let s = 0; s < samples; s++) {
    const w0 = d.ctr.watches ?? 0
    let rows = 0
    const e0 = elu()
    const t0 = now()
    for (let i = 0; i < 100; i++) {
      const lo = 1 + (((s * 100 + i) * 37) % 90_000)
      const w = await watcher(d, sql, [lo, lo + 49])
      rows += w.rows.length
      last = w.rows
      w.stop()
    }
    wall.push(now() - t0)
    js.push(elu(e0).active)
    checkCounts({ watches: 100, rows: 5_000 }, { watches: d.ctr.watches - w0, rows }, `in sample ${s + 1}`)
  }
  return [
    makeCase(GROUP, 'live-churn', 'live: 100 × subscribe → first rows → unsubscribe', hashRows(last), {
      n: samples,
      expect: { watches: 100, rows: 5_000 },
      checkedSamples: samples,
      samples: { wall, js },
    }),
  ]
}

export const LIVE_QUERY_LANES = {
  'live-latency': latency,
  'live-unrelated': unrelated,
  'live-fanout': fanout,
  'live-unchanged': unchanged,
  'live-columns': columns,
  'live-churn': churn,
}
export const LIVE_QUERY_LIBRARIES = Object.fromEntries(Object.keys(LIVE_QUERY_LANES).map((l) => [l, LIVE_LIBS]))
