import assert from 'node:assert/strict'
import test from 'node:test'
import { lineChart, summarize, yScale } from './chart.js'
import { html, trusted } from './markup.js'

const days = (counts: number[]) => counts.map((count, i) => ({ day: `2026-11-${String(i + 1).padStart(2, '0')}`, count }))

test('yScale picks a 1/2/5 step giving about four intervals, and a top at or above the maximum', () => {
  assert.deepEqual(yScale(0), { step: 1, top: 1 })
  assert.deepEqual(yScale(1), { step: 1, top: 1 })
  assert.deepEqual(yScale(3), { step: 1, top: 3 })
  assert.deepEqual(yScale(10), { step: 5, top: 10 })
  assert.deepEqual(yScale(37), { step: 10, top: 40 })
  assert.deepEqual(yScale(1234), { step: 500, top: 1500 })
  for (const max of [1, 7, 99, 100, 101, 5555, 1e6 + 1]) {
    const { step, top } = yScale(max)
    assert.ok(top >= max && top - step < max, `top ${top} for ${max}`)
    assert.ok(Number.isInteger(step) && top / step <= 10, `step ${step} for ${max}`)
  }
})

test('a chart is an accessible image: role="img", labelled by its <title> and a <desc> summing the series up', () => {
  const svg = lineChart(days([1, 5, 2]), { id: 'msgs', title: 'Messages per day', unit: 'messages' })
  assert.match(svg, /^<svg [^>]*role="img" aria-labelledby="msgs-title msgs-desc"/)
  assert.match(svg, /<title id="msgs-title">Messages per day<\/title>/)
  assert.match(
    svg,
    /<desc id="msgs-desc">3 days from 2026-11-01 to 2026-11-03: 8 messages in all, the most \(5\) on 2026-11-02, 2 on the last day.<\/desc>/,
  )
  assert.equal(svg.match(/<circle /g)?.length, 3, 'one point per day')
  assert.match(svg, /<title>2026-11-02: 5 messages<\/title>/, 'each point names its day and count')
})

test('the line runs left to right and the highest day is drawn highest (SVG y grows downwards)', () => {
  const svg = lineChart(days([0, 10, 4, 10, 0]), { id: 'c', title: 't', unit: 'u', width: 640, height: 240 })
  const points = /<polyline class="chart-line" points="([^"]+)"/
    .exec(svg)![1]
    .split(' ')
    .map((p) => p.split(',').map(Number))
  assert.equal(points.length, 5)
  const xs = points.map(([x]) => x)
  assert.deepEqual(
    [...xs].sort((a, b) => a - b),
    xs,
    'x increases with the day',
  )
  assert.equal(xs[0], 60, 'the first day on the left edge of the plot')
  assert.equal(xs[4], 640 - 16, 'the last day on the right edge')
  const ys = points.map(([, y]) => y)
  assert.equal(ys[1], 16, 'the maximum (10, the scale top) touches the top of the plot')
  assert.equal(ys[0], 240 - 36, 'zero on the axis')
  assert.ok(ys[2] < ys[0] && ys[2] > ys[1])
})

test('a single day is drawn in the middle; no days say so in words', () => {
  const one = lineChart(days([7]), { id: 'a', title: 'One', unit: 'users' })
  assert.equal(one.match(/<circle /g)?.length, 1)
  assert.match(one, /<circle cx="342"/)
  const none = lineChart([], { id: 'b', title: 'None', unit: 'users' })
  assert.doesNotMatch(none, /<circle|<polyline/)
  assert.match(none, /No data yet/)
  assert.equal(summarize([], 'users'), 'No users recorded yet.')
})

test('text in a chart is escaped', () => {
  const svg = lineChart([{ day: '<b>', count: 1 }], { id: 'x"y', title: '<script>alert(1)</script>', unit: '&' })
  assert.doesNotMatch(svg, /<script>|<b>|id="x"y/)
  assert.match(svg, /&#60;script&#62;/)
})

test('html`` escapes every value but markup, joins arrays and leaves out null, undefined and false', () => {
  const name = `<img src=x onerror="alert(1)">`
  const row = html`<td>${name}</td>`
  assert.equal(row.text, '<td>&#60;img src=x onerror=&#34;alert(1)&#34;&#62;</td>')
  assert.equal(html`<tr>${row}</tr>`.text, `<tr>${row.text}</tr>`, 'markup is not escaped twice')
  assert.equal(html`${[1, '&', null, undefined, false, html`<i>x</i>`]}`.text, '1&#38;<i>x</i>')
  assert.equal(html`${trusted('<svg></svg>')}`.text, '<svg></svg>')
  assert.equal(html`${0}`.text, '0')
})
