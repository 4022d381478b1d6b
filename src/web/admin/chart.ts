/**
 * Day-by-day line charts drawn on the server as inline SVG: no script, nothing loaded, readable by
 * a screen reader (role="img" with a <title> and a <desc> that sums the series up) and styled by
 * the panel's stylesheet through classes (presentation attributes are the fallback).
 */
import { escapeHtml } from '../../lib/html.js'

export interface DayCount {
  /** YYYY-MM-DD */
  day: string
  count: number
}

export interface ChartOptions {
  /** unique on the page: the title and desc ids derive from it */
  id: string
  title: string
  /** what one count is, in the plural ("messages") */
  unit: string
  width?: number
  height?: number
}

// room on the left for five-digit labels at the larger text the stylesheet gives narrow screens
const PAD = { left: 60, right: 16, top: 16, bottom: 36 }

/** The y axis: a step of 1, 2 or 5 × 10^k (at least 1) giving about four intervals, and the top it reaches. */
export function yScale(max: number): { step: number; top: number } {
  if (!(max > 0)) return { step: 1, top: 1 }
  const rough = max / 4
  const magnitude = 10 ** Math.floor(Math.log10(rough))
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= rough) ?? 10 * magnitude)
  return { step, top: step * Math.ceil(max / step) }
}

const fmt = (n: number) => n.toLocaleString('en-US')
const round = (n: number) => Math.round(n * 10) / 10

/** One sentence for the chart's <desc>: the span, the total, the peak and the latest day. */
export function summarize(points: readonly DayCount[], unit: string): string {
  if (points.length === 0) return `No ${unit} recorded yet.`
  const total = points.reduce((sum, p) => sum + p.count, 0)
  const peak = points.reduce((best, p) => (p.count > best.count ? p : best), points[0])
  const last = points[points.length - 1]
  return (
    `${points.length} days from ${points[0].day} to ${last.day}: ${fmt(total)} ${unit} in all, ` +
    `the most (${fmt(peak.count)}) on ${peak.day}, ${fmt(last.count)} on the last day.`
  )
}

/** An SVG line chart of `points` (oldest first), as markup to embed in a page. */
export function lineChart(points: readonly DayCount[], options: ChartOptions): string {
  const width = options.width ?? 640
  const height = options.height ?? 240
  const id = escapeHtml(options.id)
  const plotW = width - PAD.left - PAD.right
  const plotH = height - PAD.top - PAD.bottom
  const bottom = PAD.top + plotH
  const max = points.reduce((m, p) => Math.max(m, p.count), 0)
  const { step, top } = yScale(max)
  const x = (i: number) => round(points.length === 1 ? PAD.left + plotW / 2 : PAD.left + (i * plotW) / (points.length - 1))
  const y = (count: number) => round(bottom - (count / top) * plotH)

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${id}-title ${id}-desc">`,
    `<title id="${id}-title">${escapeHtml(options.title)}</title>`,
    `<desc id="${id}-desc">${escapeHtml(summarize(points, options.unit))}</desc>`,
  ]
  parts.push('<g class="chart-grid" aria-hidden="true">')
  for (let value = 0; value <= top; value += step) {
    const at = y(value)
    parts.push(
      `<line x1="${PAD.left}" x2="${width - PAD.right}" y1="${at}" y2="${at}" stroke="#d5dce4"/>`,
      `<text x="${PAD.left - 8}" y="${round(at + 4)}" text-anchor="end" font-size="13">${fmt(value)}</text>`,
    )
  }
  parts.push('</g>')
  if (points.length === 0) {
    parts.push(
      `<text class="chart-empty" x="${width / 2}" y="${round(PAD.top + plotH / 2)}" text-anchor="middle" font-size="14">No data yet</text>`,
    )
  } else {
    const coords = points.map((p, i) => `${x(i)},${y(p.count)}`)
    parts.push(
      `<path class="chart-area" d="M${x(0)},${bottom} L${coords.join(' L')} L${x(points.length - 1)},${bottom} Z" fill="#2a7bd3" fill-opacity="0.12" aria-hidden="true"/>`,
      `<polyline class="chart-line" points="${coords.join(' ')}" fill="none" stroke="#2a7bd3" stroke-width="2" aria-hidden="true"/>`,
      '<g class="chart-points">',
      ...points.map(
        (p, i) =>
          `<circle cx="${x(i)}" cy="${y(p.count)}" r="3" fill="#2a7bd3"><title>${escapeHtml(p.day)}: ${fmt(p.count)} ${escapeHtml(options.unit)}</title></circle>`,
      ),
      '</g>',
      '<g class="chart-days" aria-hidden="true">',
    )
    // first, middle and last day under the axis
    const labelled = [...new Set([0, Math.floor((points.length - 1) / 2), points.length - 1])]
    for (const i of labelled) {
      const anchor = points.length === 1 ? 'middle' : i === 0 ? 'start' : i === points.length - 1 ? 'end' : 'middle'
      parts.push(`<text x="${x(i)}" y="${bottom + 22}" text-anchor="${anchor}" font-size="13">${escapeHtml(points[i].day)}</text>`)
    }
    parts.push('</g>')
  }
  parts.push(
    `<line class="chart-axis" x1="${PAD.left}" x2="${width - PAD.right}" y1="${bottom}" y2="${bottom}" stroke="#6b7785" aria-hidden="true"/>`,
    '</svg>',
  )
  return parts.join('\n')
}
