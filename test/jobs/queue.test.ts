/**
 * The work queue (src/jobs/queue.ts), seen from outside: a scheduled message due in a second goes
 * out on time from an otherwise idle server (woken by its own timer, not found by a poll); a
 * webhook delivery that fails is retried with growing waits, and the deliveries behind it in its
 * chat wait their turn; a delivery survives a restart; an item a crashed instance still holds
 * waits for its claim to run out; with two instances on one PostgreSQL + Redis, no item is done
 * twice. And the retry policy's numbers.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, test } from 'node:test'
import { givesUp, retryDelay, type RetryPolicy } from '../../src/jobs/queue.js'
import { testDatabaseUrl, testRedisUrl } from '../harness/database.js'
import { V2 } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'
import { sleep, waitFor } from '../harness/wait.js'

const FAST = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '200' }
const server = await startTestServer({ env: FAST })
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString()

async function schedule(_on: TestServer, from: TestUser, to: TestUser, content: string, at: string) {
  const res = await from.api.post(`${V2}/messages/send`, { receiver_id: to.id, content, scheduled_at: at })
  assert.equal(res.status, 200, res.text)
  return res.body.data as { scheduled_id: number }
}

interface Hit {
  at: number
  json: any
  id: string
}

/** A webhook receiver answering `status()` for each request, slowly when `delayMs`. */
async function receiver(delayMs = 0) {
  const hits: Hit[] = []
  let status: (json: any) => number = () => 200
  const listener = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const json = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      const code = status(json)
      hits.push({ at: Date.now(), json, id: String(request.headers['webhook-id']) })
      setTimeout(() => response.writeHead(code).end(), delayMs)
    })
  })
  listener.listen(0, '127.0.0.1')
  await once(listener, 'listening')
  after(
    () =>
      new Promise<void>((resolve) => {
        listener.closeAllConnections()
        listener.close(() => resolve())
      }),
  )
  return {
    url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/hook`,
    hits,
    answer(fn: (json: any) => number) {
      status = fn
    },
  }
}

async function botWithHook(on: TestServer, url: string) {
  const owner = await on.registerUser()
  const res = await owner.api.post('/api/bots/register', { name: 'Queue', username: `${uniqueName('q').slice(0, 24)}_bot` })
  assert.equal(res.status, 200, res.text)
  const botId = res.body.data.bot_id as number
  assert.equal((await owner.api.post(`/api/bots/${botId}/webhook`, { url })).status, 200)
  const sendData = async (data: unknown) => {
    const sent = await owner.api.post(`/api/bots/${botId}/webhook/send`, { data })
    assert.equal(sent.status, 200, sent.text)
    return sent.body.data.delivery_id as number
  }
  return { owner, botId, sendData }
}

test('the retry policy: doubling from the first wait up to the most, jitter within its share; giving up by attempts or by age', () => {
  const policy: RetryPolicy = { firstMs: 1000, maxMs: 60_000, jitter: 0, maxAttempts: null, maxAgeMs: null }
  assert.deepEqual(
    [1, 2, 3, 4, 7, 8, 50].map((n) => retryDelay(policy, n)),
    [1000, 2000, 4000, 8000, 60_000, 60_000, 60_000],
  )
  const jittered = { ...policy, jitter: 0.25 }
  assert.equal(
    retryDelay(jittered, 2, () => 0),
    1500,
  )
  assert.equal(
    retryDelay(jittered, 2, () => 1),
    2500,
  )
  assert.equal(givesUp(policy, 1000, 0, 1e12), false, 'never, without a limit')
  assert.equal(givesUp({ ...policy, maxAttempts: 3 }, 2, 0, 0), false)
  assert.equal(givesUp({ ...policy, maxAttempts: 3 }, 3, 0, 0), true)
  assert.equal(givesUp({ ...policy, maxAgeMs: 10_000 }, 5, 1000, 11_000), false)
  assert.equal(givesUp({ ...policy, maxAgeMs: 10_000 }, 5, 1000, 11_001), true)
})

test('a scheduled message due in 1 s goes out on time from an idle server, and not before (its own timer wakes the queue)', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const socket = await TestSocket.connect(server.url, bob.token)
  after(() => socket.close())
  // the server has been idle: nothing was due, nothing else is queued
  await sleep(1500)
  const due = inMs(1000)
  await schedule(server, alice, bob, 'on the second', due)
  // positive control for "not before": nothing arrives in the first 700 ms
  assert.deepEqual(await socket.drain('message.new', 700), [], 'not delivered early')
  const frame = await socket.next('message.new', 3000)
  const lateness = Date.now() - Date.parse(due)
  assert.equal(frame.data.message.content, 'on the second')
  assert.ok(lateness >= 0 && lateness < 400, `delivered ${lateness} ms after scheduled_at`)
})

test('a failing webhook is retried with growing waits; the next delivery of its chat waits its turn, another chat does not', async () => {
  const hook = await receiver()
  let failures = 3
  hook.answer((json) => (json.data.n === 1 && failures-- > 0 ? 503 : 200))
  const { sendData } = await botWithHook(server, hook.url)
  await sendData({ chat_id: 7, n: 1 })
  await sendData({ chat_id: 7, n: 2 })
  await sendData({ chat_id: 8, n: 3 })
  await waitFor(async () => (hook.hits.filter((h) => h.json.data.n === 2).length ? true : undefined), {
    timeoutMs: 10_000,
    message: 'the second delivery of chat 7',
  })
  const first = hook.hits.filter((h) => h.json.data.n === 1)
  assert.equal(first.length, 4, 'three failed attempts and the one that went through')
  const waits = first.slice(1).map((h, i) => h.at - first[i].at)
  // 200 ms doubling, ±25 %: about 200, 400, 800
  assert.ok(waits[0] >= 140 && waits[1] >= 290 && waits[2] >= 590, `waits grow: ${waits.join(', ')} ms`)
  assert.ok(waits[2] > waits[0], `waits grow: ${waits.join(', ')} ms`)
  const order = hook.hits.map((h) => h.json.data.n)
  assert.ok(order.lastIndexOf(1) < order.indexOf(2), `chat 7 in order: ${order.join(' ')}`)
  // positive control for the lane: the other chat went at once, before chat 7's first got through
  assert.ok(order.indexOf(3) < order.lastIndexOf(1), `chat 8 did not wait for chat 7: ${order.join(' ')}`)
})

test('an item held by an instance that crashed waits until its claim runs out, then runs; a free one runs at its time', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const socket = await TestSocket.connect(server.url, bob.token)
  after(() => socket.close())
  const due = Date.now() + 1500
  const held = await schedule(server, alice, bob, 'held by a crashed instance', new Date(due).toISOString())
  const free = await schedule(server, alice, bob, 'free', new Date(due).toISOString())
  // another instance claimed the first and crashed: its claim runs until due + 1.5 s
  const claimEnds = due + 1500
  const changed = await server.ctx.db
    .updateTable('work_queue')
    .set({ claimed_by: 'crashed', claimed_until: claimEnds })
    .where('kind', '=', 'scheduled')
    .where('item_key', '=', String(held.scheduled_id))
    .executeTakeFirst()
  assert.equal(Number(changed.numUpdatedRows), 1)
  void free
  const first = await socket.next('message.new', 4000)
  assert.equal(first.data.message.content, 'free', 'the free one went at its time')
  assert.ok(Date.now() < claimEnds, 'before the claim ran out')
  const second = await socket.next('message.new', 4000)
  assert.equal(second.data.message.content, 'held by a crashed instance')
  assert.ok(Date.now() >= claimEnds, 'only once the claim ran out')
})

test('a webhook delivery waiting for its retry survives a restart and goes out from the new process', async () => {
  const first = await startTestServer({ env: FAST })
  const hook = await receiver()
  hook.answer(() => 500)
  const { botId, sendData } = await botWithHook(first, hook.url)
  const id = await sendData({ n: 'across' })
  await waitFor(async () => (hook.hits.length ? true : undefined), { timeoutMs: 5000, message: 'a first failed attempt' })
  const second = await first.restart()
  after(() => second.close())
  hook.answer(() => 200)
  await waitFor(async () => (hook.hits.some((h) => h.id === `msg_${id}` && h !== hook.hits[0]) ? true : undefined), {
    timeoutMs: 8000,
    message: 'sent again after the restart',
  })
  const row = await waitFor(
    async () => {
      const found = await second.ctx.db.selectFrom('bot_webhook_deliveries').selectAll().where('bot_id', '=', botId).executeTakeFirst()
      return found?.status === 'delivered' ? found : undefined
    },
    { timeoutMs: 5000, message: 'recorded as delivered' },
  )
  assert.ok(row.attempts >= 2)
})

const pgSkip = testDatabaseUrl && testRedisUrl ? false : 'needs PostgreSQL + Redis (TEST_DATABASE_URL, TEST_REDIS_URL)'

test('two instances on one PostgreSQL + Redis: every queued delivery is posted once, each chat in order', {
  skip: pgSkip,
  timeout: 60_000,
}, async () => {
  const env = { ...FAST, REDIS_PREFIX: `tern-test-${randomBytes(6).toString('hex')}:` }
  const one = await startTestServer({ env })
  const two = await startTestServer({ database: one.database, env })
  after(() => two.close())
  after(() => one.close())
  // a slow receiver: each post takes 40 ms, so a second instance taking the same item would show
  const hook = await receiver(40)
  const { botId, sendData } = await botWithHook(one, hook.url)
  const ids: number[] = []
  for (let chat = 0; chat < 20; chat++) for (let n = 0; n < 3; n++) ids.push(await sendData({ chat_id: chat, n }))
  await waitFor(async () => (new Set(hook.hits.map((h) => h.id)).size === ids.length ? true : undefined), {
    timeoutMs: 20_000,
    message: 'every delivery posted',
  })
  await sleep(500)
  const counts = new Map<string, number>()
  for (const hit of hook.hits) counts.set(hit.id, (counts.get(hit.id) ?? 0) + 1)
  assert.deepEqual(
    [...counts.values()].filter((n) => n !== 1),
    [],
    'no delivery posted twice',
  )
  // each chat's deliveries in order
  for (let chat = 0; chat < 20; chat++) {
    assert.deepEqual(
      hook.hits.filter((h) => h.json.data.chat_id === chat).map((h) => h.json.data.n),
      [0, 1, 2],
      `chat ${chat} in order`,
    )
  }
  // the work was there to share: both instances ran webhook items
  const ran = (on: TestServer) => on.ctx.metrics.sources.jobs().find((job) => job.name === 'webhook-delivery')?.runs ?? 0
  assert.ok(ran(one) + ran(two) >= 20, `${ran(one)} + ${ran(two)} runs`)
  void botId
})
