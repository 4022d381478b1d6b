/** The soak's figures over time: least-squares trend and a small ASCII chart. Pure functions. */

export interface Point {
  /** seconds since the load started */
  t: number
  value: number
}

/**
 * The least-squares line through the points, as the change it makes over their time span relative
 * to their mean: +0.03 means the line rises by 3% of the mean value across the window.
 */
export function trend(points: readonly Point[]): { slopePerSecond: number; share: number } {
  const n = points.length
  if (n < 2) return { slopePerSecond: 0, share: 0 }
  const meanT = points.reduce((sum, p) => sum + p.t, 0) / n
  const meanV = points.reduce((sum, p) => sum + p.value, 0) / n
  let num = 0
  let den = 0
  for (const p of points) {
    num += (p.t - meanT) * (p.value - meanV)
    den += (p.t - meanT) ** 2
  }
  const slopePerSecond = den === 0 ? 0 : num / den
  const span = points[n - 1].t - points[0].t
  return { slopePerSecond, share: meanV === 0 ? 0 : (slopePerSecond * span) / meanV }
}

/**
 * A chart of the points, `height` rows, one column per point (or per group of points, averaged,
 * when there are more than `width`), the value axis labelled with `unit`.
 */
export function chart(title: string, points: readonly Point[], unit: string, { width = 72, height = 8 } = {}): string {
  if (points.length === 0) return `${title}: no samples`
  const per = Math.ceil(points.length / width)
  const columns: number[] = []
  for (let i = 0; i < points.length; i += per) {
    const group = points.slice(i, i + per)
    columns.push(group.reduce((sum, p) => sum + p.value, 0) / group.length)
  }
  const min = Math.min(...columns)
  const max = Math.max(...columns)
  const range = max - min || Math.max(Math.abs(max), 1) * 0.01
  const label = (value: number) => `${value.toFixed(1)} ${unit}`.padStart(12)
  const rows: string[] = [`${title} (${points.length} samples${per > 1 ? `, ${per} per column` : ''})`]
  for (let row = height - 1; row >= 0; row--) {
    const low = min + (range * row) / height
    const high = min + (range * (row + 1)) / height
    const cells = columns.map((value) => (value >= high ? '█' : value > low || (row === 0 && value >= low) ? '▄' : ' ')).join('')
    rows.push(`${row === height - 1 ? label(max) : row === 0 ? label(min) : ' '.repeat(12)} │${cells}`)
  }
  rows.push(`${' '.repeat(12)} └${'─'.repeat(columns.length)}`)
  rows.push(
    `${' '.repeat(14)}0 s${' '.repeat(Math.max(1, columns.length - 3 - String(Math.round(points.at(-1)!.t)).length - 2))}${Math.round(points.at(-1)!.t)} s`,
  )
  return rows.join('\n')
}
