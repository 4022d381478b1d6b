/**
 * tern_fanout_lag_seconds (lib/metrics.ts, docs/operations.md): the time from a publish on one
 * instance to its arrival on another over Redis. It is exported on every instance; it moves on the
 * instance that receives another one's events, by one observation per published batch, and not on
 * the instance that published them (which delivers its own at once, no lag to measure) nor on a
 * single instance with the in-process fan-out. The two-instance part needs PostgreSQL + Redis.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { testDatabaseUrl, testRedisUrl } from '../harness/database.js'
import { registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer, type TestServer } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const METRICS_TOKEN = 'metrics-token-for-the-lag-test-0123'
const skip =
  testDatabaseUrl && testRedisUrl ? false : 'needs PostgreSQL + Redis (TEST_DATABASE_URL, TEST_REDIS_URL): the lag is Redis fan-out’s'
if (skip) console.log(`# SKIP two-instance fan-out lag: ${skip}`)

async function lag(server: TestServer): Promise<{ count: number; sum: number; exposed: boolean }> {
  const res = await server.api.get('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  assert.equal(res.status, 200)
  const value = (name: string) => {
    const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(res.text)
    return match ? Number(match[1]) : NaN
  }
  return {
    count: value('tern_fanout_lag_seconds_count'),
    sum: value('tern_fanout_lag_seconds_sum'),
    exposed: /^# TYPE tern_fanout_lag_seconds histogram$/m.test(res.text),
  }
}

test('a single instance exports the lag histogram; its in-process delivery adds no observation (the socket did get the event)', async () => {
  const server = await startTestServer({ env: { METRICS_TOKEN } })
  const [alice, bob] = await registerUsers(server, 2)
  const socket = await TestSocket.connect(server.url, bob.token)
  const before = await lag(server)
  assert.ok(before.exposed, 'tern_fanout_lag_seconds is exported')
  assert.ok(Number.isFinite(before.count))
  assert.equal((await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'local' })).status, 200)
  assert.equal((await socket.next('message.new')).data.message.content, 'local')
  if (!server.ctx.redis) assert.equal((await lag(server)).count, before.count, 'no Redis fan-out, nothing to time')
  await socket.close()
  await server.close()
})

test('two instances: events published on one and delivered on the other move the other’s lag, by the batches it received', {
  skip,
}, async () => {
  // one prefix for both, so they share the fan-out channel (the harness gives each server its own)
  const env = { METRICS_TOKEN, REDIS_PREFIX: `tern-test-${randomBytes(6).toString('hex')}:` }
  const one = await startTestServer({ env })
  const two = await startTestServer({ env, database: one.database })
  try {
    const [alice, bob] = await registerUsers(one, 2)
    const onTwo = await TestSocket.connect(two.url, bob.token)
    const [oneBefore, twoBefore] = [await lag(one), await lag(two)]
    for (let i = 0; i < 3; i++) {
      assert.equal((await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: `across ${i}` })).status, 200)
      // delivered on the other instance: it came through Redis
      assert.equal((await onTwo.next('message.new')).data.message.content, `across ${i}`)
    }
    const [oneAfter, twoAfter] = [await lag(one), await lag(two)]
    assert.ok(twoAfter.count >= twoBefore.count + 3, `the receiving instance observed each send (${twoBefore.count} → ${twoAfter.count})`)
    assert.ok(
      twoAfter.sum >= twoBefore.sum && twoAfter.sum - twoBefore.sum < 10,
      `the lags are small and not negative (${twoAfter.sum - twoBefore.sum} s)`,
    )
    // the publisher times nothing for its own events...
    assert.equal(oneAfter.count, oneBefore.count, 'the publishing instance observed nothing')
    // ...and does once it receives some: the other direction (sent through two, heard on one)
    const onOne = await TestSocket.connect(one.url, alice.token)
    assert.equal((await two.api.as(bob.token).post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'back' })).status, 200)
    assert.equal((await onOne.next('message.new')).data.message.content, 'back')
    assert.ok((await lag(one)).count >= oneAfter.count + 1, 'the first instance observed the event it received')
    await onOne.close()
    await onTwo.close()
  } finally {
    await two.close()
    await one.close()
  }
})
