// Live-query lanes (issue 4). Every driver has `live`: watch(sql, params, tables, onRows) →
// stop, write(sql, params), counters() → { requeries, emissions }. resqlite uses db.stream();
// the peers do it themselves the way a Node user would: better-sqlite3 re-runs every watched
// query after each write, sqlite3 re-runs the queries on a table its update hook reported.
import { performance } from 'node:perf_hooks'
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { summarize } from './stats.mjs'

const now = () => performance.now()
const hashRows = (rows) => createHash('sha1').update(JSON.stringify(rows)).digest('hex').slice(0, 12)
const UPDATE_VALUE = 'UPDATE t SET value = ? WHERE id = ?'

/** A watched query that records each delivery; `delivered(n)` resolves once it has had more
 * than n deliveries (no polling: a busy JS thread would take a core from the readers). */
async function watcher(d, sql, params = [], tables = ['t']) {
  const w = { rows: undefined, count: 0, at: 0, waiters: [] }
  w.delivered = (n) =>
    w.count > n
      ? Promise.resolve()
      : new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`timed out waiting for rows of ${sql}`)), 10_000)
          w.waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) })
        })
  w.stop = await d.live.watch(sql, params, tables, (rows) => {
    w.rows = rows
    w.count++
    w.at = now()
    w.waiters = w.waiters.filter((x) => (w.count > x.n ? (x.resolve(), false) : true))
  })
  await w.delivered(0)
  return w
}

/** The final rows must equal a fresh select: the lane cannot silently deliver stale rows. */
async function checkFinal(d, w, sql, params = []) {
  const fresh = await (await d.prepare(sql)).all(params)
  const ok = hashRows(w.rows) === hashRows(fresh)
  if (!ok) throw new Error(`the last delivered rows differ from a fresh select (${sql})`)
  return hashRows(fresh)
}

async function delta(d, before) {
  const after = await d.live.counters()
  return { requeries: after.requeries - before.requeries, emissions: after.emissions - before.emissions }
}

const elu = (since) => performance.eventLoopUtilization(since)

// Write acknowledged → new rows delivered, for a 50-row stream. `wall` is write → delivered;
// `afterAck` is how long after the write's own acknowledgement the rows arrived (0 when they
// arrive first, as in the synchronous peers); `plainWrite` is the same write with no stream.
async function latency(d, cfg) {
  const sql = 'SELECT * FROM t WHERE id BETWEEN 1001 AND 1050'
  const samples = cfg.quick ? 20 : 400
  const plain = []
  for (let i = 0; i < samples; i++) {
    const t0 = now()
    await d.live.write(UPDATE_VALUE, [i + 0.25, 2001 + (i % 50)])
    plain.push(now() - t0)
  }
  const w = await watcher(d, sql)
  const wall = []
  const afterAck = []
  const js = []
  for (let i = 0; i < samples; i++) {
    const seen = w.count
    const e0 = elu()
    const t0 = now()
    await d.live.write(UPDATE_VALUE, [i + 0.5, 1001 + (i % 50)])
    const ack = now()
    await w.delivered(seen)
    wall.push(w.at - t0)
    afterAck.push(Math.max(0, w.at - ack))
    js.push(elu(e0).active)
  }
  const check = await checkFinal(d, w, sql)
  w.stop()
  return [{ id: 'live-latency', title: 'invalidation latency, 50-row stream (write → rows delivered)', check, n: samples, wall: summarize(wall), js: summarize(js), afterAck: summarize(afterAck), plainWrite: summarize(plain) }]
}

// 500 updates of a column no stream reads, 10 streams: how many re-runs and deliveries.
async function unrelated(d, cfg) {
  const streams = []
  for (let k = 0; k < 10; k++) streams.push(await watcher(d, `SELECT id, name FROM t WHERE id BETWEEN ${k * 100 + 1} AND ${k * 100 + 50}`))
  const writes = cfg.quick ? 50 : 500
  const before = await d.live.counters()
  const e0 = elu()
  const t0 = now()
  for (let i = 0; i < writes; i++) await d.live.write(UPDATE_VALUE, [i + 0.75, (i % 10) * 100 + 1 + (i % 50)])
  const wall = now() - t0
  const js = elu(e0).active
  await sleep(50) // anything still coming would count
  const counts = await delta(d, before)
  const check = await checkFinal(d, streams[0], 'SELECT id, name FROM t WHERE id BETWEEN 1 AND 50')
  for (const s of streams) s.stop()
  return [{ id: 'live-unrelated', title: `${writes} updates to an unread column, 10 streams`, check, n: 1, wall: summarize([wall]), js: summarize([js]), counts }]
}

// 100 subscriptions of one query, then one relevant write: time until all 100 have the rows.
async function fanout(d, cfg) {
  const sql = 'SELECT * FROM t WHERE id BETWEEN 3001 AND 3050'
  const streams = []
  for (let k = 0; k < 100; k++) streams.push(await watcher(d, sql))
  const samples = cfg.quick ? 5 : 40
  const wall = []
  const js = []
  const perWrite = []
  for (let i = 0; i < samples; i++) {
    const seen = streams.map((s) => s.count)
    const before = await d.live.counters()
    const e0 = elu()
    const t0 = now()
    await d.live.write(UPDATE_VALUE, [i + 0.125, 3001 + (i % 50)])
    await Promise.all(streams.map((s, k) => s.delivered(seen[k])))
    wall.push(Math.max(...streams.map((s) => s.at)) - t0)
    js.push(elu(e0).active)
    perWrite.push(await delta(d, before))
  }
  const check = await checkFinal(d, streams[99], sql)
  for (const s of streams) s.stop()
  const counts = perWrite.at(-1) // every write the same: one re-run (or 100) and 100 deliveries
  return [{ id: 'live-fanout', title: '100 identical streams, 1 relevant write (until all delivered)', check, n: samples, wall: summarize(wall), js: summarize(js), counts }]
}

// Writes to a column a stream reads that leave its result equal: JS-thread time per write with
// the stream vs without, and the deliveries it caused.
async function unchanged(d, cfg) {
  const sql = 'SELECT count(*) AS n FROM t WHERE value > 0.5'
  const ids = (await (await d.prepare('SELECT id FROM t WHERE value > 0.5 AND id > 50000 LIMIT 100')).all([])).map((r) => r.id)
  const writes = cfg.quick ? 40 : 400
  const run = async (offset) => {
    const js = []
    const wall = []
    for (let i = 0; i < writes; i++) {
      const e0 = elu()
      const t0 = now()
      await d.live.write(UPDATE_VALUE, [0.6 + ((i + offset) % 300) / 1000, ids[i % ids.length]])
      wall.push(now() - t0)
      js.push(elu(e0).active)
    }
    return { wall, js }
  }
  const plain = await run(0)
  const w = await watcher(d, sql)
  const before = await d.live.counters()
  const live = await run(1)
  await sleep(50)
  const counts = await delta(d, before)
  const check = await checkFinal(d, w, sql)
  w.stop()
  return [{ id: 'live-unchanged', title: `${writes} writes that leave a stream's result equal`, check, n: writes, wall: summarize(live.wall), js: summarize(live.js), plainJs: summarize(plain.js), plainWall: summarize(plain.wall), counts }]
}

// 50 streams on the 20-column table, each reading id and i1: awaited single-row updates per
// second with no streams, updating a column none reads (r6, disjoint), and one all read (i1,
// overlapping). Rounds alternate the three so drift hits each alike.
async function columns(d, cfg) {
  const writes = cfg.quick ? 20 : 100
  const rounds = cfg.quick ? 1 : 5
  const rates = { none: [], disjoint: [], overlapping: [] }
  let v = 0
  const burst = async (column) => {
    const t0 = now()
    for (let i = 0; i < writes; i++) await d.live.write(`UPDATE w SET ${column} = ? WHERE id = ?`, [++v, 1 + (i % 1000)])
    return (writes / (now() - t0)) * 1000
  }
  const counts = {}
  await burst('r6') // warm-up: statements prepared, caches hot
  for (let r = 0; r < rounds; r++) {
    rates.none.push(await burst('r6'))
    const streams = []
    for (let k = 0; k < 50; k++) streams.push(await watcher(d, `SELECT id, i1 FROM w WHERE id BETWEEN ${k * 20 + 1} AND ${k * 20 + 20}`, [], ['w']))
    for (const mode of r % 2 ? ['overlapping', 'disjoint'] : ['disjoint', 'overlapping']) {
      const before = await d.live.counters()
      rates[mode].push(await burst(mode === 'disjoint' ? 'r6' : 'i1'))
      await sleep(20)
      counts[mode] = await delta(d, before)
    }
    for (const s of streams) s.stop()
  }
  const check = hashRows(await (await d.prepare('SELECT id, i1, r6 FROM w ORDER BY id')).all([]))
  return Object.entries(rates).map(([mode, r]) => ({
    id: `live-columns.${mode}`,
    title: `single-row updates/s, ${mode === 'none' ? 'no streams' : `50 streams, ${mode} columns`}`,
    check,
    n: r.length,
    rate: { unit: 'writes/s', median: summarize(r).median, p90: summarize(r).p90 },
    wall: summarize(r.map((x) => 1000 / x)),
    js: summarize(r.map((x) => 1000 / x)),
    ...(counts[mode] ? { counts: counts[mode] } : {}),
  }))
}

// 100 cycles of subscribe → first rows → unsubscribe, each on different parameters.
async function churn(d, cfg) {
  const sql = 'SELECT * FROM t WHERE id BETWEEN ? AND ?'
  const samples = cfg.quick ? 3 : 20
  const wall = []
  const js = []
  let last
  for (let s = 0; s < samples; s++) {
    const e0 = elu()
    const t0 = now()
    for (let i = 0; i < 100; i++) {
      const lo = 1 + ((s * 100 + i) * 37) % 90_000
      const w = await watcher(d, sql, [lo, lo + 49])
      last = w.rows
      w.stop()
    }
    wall.push(now() - t0)
    js.push(elu(e0).active)
  }
  return [{ id: 'live-churn', title: '100 × subscribe → first rows → unsubscribe', check: hashRows(last), n: samples, wall: summarize(wall), js: summarize(js) }]
}

export const LIVE_LANES = {
  'live-latency': latency,
  'live-unrelated': unrelated,
  'live-fanout': fanout,
  'live-unchanged': unchanged,
  'live-columns': columns,
  'live-churn': churn,
}
