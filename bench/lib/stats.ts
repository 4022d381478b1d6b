/** Percentiles of latency samples and the median of repeated runs. */

export interface LatencySummary {
  p50: number
  p90: number
  p99: number
  max: number
  count: number
}

/** Nearest-rank percentile (p in 0–100) of ascending `sorted`; NaN when empty. */
function rank(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

export function percentile(values: readonly number[], p: number): number {
  return rank(Float64Array.from(values).sort(), p)
}

export function median(values: readonly number[]): number {
  return percentile(values, 50)
}

export function summarizeLatencies(values: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(values).sort()
  return { p50: rank(sorted, 50), p90: rank(sorted, 90), p99: rank(sorted, 99), max: rank(sorted, 100), count: sorted.length }
}
