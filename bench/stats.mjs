// Order statistics for benchmark samples (linear interpolation between closest ranks).
export function quantile(values, q) {
  if (values.length === 0) return NaN
  const s = [...values].sort((a, b) => a - b)
  const pos = (s.length - 1) * q
  const lo = Math.floor(pos)
  const hi = Math.ceil(pos)
  return s[lo] + (s[hi] - s[lo]) * (pos - lo)
}

export const median = (values) => quantile(values, 0.5)
export const p90 = (values) => quantile(values, 0.9)

export function summarize(values) {
  return { median: median(values), p90: p90(values), min: Math.min(...values), max: Math.max(...values) }
}
