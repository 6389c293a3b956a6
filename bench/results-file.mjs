// The results file a run writes beside its Markdown report: compact JSON (one line, no
// indentation) with every metric's summary (median, p90, min, max, mad, ci95; n per case) and
// the run's checks, targets and comparison. The samples behind the summaries (`samples`, and
// `repeatSamples` with --repeat) only when asked for (`--samples`): `npm run ab` pools them over
// its rounds; the dashboard, the README tables and --compare-to read the summaries alone.
// A full suite's file: about 160 KB, where indented JSON with samples took 2.1 MB.
import { writeFileSync } from 'node:fs'

// Significant digits kept for fractional numbers: the timer's resolution is far coarser, and
// the reports print at most 4. Subtracting two performance.now() readings leaves 17-digit noise
// (0.004076999999995223) that was a sixth of a file without samples.
const DIGITS = 6

/** The results object without its raw samples, unless `samples`. */
export function compactResults(res, { samples = false } = {}) {
  if (samples) return res
  return {
    ...res,
    results: (res.results ?? []).map((r) =>
      r.cases ? { ...r, cases: r.cases.map(({ samples: _s, repeatSamples: _r, ...c }) => c) } : r,
    ),
  }
}

/** The results file's text: compactResults as one line, fractions to DIGITS significant digits. */
export const resultsJson = (res, options) =>
  `${JSON.stringify(compactResults(res, options), (_, v) =>
    typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(DIGITS)) : v,
  )}\n`

/** Writes `<stem>.json`. */
export const writeResults = (stem, res, options) => writeFileSync(`${stem}.json`, resultsJson(res, options))
