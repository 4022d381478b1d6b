import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Histogram, Registry } from 'prom-client'
import { LeanHistogram } from './histogram.js'

const BUCKETS = [0.001, 0.01, 0.1, 1]

/** The same histogram as prom-client's own and as a LeanHistogram, each in a registry of its own. */
function pair(labelNames: string[]) {
  const theirs = new Registry()
  const ours = new Registry()
  const config = { name: 'tern_test_seconds', help: 'a test histogram with a "quoted" help', labelNames }
  const reference = new Histogram({ ...config, buckets: BUCKETS, registers: [theirs] })
  const lean = new LeanHistogram({ ...config, buckets: BUCKETS, registry: ours })
  return { theirs, ours, reference, lean }
}

test("the exposition is prom-client's own, value for value, for labelled and unlabelled histograms", async () => {
  const { theirs, ours, reference, lean } = pair(['route', 'status'])
  // on a bound, between bounds, past the last, zero; label values that need escaping
  const observations: [string, string, number][] = [
    ['/a', '2xx', 0.001],
    ['/a', '2xx', 0.0005],
    ['/a', '2xx', 0.05],
    ['/a', '4xx', 7],
    ['/b "quoted"\\', '2xx', 0],
    ['/a', '2xx', 1],
    ['/b "quoted"\\', '2xx', 0.1000001],
  ]
  for (const [route, status, value] of observations) {
    reference.labels(route, status).observe(value)
    lean.labels(route, status).observe(value)
  }
  const text = await ours.metrics()
  assert.equal(text, await theirs.metrics())
  // a positive control: the text has the counts in it
  assert.match(text, /tern_test_seconds_bucket\{le="0.001",route="\/a",status="2xx"\} 2/)
  assert.match(text, /tern_test_seconds_count\{route="\/a",status="2xx"\} 4/)
  // the JSON too, but for prom-client's exemplars (never enabled here)
  const withoutExemplars = (metrics: { values: object[] }[]) =>
    metrics.map((m) => ({ ...m, values: m.values.map(({ exemplar: _, ...row }: { exemplar?: unknown }) => row) }))
  assert.deepEqual(withoutExemplars(await ours.getMetricsAsJSON()), withoutExemplars(await theirs.getMetricsAsJSON()))

  const unlabelled = pair([])
  for (const value of [0.002, 0.2, 5]) {
    unlabelled.reference.observe(value)
    unlabelled.lean.labels().observe(value)
  }
  assert.equal(await unlabelled.ours.metrics(), await unlabelled.theirs.metrics())
})

test('a child held before a reset goes on counting from zero; a value that is not a number is dropped', async () => {
  const { theirs, ours, reference, lean } = pair(['type'])
  const child = lean.labels('send')
  child.observe(0.5)
  ours.resetMetrics()
  child.observe(0.02)
  child.observe(Number.NaN)
  child.observe(Number.POSITIVE_INFINITY)
  reference.labels('send').observe(0.02)
  assert.equal(await ours.metrics(), await theirs.metrics())
  assert.match(await ours.metrics(), /tern_test_seconds_sum\{type="send"\} 0.02\n/)
})

test('the wrong number of label values is refused', () => {
  const { lean } = pair(['route', 'status'])
  assert.throws(() => lean.labels('/a'), /takes 2 label values, got 1/)
  assert.doesNotThrow(() => lean.labels('/a', '2xx'))
})
