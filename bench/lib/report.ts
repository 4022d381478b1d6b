/**
 * Result rows and the final table. A row is one figure measured once per run; the table shows
 * the median of the runs (judged against the target), the min and the max.
 */
import { median } from './stats.js'

export type Unit = 'req/s' | 'msg/s' | 'ms' | 'µs' | 's' | 'x' | 'KiB' | 'MiB' | 'MiB/s' | 'k instr' | '%'

/** A target on the median: at most (`max`) or at least (`min`) a value. */
export type Target = { max: number } | { min: number }

export interface Row {
  scenario: string
  figure: string
  unit: Unit
  /** one value per run */
  samples: number[]
  target?: Target
}

const DIGITS: Record<Unit, number> = { 'req/s': 0, 'msg/s': 0, ms: 2, µs: 1, s: 1, x: 2, KiB: 1, MiB: 0, 'MiB/s': 0, 'k instr': 0, '%': 2 }

export function formatValue(value: number, unit: Unit): string {
  if (!Number.isFinite(value)) return 'n/a'
  const text = value.toLocaleString('en-US', { minimumFractionDigits: DIGITS[unit], maximumFractionDigits: DIGITS[unit] })
  return unit === 'x' ? `${text}x` : `${text} ${unit}`
}

function formatTarget(target: Target, unit: Unit): string {
  return 'max' in target ? `≤ ${formatValue(target.max, unit)}` : `≥ ${formatValue(target.min, unit)}`
}

export function passes(row: Row): boolean | null {
  if (!row.target) return null
  const value = median(row.samples)
  return 'max' in row.target ? value <= row.target.max : value >= row.target.min
}

/** A Markdown-style table: scenario | figure | median | min | max | target | pass? */
export function renderTable(rows: readonly Row[]): string {
  const header = ['scenario', 'figure', 'median', 'min', 'max', 'target', 'pass?']
  const body = rows.map((row) => {
    const pass = passes(row)
    return [
      row.scenario,
      row.figure,
      formatValue(median(row.samples), row.unit),
      formatValue(Math.min(...row.samples), row.unit),
      formatValue(Math.max(...row.samples), row.unit),
      row.target ? formatTarget(row.target, row.unit) : '—',
      pass === null ? '—' : pass ? 'yes' : 'NO',
    ]
  })
  const widths = header.map((_, i) => Math.max(header[i].length, ...body.map((cells) => cells[i].length)))
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n')
}
