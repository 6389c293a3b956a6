// Order statistics and noise estimates for benchmark samples.
import { rng } from './data.mjs'

// Quantile with linear interpolation between closest ranks.
export function quantile(values, q) {
  if (values.length === 0) return NaN
  const s = [...values].sort((a, b) => a - b)
  return sortedQuantile(s, q)
}
function sortedQuantile(s, q) {
  const pos = (s.length - 1) * q
  const lo = Math.floor(pos)
  const hi = Math.ceil(pos)
  return s[lo] + (s[hi] - s[lo]) * (pos - lo)
}

export const median = (values) => quantile(values, 0.5)
export const p90 = (values) => quantile(values, 0.9)

// Median absolute deviation (unscaled): the typical distance of a sample from the median.
export function mad(values) {
  const m = median(values)
  return median(values.map((v) => Math.abs(v - m)))
}

// Half-width of the bootstrap 95 % confidence interval of the median, from `iterations`
// resamples. Seeded, so one file gives one answer.
export function bootstrapMedianCI(values, iterations = 1000, seed = 1) {
  const n = values.length
  if (n < 2) return { lo: values[0] ?? NaN, hi: values[0] ?? NaN, halfWidth: 0 }
  const rand = rng(seed)
  const medians = new Float64Array(iterations)
  const buf = new Float64Array(n)
  for (let i = 0; i < iterations; i++) {
    for (let j = 0; j < n; j++) buf[j] = values[Math.floor(rand() * n)]
    buf.sort()
    medians[i] = sortedQuantile(buf, 0.5)
  }
  medians.sort()
  const lo = sortedQuantile(medians, 0.025)
  const hi = sortedQuantile(medians, 0.975)
  return { lo, hi, halfWidth: (hi - lo) / 2 }
}

// Bootstrap 95 % CI of median(B) / median(A) over the rounds of an interleaved A/B (round i
// ran A and B next to each other): each resample draws rounds with replacement, then samples
// within each drawn round. Drift between rounds (load from other processes) widens the
// interval, as it should; pooling every sample as if independent would hide it.
export function bootstrapRoundsRatioCI(aRounds, bRounds, iterations = 2000, seed = 1) {
  const rand = rng(seed)
  const R = aRounds.length
  const pick = (v, into) => {
    for (let j = 0; j < v.length; j++) into.push(v[Math.floor(rand() * v.length)])
  }
  const ratios = new Float64Array(iterations)
  for (let i = 0; i < iterations; i++) {
    const a = []
    const b = []
    for (let r = 0; r < R; r++) {
      const k = Math.floor(rand() * R)
      pick(aRounds[k], a)
      pick(bRounds[k], b)
    }
    ratios[i] = median(b) / median(a)
  }
  ratios.sort()
  return {
    ratio: median(bRounds.flat()) / median(aRounds.flat()),
    lo: sortedQuantile(ratios, 0.025),
    hi: sortedQuantile(ratios, 0.975),
  }
}

// At most `max` samples kept for the results file, evenly spaced in the order they were taken,
// rounded to 4 significant digits: enough to recompute medians and noise, small enough to commit.
export function keepSamples(values, max = 300) {
  const step = Math.max(1, values.length / max)
  const out = []
  for (let i = 0; i < values.length && out.length < max; i += step)
    out.push(Number(values[Math.floor(i)].toPrecision(4)))
  return out
}

// The summary every metric gets: median, p90, min, max, MAD and the median's 95 % CI half-width
// (computed from all samples, not only the kept ones).
export function summarize(values) {
  return {
    median: median(values),
    p90: p90(values),
    min: Math.min(...values),
    max: Math.max(...values),
    mad: mad(values),
    ci95: bootstrapMedianCI(values).halfWidth,
  }
}
