/**
 * Sync conformance, the CI form (the full run is `npm run conformance`): 20 clients and
 * 1,000 messages with drops, half-open sockets, resumes and one SIGKILL mid-run. On SQLite one
 * instance (killed and restarted under its clients); with TEST_DATABASE_URL and TEST_REDIS_URL two
 * instances on PostgreSQL + Redis, one of them killed while the other serves. Every client must
 * end with every event of its logs once, in order, without a gap, and the server's history as its
 * state, read state included (test/conformance/verify.ts); a failure names the first divergent event.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { optionsFromEnv, report, runConformance } from './run.js'

test("every client holds every event once, in order, without a gap, and the server's history, through drops, resumes and a SIGKILL", {
  timeout: 240_000,
}, async (t) => {
  const options = optionsFromEnv({ clients: 20, messages: 1000 })
  const result = await runConformance({ ...options, log: (line) => t.diagnostic(line) })
  const text = report(result)
  console.log(text)
  assert.equal(result.figures.kills, 1, 'one instance was killed mid-run')
  assert.ok(result.figures.socketsLostToTheKill > 0, 'the kill cut sockets that then resumed')
  assert.ok(
    result.figures.drops.halfOpen > 0 && result.figures.drops.close > 0 && result.figures.drops.terminate > 0,
    'each kind of drop happened',
  )
  assert.equal(result.figures.halfOpenDetected, result.figures.drops.halfOpen, 'the server dropped every half-open socket by its heartbeat')
  if (result.instances === 2) assert.ok(result.figures.resumesElsewhere > 0, 'clients resumed on the other instance')
  // the positive control of the comparison: it did compare something, for every client
  assert.ok(result.figures.eventsChecked >= result.workload.sent, `events were compared (${result.figures.eventsChecked})`)
  // and read state was there to compare: receipts, read messages in personal chats, known reads in groups
  assert.ok(
    result.figures.read.receipts > 0 && result.figures.read.exactRead > 0 && result.figures.read.known > 0,
    `read state was compared (${JSON.stringify(result.figures.read)})`,
  )
  assert.equal(result.workload.sent, options.messages)
  assert.ok(result.ok, text)
})
