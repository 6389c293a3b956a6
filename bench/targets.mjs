// The engine issues' targets, computed from the run. Four kinds:
//   vsPeer     resqlite's median / a peer's median, same case (wall, js, rate)
//   selfRatio  resqlite / resqlite: one case's median over another's (encryption, live-columns)
//   value      a number resqlite's case reports (stall p90, afterAck median, counts)
//   reported   any of these with no goal: shown, never passed or failed
// evaluate(rows) → { name, case, peer, metric, value, op, goal, pass[, ci] }; value (and pass) is
// undefined when the cases it needs did not run; ci { lo, hi } with --repeat (vsPeer).
import os from 'node:os'
import { bootstrapRoundsRatioCI } from './stats.mjs'

const compareOp = { '<=': (v, g) => v <= g, '>=': (v, g) => v >= g, '==': (v, g) => v === g }

// field: 'wall', 'js', 'rate' (median) or a path like 'stall.p90', 'counts.requeries'
const pick = (c, field) => {
  const v = field.split('.').reduce((o, k) => o?.[k], c)
  return typeof v === 'object' && v !== null ? v.median : v
}

function target(name, caseId, peer, metric, op, goal, compute) {
  return {
    name,
    evaluate(rows) {
      const get = (lib, id) => rows.find((c) => c.lib === lib && c.id === id)
      const value = compute(get, rows)
      const pass = value === undefined || op === 'reported' ? undefined : compareOp[op](value, goal)
      return { name, case: caseId, peer, metric, value, op, goal, pass }
    },
  }
}
const ratioOf = (a, b) => (a !== undefined && b !== undefined && b !== 0 ? a / b : undefined)

// With --repeat, each repeat ran the two libraries one after the other: the ratio also gets a
// 95 % interval from resampling the repeats as pairs (stats.mjs bootstrapRoundsRatioCI). A
// slowdown both runs of a repeat met moves little; one that met one library's run widens it, so
// a ratio near its goal shows whether the run can tell.
const vsPeer = (name, id, peer, metric, op, goal) => {
  const t = target(name, id, peer, metric, op, goal, (get) =>
    ratioOf(pick(get('resqlite', id) ?? {}, metric), pick(get(peer, id) ?? {}, metric)),
  )
  return {
    name,
    evaluate(rows) {
      const result = t.evaluate(rows)
      const ours = rows.find((c) => c.lib === 'resqlite' && c.id === id)?.repeatSamples?.[metric]
      const theirs = rows.find((c) => c.lib === peer && c.id === id)?.repeatSamples?.[metric]
      if (result.value === undefined || !ours || !theirs || ours.length < 2 || ours.length !== theirs.length)
        return result
      const { lo, hi } = bootstrapRoundsRatioCI(theirs, ours)
      return { ...result, ci: { lo, hi } }
    },
  }
}
const selfRatio = (name, idA, idB, metric, op, goal) =>
  target(name, `${idA} / ${idB}`, 'resqlite', metric, op, goal, (get) =>
    ratioOf(pick(get('resqlite', idA) ?? {}, metric), pick(get('resqlite', idB) ?? {}, metric)),
  )
// resqlite over the peer with the highest `metric` on the same case (a rate: higher is better).
const vsFastestPeer = (name, id, metric, op, goal) =>
  target(name, id, 'the fastest peer', metric, op, goal, (get, rows) => {
    const peers = rows.filter((c) => c.id === id && c.lib !== 'resqlite').map((c) => pick(c, metric))
    return peers.length ? ratioOf(pick(get('resqlite', id) ?? {}, metric), Math.max(...peers)) : undefined
  })
const value = (name, id, field, op, goal) =>
  target(name, id, null, field, op, goal, (get) => (get('resqlite', id) ? pick(get('resqlite', id), field) : undefined))
const derived = (name, id, metric, compute) =>
  target(name, id, null, metric, 'reported', '', (get) =>
    get('resqlite', id) ? compute(get('resqlite', id)) : undefined,
  )

// "Small queries at synchronous speed": the cheap-then-heavy lane's longest stall must stay
// within the time a read may run on the JS thread (the `inlineBudget` option's default,
// src/arguments.ts DEFAULT_INLINE_BUDGET) plus 1 ms.
export const INLINE_BUDGET_MS = 0.1
export const STALL_GROW_GOAL_MS = INLINE_BUDGET_MS + 1

// Thousands of databases in one process (issue 33): threads added by the open databases, at
// most 4 per core + 8 whatever their number (cores: this machine's, where the lanes ran).
export const TENANT_THREADS_GOAL = 4 * os.availableParallelism() + 8

export const TARGETS = [
  vsPeer('select 1,000: wall vs better-sqlite3 .all()', 'select.1000', 'better-sqlite3', 'wall', '<=', 0.8),
  vsPeer('select 10,000: wall vs better-sqlite3 .all()', 'select.10000', 'better-sqlite3', 'wall', '<=', 0.8),
  vsPeer('select 1,000: JS-thread vs better-sqlite3 .all()', 'select.1000', 'better-sqlite3', 'js', '<=', 0.2),
  vsPeer('select 10,000: JS-thread vs better-sqlite3 .all()', 'select.10000', 'better-sqlite3', 'js', '<=', 0.2),
  vsPeer(
    'selectBytes 10,000: wall vs better-sqlite3 all+stringify+Buffer.from',
    'bytes.10000',
    'better-sqlite3',
    'wall',
    '<=',
    0.25,
  ),
  vsPeer(
    'selectBytes 10,000: JS-thread vs better-sqlite3 all+stringify+Buffer.from',
    'bytes.10000',
    'better-sqlite3',
    'js',
    '<=',
    0.05,
  ),
  vsPeer('point query q/s vs better-sqlite3', 'point', 'better-sqlite3', 'rate', '>=', 0.8),
  vsPeer('point query q/s vs sqlite3', 'point', 'sqlite3', 'rate', '>=', 3),
  value('longest stall, 100,000-row select (p90 of runs, ms)', 'stall', 'stall.p90', '<=', 5),
  vsPeer('batch insert 10,000 rows: wall vs better-sqlite3', 'batch-insert.10000', 'better-sqlite3', 'wall', '<=', 1),
  vsPeer(
    '100 concurrent single inserts: wall vs better-sqlite3 loop',
    'insert-concurrent',
    'better-sqlite3',
    'wall',
    '<=',
    1,
  ),
  vsPeer(
    '100 sequential single inserts: wall vs better-sqlite3 loop',
    'insert-sequential',
    'better-sqlite3',
    'wall',
    '<=',
    1.5,
  ),
  vsPeer(
    'interactive transaction (2 inserts + select): wall vs better-sqlite3',
    'tx-interactive',
    'better-sqlite3',
    'wall',
    '<=',
    1.3, // "Small queries at synchronous speed" (it was 2)
  ),
  vsPeer(
    'batch insert 10,000 rows × 20 columns: wall vs better-sqlite3',
    'batch-insert-wide',
    'better-sqlite3',
    'wall',
    '<=',
    1,
  ),

  // Small queries at synchronous speed: one operation at a time, awaited, against
  // better-sqlite3 called with its parameters as arguments (drivers/better-sqlite3.mjs).
  vsPeer(
    'awaited point select, one at a time: wall vs better-sqlite3',
    'point-awaited',
    'better-sqlite3',
    'wall',
    '<=',
    1.5,
  ),
  // "not above today's": compared between runs (--compare-to, the case's js metric), not here
  derived(
    "awaited point select: JS-thread per query (µs; not above the last run's)",
    'point-awaited',
    'js / query',
    (c) => (c.js.median / c.perSample[0]) * 1000,
  ),
  vsPeer('awaited select of 10 rows: wall vs better-sqlite3', 'select.10', 'better-sqlite3', 'wall', '<=', 1),
  // SQL functions in JavaScript (issue 31), on the narrow table.
  vsPeer('SELECT fn(x) over 100,000 rows: wall vs better-sqlite3', 'fn.scalar', 'better-sqlite3', 'wall', '<=', 1.5),
  // 2 ms plus the function's own time in a slice (at most the slice, 0.25 ms).
  value('longest stall, SELECT fn(x) over 100,000 rows (p90 of runs, ms)', 'fn.scalar', 'stall.p90', '<=', 2.25),
  vsPeer(
    'SELECT agg(x) over 100,000 rows: wall vs better-sqlite3',
    'fn.aggregate',
    'better-sqlite3',
    'wall',
    '<=',
    1.5,
  ),
  vsPeer('window function over 10,000 rows: wall vs better-sqlite3', 'fn.window', 'better-sqlite3', 'wall', '<=', 1.5),
  vsPeer('1,000 awaited UPDATEs calling fn: wall vs better-sqlite3', 'fn.update', 'better-sqlite3', 'wall', '<=', 1.5),
  vsPeer('awaited select of 100 rows: wall vs better-sqlite3', 'select.100', 'better-sqlite3', 'wall', '<=', 1),
  vsPeer('transaction with 100 point reads: wall vs better-sqlite3', 'tx-reads', 'better-sqlite3', 'wall', '<=', 1.5),
  vsPeer('savepoints 5 levels deep: wall vs better-sqlite3', 'savepoints', 'better-sqlite3', 'wall', '<=', 1.5),
  vsPeer('feed keyset paging: wall vs better-sqlite3', 'feed.paging', 'better-sqlite3', 'wall', '<=', 1),
  vsPeer('chat scenario: wall vs better-sqlite3', 'chat', 'better-sqlite3', 'wall', '<=', 0.8),
  value(
    `longest stall, statement cheap then heavy (p90 of runs, ms; budget ${INLINE_BUDGET_MS} + 1)`,
    'stall-grow',
    'stall.p90',
    '<=',
    STALL_GROW_GOAL_MS,
  ),

  // Prepared statements on a narrow table (issue 31, lanes/statements.mjs): resqlite through a
  // db.prepare() Statement against better-sqlite3's stmt.get(id), one call at a time.
  vsPeer(
    'narrow table, 1,000 awaited point selects through a Statement: wall vs better-sqlite3',
    'narrow-point-awaited',
    'better-sqlite3',
    'wall',
    '<=',
    1.2,
  ),
  vsPeer(
    'narrow table, 10 transactions of 100 point reads: wall vs better-sqlite3',
    'narrow-tx-reads',
    'better-sqlite3',
    'wall',
    '<=',
    1.3,
  ),
  vsPeer(
    'narrow table, 100 interactive transactions (2 inserts + 1 select): wall vs better-sqlite3',
    'narrow-tx-interactive',
    'better-sqlite3',
    'wall',
    '<=',
    1.3,
  ),
  // The 2.5 µs above is absolute, and this machine's own speed moves by more than the gap
  // (better-sqlite3's stmt.get took 2.6–3.9 µs from one run to the next, experiments/059):
  // the same JS-thread time over better-sqlite3's (its JS time is its wall) is shown beside it.
  vsPeer(
    'narrow table: JS-thread per awaited point select through a Statement vs better-sqlite3 stmt.get',
    'narrow-point-awaited',
    'better-sqlite3',
    'js',
    'reported',
    '',
  ),
  target(
    'narrow table: JS-thread per awaited point select through a Statement (µs)',
    'narrow-point-awaited',
    null,
    'js / query',
    '<=',
    2.5,
    (get) => {
      const c = get('resqlite', 'narrow-point-awaited')
      return c ? (pick(c, 'js') / c.perSample[0]) * 1000 : undefined
    },
  ),

  // Results (issue "Results"): a kept value keeps only itself; text as fast as the fastest
  // peer; iterate() for results that should never be whole (lanes/results.mjs).
  value('heap kept by 20 retained 2 KB values (MB)', 'memory.retained', 'kept', '<=', 1),
  // The issue also asks for at most 2 × better-sqlite3's, but both keep about nothing (GC's
  // noise is tens of KB either way, and better-sqlite3's reads below zero), so a ratio says
  // nothing: the difference is reported.
  target(
    "heap kept by 20 retained 2 KB values, minus better-sqlite3's (MB)",
    'memory.retained',
    'better-sqlite3',
    'kept',
    'reported',
    '',
    (get) => {
      const [ours, theirs] = [get('resqlite', 'memory.retained'), get('better-sqlite3', 'memory.retained')]
      return ours && theirs ? pick(ours, 'kept') - pick(theirs, 'kept') : undefined
    },
  ),
  vsPeer('text-heavy 1,000 rows: wall vs better-sqlite3', 'shape.text', 'better-sqlite3', 'wall', '<=', 1),
  vsPeer('text-heavy 1,000 rows: JS-thread vs better-sqlite3', 'shape.text', 'better-sqlite3', 'js', '<=', 0.4),
  value('iterate 1,000,000 rows: RSS growth at its peak (MB)', 'iterate', 'rss', '<=', 32),
  value('iterate 1,000,000 rows: longest stall (p90 of runs, ms)', 'iterate', 'stall.p90', '<=', 2),
  vsPeer('iterate 1,000,000 rows: wall vs better-sqlite3 .iterate()', 'iterate', 'better-sqlite3', 'wall', '<=', 1),

  // Encryption at rest (issue 5): resqlite encrypted (default cipher) / resqlite plaintext,
  // measured in alternation in one process (lanes/encryption.mjs).
  selfRatio(
    'select 10,000 rows: wall encrypted vs plaintext',
    'enc.select.encrypted',
    'enc.select.plain',
    'wall',
    '<=',
    1.15,
  ),
  selfRatio(
    'batch insert 10,000 rows: wall encrypted vs plaintext',
    'enc.batch.encrypted',
    'enc.batch.plain',
    'wall',
    '<=',
    1.3,
  ),
  selfRatio(
    'open + first query: wall encrypted vs plaintext',
    'enc.open.encrypted',
    'enc.open.plain',
    'wall',
    'reported',
    '',
  ),

  // Live queries (issue 4, lanes/live-queries.mjs).
  value(
    'live-latency: rows delivered after the write is acknowledged (median ms)',
    'live-latency',
    'afterAck',
    '<=',
    0.1,
  ),
  derived(
    'live-latency: median wall − median plain write (ms)',
    'live-latency',
    'wall − plainWrite',
    (c) => c.wall.median - c.plainWrite.median,
  ),
  vsPeer('live-latency: wall vs better-sqlite3 re-run', 'live-latency', 'better-sqlite3', 'wall', 'reported', ''),
  vsPeer('live-latency: wall vs sqlite3 update hook', 'live-latency', 'sqlite3', 'wall', 'reported', ''),
  value(
    'live-unrelated: re-queries (10 streams, writes to an unread column)',
    'live-unrelated',
    'counts.requeries',
    '==',
    0,
  ),
  value('live-unrelated: emissions', 'live-unrelated', 'counts.emissions', '==', 0),
  value('live-fanout: re-queries per write (100 identical streams)', 'live-fanout', 'counts.requeries', '==', 1),
  value('live-fanout: emissions per write', 'live-fanout', 'counts.emissions', '==', 100),
  value('live-unchanged: emissions (writes leaving the result equal)', 'live-unchanged', 'counts.emissions', '==', 0),
  derived(
    'live-unchanged: JS-thread per write, with the stream / without (medians)',
    'live-unchanged',
    'js / plainJs',
    (c) => ratioOf(c.js.median, c.plainJs.median),
  ),
  selfRatio(
    'live-columns: writes/s, disjoint vs overlapping columns',
    'live-columns.disjoint',
    'live-columns.overlapping',
    'rate',
    '>=',
    2,
  ),
  selfRatio(
    'live-columns: writes/s, disjoint columns vs no streams',
    'live-columns.disjoint',
    'live-columns.none',
    'rate',
    '>=',
    0.8,
  ),
  vsPeer('live-churn: wall vs better-sqlite3', 'live-churn', 'better-sqlite3', 'wall', '<=', 1.5), // small queries issue
  vsPeer('live-churn: wall vs sqlite3', 'live-churn', 'sqlite3', 'wall', 'reported', ''),

  // A web server under load (issue 15, lanes/web.mjs): 32 connections on a 3-query page, with
  // and without one more connection requesting a heavy GROUP BY report.
  vsPeer('web: pages/s with a report running vs better-sqlite3', 'web.report', 'better-sqlite3', 'rate', '>=', 10),
  vsPeer('web: page p99 with a report running vs better-sqlite3', 'web.report', 'better-sqlite3', 'p99', '<=', 0.2),
  vsFastestPeer('web: pages/s with no report vs the fastest peer', 'web.pages', 'rate', '>=', 1.2),
  value('web: page max latency with a report running (ms)', 'web.report', 'wall.max', '<=', 100),
  value('web: failed requests, no report', 'web.pages', 'errors', '==', 0),
  value('web: failed requests, with a report', 'web.report', 'errors', '==', 0),

  // Thousands of databases in one process (issue 33, lanes/tenants.mjs): N databases (1,000 in
  // the full run) opened, written and read once, idle; then point reads on random ones.
  value(
    `tenants: threads added by the open databases (4 × ${os.availableParallelism()} cores + 8)`,
    'tenants.idle',
    'threads',
    '<=',
    TENANT_THREADS_GOAL,
  ),
  value('tenants: RSS per open, idle database (MB)', 'tenants.idle', 'rssPerDb', '<=', 0.5),
  vsPeer(
    'tenants: RSS per open, idle database vs better-sqlite3',
    'tenants.idle',
    'better-sqlite3',
    'rssPerDb',
    'reported',
    '',
  ),
  vsPeer(
    'tenants: open + create table + first write + first read: wall vs better-sqlite3',
    'tenants.open',
    'better-sqlite3',
    'wall',
    '<=',
    1.5,
  ),
  vsPeer(
    'tenants: 5,000 awaited point reads on random databases: wall vs better-sqlite3',
    'tenants.reads',
    'better-sqlite3',
    'wall',
    '<=',
    1.5,
  ),
]
