// Interleaved lanes (issue 47, item 4): the one-at-a-time lanes with other work between the
// calls, as a server does between requests. The hot lanes (insert-sequential, point-awaited,
// tx-interactive) run their calls back to back, which keeps caches, branch predictors and a
// library's threads warm and busy; here every call is followed by the same synchronous CPU
// burst (work(): JSON.stringify of a small response object, WORK_REPS times, 40–60 µs
// here), the same for every library. The burst is timed and left out of the sample
// (measure's gaps), so a case's time is what its calls took and compares with the hot lane's
// directly: interleaved.X against X.
import { performance } from 'node:perf_hooks'
import { measure } from '../measure.mjs'
import { fmtN, hashRows, makeCase } from './common.mjs'
import { POINT_AWAITED, pointQueries } from './reads.mjs'
import { INSERT_T, interactiveTransactions, narrowRows, SMALL_WRITES, TX_PER_SAMPLE, writeLane } from './writes.mjs'

// A small API response, serialized WORK_REPS times per burst (a fixed amount of work, not a
// fixed time, so a library whose calls slow the JS thread down pays for it here too).
const RESPONSE = {
  user: { id: 42, name: 'Ada Lovelace', email: 'ada@example.com', roles: ['admin', 'author'] },
  items: Array.from({ length: 12 }, (_, i) => ({ id: i, title: `item ${i}`, price: i * 1.25, tags: ['a', 'b'] })),
}
const WORK_REPS = 4
/** One burst, timed into gaps.ms (its output's length kept in gaps.bytes: work that is used). */
function work(gaps) {
  const t0 = performance.now()
  for (let r = 0; r < WORK_REPS; r++) gaps.bytes += JSON.stringify(RESPONSE).length
  gaps.ms += performance.now() - t0
}

// 100 single-row autocommit inserts, each awaited (sync: called), then the burst.
const insertSequential = async (d, cfg) => {
  const gaps = { ms: 0, bytes: 0 }
  return [
    await writeLane(d, cfg, {
      id: 'interleaved.insert-sequential',
      per: [SMALL_WRITES, 'rows'],
      expect: { ops: SMALL_WRITES, rows: SMALL_WRITES },
      title: `${SMALL_WRITES} single inserts, work between them (${d.sync ? 'loop' : 'each awaited'})`,
      table: 'write_t',
      gaps,
      setup: async () => {
        const ins = await d.prepare(INSERT_T)
        const rows = narrowRows(SMALL_WRITES, 24)
        return d.sync
          ? () => {
              for (const r of rows) {
                ins.run(r)
                work(gaps)
              }
            }
          : async () => {
              for (const r of rows) {
                await ins.run(r)
                work(gaps)
              }
            }
      },
    }),
  ]
}

// 200 point selects one at a time on seeded random ids, the burst after each.
async function pointAwaited(d, cfg) {
  const gaps = { ms: 0, bytes: 0 }
  const { q, first, next } = await pointQueries(d, 8)
  const op = d.sync
    ? () => {
        let found = 0
        for (let i = 0; i < POINT_AWAITED; i++) {
          if (q.get([next()])) found++
          work(gaps)
        }
        return found
      }
    : async () => {
        let found = 0
        for (let i = 0; i < POINT_AWAITED; i++) {
          if (await q.get([next()])) found++
          work(gaps)
        }
        return found
      }
  const m = await measure(d, op, cfg, {
    expect: { ops: POINT_AWAITED, rows: POINT_AWAITED },
    count: (found) => ({ rows: found }),
    gaps,
  })
  return [
    makeCase(
      'interleaved',
      'interleaved.point-awaited',
      `point query one at a time, work between them, ${fmtN(POINT_AWAITED)} per sample (${d.sync ? 'loop' : 'each awaited'})`,
      hashRows(first),
      m,
      { perSample: [POINT_AWAITED, 'q'] },
    ),
  ]
}

// 100 transactions (2 inserts + select the first back), the burst after each transaction.
const txInteractive = async (d, cfg) => {
  const gaps = { ms: 0, bytes: 0 }
  return [
    await writeLane(d, cfg, {
      id: 'interleaved.tx-interactive',
      per: [TX_PER_SAMPLE, 'tx'],
      expect: { ops: 3 * TX_PER_SAMPLE, rows: 2 * TX_PER_SAMPLE, read: TX_PER_SAMPLE },
      title: `${TX_PER_SAMPLE} transactions: 2 inserts + 1 select, work between them`,
      table: 'write_t',
      returns: true,
      gaps,
      setup: () => interactiveTransactions(d, () => work(gaps)),
    }),
  ]
}

// Lanes named as their cases, each beside its hot lane (`--only=interleaved.*` runs them).
export const INTERLEAVED_LANES = {
  'interleaved.insert-sequential': insertSequential,
  'interleaved.point-awaited': pointAwaited,
  'interleaved.tx-interactive': txInteractive,
}
