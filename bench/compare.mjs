// Compares two results files, lane by lane: node bench/compare.mjs <before.json> <after.json>
// (or npm run bench -- --compare-to=<before.json>, which compares the run just made).
//
// A change in a median counts only beyond a noise threshold, per case and metric:
//   max(10 %, 3 × MAD % , bootstrap 95 % CI half-width % of the median)
// taking the noisier of the two files for MAD and CI, and a change smaller than 0.02 ms in
// absolute terms never counts (timer resolution and scheduling jitter dominate below that).
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export const MIN_PCT = 10
export const FLOOR_MS = 0.02

// Case ids renamed since older results files were written, so history and comparisons line up.
export const LEGACY_IDS = { 'batch-insert': 'batch-insert.10000', 'wide.1000': 'shape.wide' }

export function casesOf(file) {
  const out = new Map()
  for (const r of file.results ?? []) {
    for (const c of r.cases ?? [])
      out.set(`${r.lib}|${LEGACY_IDS[c.id] ?? c.id}`, { lib: r.lib, ...c, id: LEGACY_IDS[c.id] ?? c.id })
  }
  return out
}

const pct = (x, m) => (m > 0 ? (100 * x) / m : 0)

export function compareCase(a, b, metric) {
  const A = a[metric]
  const B = b[metric]
  if (!A || !B || !(A.median > 0) || !(B.median > 0)) return undefined
  const changePct = pct(B.median - A.median, A.median)
  const madPct = Math.max(pct(A.mad ?? 0, A.median), pct(B.mad ?? 0, B.median))
  const ciPct = Math.max(pct(A.ci95 ?? 0, A.median), pct(B.ci95 ?? 0, B.median))
  const thresholdPct = Math.max(MIN_PCT, 3 * madPct, ciPct)
  const tiny = Math.abs(B.median - A.median) < FLOOR_MS
  const verdict = tiny || Math.abs(changePct) <= thresholdPct ? 'noise' : changePct < 0 ? 'win' : 'regression'
  return { metric, before: A.median, after: B.median, changePct, thresholdPct, verdict }
}

// Every case in both files; wall for every library, JS-thread time too for async ones (for
// sync libraries it is the wall time again).
export function compare(before, after, { libs } = {}) {
  const A = casesOf(before)
  const B = casesOf(after)
  const rows = []
  for (const [key, b] of B) {
    const a = A.get(key)
    if (!a || (libs && !libs.includes(b.lib))) continue
    const sync = after.results.find((r) => r.lib === b.lib)?.sync
    for (const metric of sync ? ['wall'] : ['wall', 'js']) {
      const c = compareCase(a, b, metric)
      if (c) rows.push({ lib: b.lib, id: b.id, title: b.title, ...c })
    }
  }
  const tally = (lib) => {
    const mine = rows.filter((r) => r.lib === lib)
    return {
      wins: mine.filter((r) => r.verdict === 'win').length,
      regressions: mine.filter((r) => r.verdict === 'regression').length,
      noise: mine.filter((r) => r.verdict === 'noise').length,
    }
  }
  const byLib = Object.fromEntries([...new Set(rows.map((r) => r.lib))].map((lib) => [lib, tally(lib)]))
  return { rows, byLib }
}

export function formatComparison({ rows, byLib }, beforeName) {
  const f = (x) => (x >= 100 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3))
  const lines = [
    `compared to ${beforeName}: a change counts beyond max(${MIN_PCT} %, 3 × MAD %, 95 % CI %) and ${FLOOR_MS} ms`,
  ]
  for (const [lib, t] of Object.entries(byLib)) {
    lines.push(`  ${lib}: ${t.wins} wins, ${t.regressions} regressions, ${t.noise} within noise`)
  }
  const flagged = rows.filter((r) => r.verdict !== 'noise')
  if (flagged.length) {
    lines.push('')
    for (const r of flagged) {
      lines.push(
        `  ${r.verdict === 'win' ? 'WIN       ' : 'REGRESSION'} ${r.lib} / ${r.id} (${r.metric}): ${f(r.before)} → ${f(r.after)} ms (${r.changePct >= 0 ? '+' : ''}${r.changePct.toFixed(1)} %, threshold ±${r.thresholdPct.toFixed(1)} %)`,
      )
    }
  }
  return lines.join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [a, b] = process.argv.slice(2)
  if (!a || !b) {
    console.error('usage: node bench/compare.mjs <before.json> <after.json>')
    process.exit(2)
  }
  const result = compare(JSON.parse(readFileSync(a, 'utf8')), JSON.parse(readFileSync(b, 'utf8')))
  console.log(formatComparison(result, a))
  // Exit status 1 when resqlite regressed: usable as a gate.
  process.exit(result.byLib.resqlite?.regressions ? 1 : 0)
}
