/**
 * Outgoing bot webhooks: signed deliveries a
 * receiver verifies with the `standardwebhooks` package, retries against a receiver that fails or
 * is down and then recovers (every delivery, in order, once; the log shows the attempts), the
 * refusal of private addresses, redeliver, webhook/send, owners only, and the Bot API's
 * setWebhook / getWebhookInfo / deleteWebhook with getUpdates' 409.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { send } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestServer, type TestUser } from '../harness/server.js'
import { sleep, waitFor } from '../harness/wait.js'

const FAST = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '40', WEBHOOK_DELIVERY_INTERVAL_MS: '20' }
const server = await startTestServer({ env: FAST })

interface Received {
  headers: http.IncomingHttpHeaders
  body: string
  json: any
  answered: number
}

/** A local webhook receiver: answers `status(request)` (500 to fail), keeps every request. */
async function startReceiver(port = 0) {
  const received: Received[] = []
  let answer: (body: any) => number = () => 200
  const listener = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const json = JSON.parse(body)
      const status = answer(json)
      received.push({ headers: request.headers, body, json, answered: status })
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'no')
    })
  })
  listener.listen(port, '127.0.0.1')
  await once(listener, 'listening')
  const receiver = {
    url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/hook`,
    port: (listener.address() as AddressInfo).port,
    received,
    /** the requests answered 2xx */
    accepted: () => received.filter((r) => r.answered === 200),
    answerWith(fn: (body: any) => number) {
      answer = fn
    },
    close: () =>
      new Promise<void>((resolve) => {
        listener.closeAllConnections()
        listener.close(() => resolve())
      }),
  }
  after(() => receiver.close())
  return receiver
}

async function registerBot(owner: TestUser, on: TestServer = server) {
  const res = await owner.api.post('/api/bots/register', { name: 'Hook', username: `${uniqueName('w').slice(0, 24)}_bot` })
  assert.equal(res.status, 200, res.text)
  void on
  return res.body.data as { bot_id: number; token: string; username: string }
}

async function setHook(owner: TestUser, botId: number, body: Record<string, unknown>) {
  const res = await owner.api.post(`/api/bots/${botId}/webhook`, body)
  assert.equal(res.status, 200, res.text)
  return res.body.data as { url: string; secret: string; is_active: boolean }
}

async function botApi(on: TestServer, token: string, method: string, body: Record<string, unknown> = {}) {
  const res = await fetch(`${on.url}/bot${token}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as any }
}

async function deliveries(owner: TestUser, botId: number, query: Record<string, number> = {}) {
  const res = await owner.api.get(`/api/bots/${botId}/deliveries`, { query: { per_page: 100, ...query } })
  assert.equal(res.status, 200, res.text)
  return res.body as { items: any[]; total: number; page: number; per_page: number }
}

const toBot = (botId: number) => ({ id: botId }) as TestUser

test('webhook/send: a delivery signed the Standard Webhooks way, verified by the standardwebhooks package', async () => {
  const owner = await server.registerUser()
  const bot = await registerBot(owner)
  const receiver = await startReceiver()
  const hook = await setHook(owner, bot.bot_id, { url: receiver.url })
  assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]+=*$/)
  assert.equal(Buffer.from(hook.secret.slice(6), 'base64').length, 32)
  assert.equal(hook.is_active, true)

  const sent = await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: { hello: 'world', n: 1 } })
  assert.equal(sent.status, 200, sent.text)
  const deliveryId = sent.body.data.delivery_id
  assert.ok(Number.isInteger(deliveryId))
  const [got] = await waitFor(async () => (receiver.received.length ? receiver.received : undefined), {
    timeoutMs: 5000,
    message: 'the delivery arrives',
  })
  assert.deepEqual(got.json, { type: 'custom', data: { hello: 'world', n: 1 } })
  assert.equal(got.headers['webhook-id'], `msg_${deliveryId}`)
  assert.equal(got.headers['content-type'], 'application/json')
  // the receiver's check: throws on a bad signature, a stale timestamp or a missing header
  const verified = new Webhook(hook.secret).verify(got.body, got.headers as Record<string, string>)
  assert.deepEqual(verified, got.json)
  // negative controls: another secret, or a changed body, fail the same check
  assert.throws(() =>
    new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(got.body, got.headers as Record<string, string>),
  )
  assert.throws(() => new Webhook(hook.secret).verify(got.body.replace('world', 'World'), got.headers as Record<string, string>))

  const log = await waitFor(
    async () => {
      const page = await deliveries(owner, bot.bot_id)
      return page.items[0]?.status === 'delivered' ? page : undefined
    },
    { timeoutMs: 3000, message: 'the log shows it delivered' },
  )
  assert.equal(log.total, 1)
  assert.equal(log.items[0].id, deliveryId)
  assert.equal(log.items[0].attempts, 1)
  assert.equal(log.items[0].last_status_code, 200)
  assert.equal(log.items[0].kind, 'custom')
  assert.ok(log.items[0].delivered_at)

  // an owner-chosen secret is used as given
  const mine = `whsec_${Buffer.alloc(24, 9).toString('base64')}`
  assert.equal((await setHook(owner, bot.bot_id, { url: receiver.url, secret: mine })).secret, mine)
  await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: 'second' })
  const second = await waitFor(async () => receiver.received[1], { timeoutMs: 5000, message: 'the second delivery' })
  assert.equal(new Webhook(mine).verify(second.body, second.headers as Record<string, string>) !== undefined, true)
  assert.throws(() => new Webhook(hook.secret).verify(second.body, second.headers as Record<string, string>))
  // no secret given: the webhook keeps its key
  assert.equal((await setHook(owner, bot.bot_id, { url: receiver.url, is_active: true })).secret, mine)
})

test('bad webhook input: a malformed URL or secret is 400; webhook/send without a webhook is 409; a paused one holds deliveries', async () => {
  const owner = await server.registerUser()
  const bot = await registerBot(owner)
  for (const body of [
    { url: 'not a url' },
    { url: 'ftp://127.0.0.1/x' },
    { url: 'http://user:pw@127.0.0.1/x' },
    { url: 'http://127.0.0.1/', secret: 'plain' },
    { url: 'http://127.0.0.1/', secret: 'whsec_AAAA' },
    { url: 'http://no-such-host.invalid/' },
  ]) {
    const res = await owner.api.post(`/api/bots/${bot.bot_id}/webhook`, body)
    assert.equal(res.status, 400, `${JSON.stringify(body)} ${res.text}`)
    assert.equal(res.body.success, false)
  }
  const noHook = await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: 1 })
  assert.equal(noHook.status, 409, noHook.text)
  const receiver = await startReceiver()
  await setHook(owner, bot.bot_id, { url: receiver.url, is_active: false })
  const paused = await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: 'held' })
  assert.equal(paused.status, 200, paused.text)
  await sleep(300)
  assert.equal(receiver.received.length, 0, 'nothing goes to a paused webhook')
  assert.equal((await deliveries(owner, bot.bot_id)).items[0].status, 'pending')
  // positive control: active again, the held delivery goes out
  await setHook(owner, bot.bot_id, { url: receiver.url, is_active: true })
  await waitFor(async () => (receiver.received.length ? true : undefined), { timeoutMs: 5000, message: 'the held delivery goes out' })
  assert.deepEqual(
    receiver.received.map((r) => r.json.data),
    ['held'],
  )
  const missing = await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, {})
  assert.equal(missing.status, 400, missing.text)
})

test("a bot's updates go to its webhook in order, once each, with the secret token; getUpdates answers 409 meanwhile", async () => {
  const [owner, user] = [await server.registerUser(), await server.registerUser({ display_name: 'Una' })]
  const bot = await registerBot(owner)
  const receiver = await startReceiver()

  // before: long polling works (positive control for the 409 below)
  assert.equal((await botApi(server, bot.token, 'getUpdates')).status, 200)
  const set = await botApi(server, bot.token, 'setWebhook', { url: receiver.url, secret_token: 'tok_en-1' })
  assert.deepEqual(set.body, { ok: true, result: true })
  const conflict = await botApi(server, bot.token, 'getUpdates')
  assert.equal(conflict.status, 409)
  assert.deepEqual(conflict.body, {
    ok: false,
    error_code: 409,
    description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
  })

  const texts = ['one', 'two', 'three', 'four', 'five']
  for (const text of texts) await send(user, toBot(bot.bot_id), text)
  const got = await waitFor(async () => (receiver.received.length >= texts.length ? receiver.received : undefined), {
    timeoutMs: 5000,
    message: 'five updates arrive',
  })
  await sleep(300)
  assert.equal(receiver.received.length, texts.length, 'each update once')
  assert.deepEqual(
    got.map((r) => r.json.message.text),
    texts,
  )
  const ids = got.map((r) => r.json.update_id)
  assert.deepEqual(
    ids,
    ids.map((_, i) => ids[0] + i),
    'consecutive update ids',
  )
  for (const r of got) {
    assert.equal(r.headers['x-telegram-bot-api-secret-token'], 'tok_en-1')
    assert.equal(r.json.message.from.first_name, 'Una')
    assert.equal(r.json.message.chat.type, 'private')
    assert.ok(r.headers['webhook-signature'])
  }

  const info = await botApi(server, bot.token, 'getWebhookInfo')
  assert.equal(info.body.result.url, receiver.url)
  assert.equal(info.body.result.pending_update_count, 0)
  assert.equal(info.body.result.last_error_date, undefined)
  const log = await deliveries(owner, bot.bot_id)
  assert.deepEqual(
    log.items.map((d) => d.update_id),
    [...ids].reverse(),
    'the log, newest first',
  )
  assert.ok(log.items.every((d) => d.kind === 'update' && d.status === 'delivered'))

  // deleteWebhook: the next update waits for getUpdates with the same id sequence
  assert.deepEqual((await botApi(server, bot.token, 'deleteWebhook')).body, { ok: true, result: true })
  assert.equal((await botApi(server, bot.token, 'getWebhookInfo')).body.result.url, '')
  await send(user, toBot(bot.bot_id), 'six')
  const polled = await waitFor(
    async () => {
      const res = await botApi(server, bot.token, 'getUpdates', { timeout: 1 })
      assert.equal(res.status, 200, JSON.stringify(res.body))
      return res.body.result.length ? res.body.result : undefined
    },
    { timeoutMs: 5000, message: 'getUpdates gets the update' },
  )
  assert.equal(polled[0].message.text, 'six')
  assert.equal(polled[0].update_id, ids[ids.length - 1] + 1)
  await sleep(200)
  assert.equal(receiver.received.length, texts.length, 'nothing more went to the removed webhook')
})

test('a receiver that fails, then recovers, gets every update in order once; the log shows the retries and codes', async () => {
  const [owner, user] = [await server.registerUser(), await server.registerUser()]
  const bot = await registerBot(owner)
  const receiver = await startReceiver()
  let failing = true
  receiver.answerWith(() => (failing ? 500 : 200))
  await setHook(owner, bot.bot_id, { url: receiver.url })

  const texts = ['a', 'b', 'c', 'd']
  for (const text of texts) await send(user, toBot(bot.bot_id), text)
  // the first is tried (and retried) while the others wait behind it
  await waitFor(async () => (receiver.received.length >= 3 ? true : undefined), { timeoutMs: 5000, message: 'three failed attempts' })
  assert.ok(
    receiver.received.every((r) => r.json.message.text === 'a'),
    'nothing overtakes the failing first update',
  )
  const during = await deliveries(owner, bot.bot_id)
  const head = during.items.find((d) => d.update_id === receiver.received[0].json.update_id)
  assert.equal(head.status, 'pending')
  assert.ok(head.attempts >= 2)
  assert.equal(head.last_status_code, 500)
  assert.match(head.last_error, /500/)
  const info = await botApi(server, bot.token, 'getWebhookInfo')
  assert.equal(info.body.result.pending_update_count, 4)
  assert.ok(info.body.result.last_error_date > 0)
  assert.match(info.body.result.last_error_message, /500/)

  failing = false
  await waitFor(async () => (receiver.accepted().length >= texts.length ? true : undefined), {
    timeoutMs: 10_000,
    message: 'all four delivered',
  })
  await sleep(300)
  assert.deepEqual(
    receiver.accepted().map((r) => r.json.message.text),
    texts,
    'every update, in order, once',
  )
  const log = await deliveries(owner, bot.bot_id)
  assert.ok(log.items.every((d) => d.status === 'delivered' && d.last_status_code === 200))
  const first = log.items[log.items.length - 1]
  assert.equal(first.attempts, receiver.received.filter((r) => r.json.message.text === 'a').length, 'every attempt counted')
  assert.ok(first.attempts >= 4)
  assert.ok(
    log.items.slice(0, 3).every((d) => d.attempts === 1),
    'the ones behind it needed one attempt',
  )
  // a delivery id is the same on every attempt (the receiver can drop a repeat)
  assert.equal(new Set(receiver.received.filter((r) => r.json.message.text === 'a').map((r) => r.headers['webhook-id'])).size, 1)
})

test('a receiver that is down for a while gets every delivery once it is back; chats do not wait for each other', async () => {
  const [owner, ann, bob] = [await server.registerUser(), await server.registerUser(), await server.registerUser()]
  const bot = await registerBot(owner)
  const first = await startReceiver()
  const port = first.port
  await setHook(owner, bot.bot_id, { url: first.url })
  await first.close()
  for (const text of ['a1', 'a2', 'a3']) await send(ann, toBot(bot.bot_id), text)
  await waitFor(
    async () => {
      const log = await deliveries(owner, bot.bot_id)
      return log.items.length === 3 && log.items.some((d) => d.attempts >= 2) ? true : undefined
    },
    { timeoutMs: 5000, message: 'attempts fail while the receiver is down' },
  )
  const down = await deliveries(owner, bot.bot_id)
  assert.ok(down.items.every((d) => d.status === 'pending'))
  assert.ok(
    down.items.some((d) => d.last_status_code === null && /ECONNREFUSED/.test(d.last_error)),
    JSON.stringify(down.items),
  )

  // back on the same port, but Ann's chat fails on its own: Bob's chat still gets through
  const back = await startReceiver(port)
  back.answerWith((body) => (body.message?.text?.startsWith('a') ? 500 : 200))
  for (const text of ['b1', 'b2']) await send(bob, toBot(bot.bot_id), text)
  await waitFor(async () => (back.accepted().length >= 2 ? true : undefined), { timeoutMs: 5000, message: "Bob's chat is delivered" })
  assert.deepEqual(
    back.accepted().map((r) => r.json.message.text),
    ['b1', 'b2'],
  )
  back.answerWith(() => 200)
  await waitFor(async () => (back.accepted().length >= 5 ? true : undefined), { timeoutMs: 10_000, message: "Ann's chat is delivered" })
  await sleep(300)
  assert.deepEqual(
    back
      .accepted()
      .filter((r) => r.json.message.text.startsWith('a'))
      .map((r) => r.json.message.text),
    ['a1', 'a2', 'a3'],
  )
  assert.equal(back.accepted().length, 5)
})

test('redeliver queues a copy of a delivered delivery; a pending one is 409, an unknown one 404', async () => {
  const owner = await server.registerUser()
  const bot = await registerBot(owner)
  const receiver = await startReceiver()
  await setHook(owner, bot.bot_id, { url: receiver.url })
  const { delivery_id: id } = (await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: { chat_id: 5, v: 'x' } })).body.data
  await waitFor(async () => ((await deliveries(owner, bot.bot_id)).items[0]?.status === 'delivered' ? true : undefined), {
    timeoutMs: 5000,
    message: 'delivered',
  })

  const again = await owner.api.post(`/api/bots/${bot.bot_id}/deliveries/${id}/redeliver`)
  assert.equal(again.status, 200, again.text)
  const copyId = again.body.data.delivery_id
  assert.notEqual(copyId, id)
  await waitFor(async () => (receiver.received.length >= 2 ? true : undefined), { timeoutMs: 5000, message: 'the copy arrives' })
  assert.equal(receiver.received[1].body, receiver.received[0].body)
  assert.equal(receiver.received[1].headers['webhook-id'], `msg_${copyId}`)
  const log = await deliveries(owner, bot.bot_id)
  assert.deepEqual(
    log.items.map((d) => d.id),
    [copyId, id],
  )
  assert.equal(log.items.find((d) => d.id === id).attempts, 1, 'the original keeps its history')

  receiver.answerWith(() => 500)
  const { delivery_id: stuck } = (await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: 'stuck' })).body.data
  const pending = await owner.api.post(`/api/bots/${bot.bot_id}/deliveries/${stuck}/redeliver`)
  assert.equal(pending.status, 409, pending.text)
  const unknown = await owner.api.post(`/api/bots/${bot.bot_id}/deliveries/999999999/redeliver`)
  assert.equal(unknown.status, 404, unknown.text)
})

test("only the owner sets, uses or reads a bot's webhook (404 for anyone else)", async () => {
  const [owner, other] = [await server.registerUser(), await server.registerUser()]
  const bot = await registerBot(owner)
  const receiver = await startReceiver()
  await setHook(owner, bot.bot_id, { url: receiver.url })
  const { delivery_id: id } = (await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: 1 })).body.data
  await waitFor(async () => (receiver.received.length ? true : undefined), { timeoutMs: 5000, message: 'delivered' })
  const calls = [
    other.api.post(`/api/bots/${bot.bot_id}/webhook`, { url: 'http://127.0.0.1:1/evil' }),
    other.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: 2 }),
    other.api.get(`/api/bots/${bot.bot_id}/deliveries`),
    other.api.post(`/api/bots/${bot.bot_id}/deliveries/${id}/redeliver`),
  ]
  for (const res of await Promise.all(calls)) assert.equal(res.status, 404, res.text)
  assert.equal((await server.api.get(`/api/bots/${bot.bot_id}/deliveries`)).status, 401)
  // nothing changed: the owner's webhook and log are as they were
  const log = await deliveries(owner, bot.bot_id)
  assert.equal(log.total, 1)
  await sleep(200)
  assert.equal(receiver.received.length, 1)
  assert.equal((await setHook(owner, bot.bot_id, { url: receiver.url })).url, receiver.url)
})

test('the delivery log pages newest first', async () => {
  const owner = await server.registerUser()
  const bot = await registerBot(owner)
  const receiver = await startReceiver()
  await setHook(owner, bot.bot_id, { url: receiver.url })
  const ids: number[] = []
  for (let i = 0; i < 5; i++) ids.push((await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: i })).body.data.delivery_id)
  const page1 = await deliveries(owner, bot.bot_id, { per_page: 2, page: 1 })
  const page3 = await deliveries(owner, bot.bot_id, { per_page: 2, page: 3 })
  assert.equal(page1.total, 5)
  assert.deepEqual(
    page1.items.map((d) => d.id),
    [ids[4], ids[3]],
  )
  assert.deepEqual(
    page3.items.map((d) => d.id),
    [ids[0]],
  )
})

test('private, loopback and link-local destinations are refused without WEBHOOK_ALLOW_PRIVATE, at set time and at delivery time', async () => {
  const strict = await startTestServer({ env: { WEBHOOK_RETRY_BASE_MS: '40', WEBHOOK_DELIVERY_INTERVAL_MS: '20' } })
  after(() => strict.close())
  const owner = await strict.registerUser()
  const bot = await registerBot(owner, strict)
  const receiver = await startReceiver()
  for (const url of [
    receiver.url,
    'http://localhost:9/x',
    'http://10.1.2.3/x',
    'http://169.254.169.254/latest',
    'http://[::1]:9/x',
    'http://192.168.1.1/x',
    'http://[::127.0.0.1]:9/x',
    'http://[::7f00:1]:9/x',
    'http://[::ffff:0:127.0.0.1]:9/x',
    'http://[64:ff9b:1::7f00:1]:9/x',
    'http://[2002:7f00:1::]:9/x',
  ]) {
    const res = await owner.api.post(`/api/bots/${bot.bot_id}/webhook`, { url })
    assert.equal(res.status, 400, `${url}: ${res.text}`)
    assert.match(res.body.error.message, /private, loopback or link-local/)
  }
  const viaBotApi = await botApi(strict, bot.token, 'setWebhook', { url: receiver.url })
  assert.equal(viaBotApi.status, 400)
  assert.match(viaBotApi.body.description, /^Bad Request: bad webhook: .*private/)
  assert.equal((await botApi(strict, bot.token, 'getUpdates')).status, 200, 'no webhook was set')

  // a webhook whose address turned private after it was set (DNS rebinding): the attempt is refused
  const now = Date.now()
  await strict.ctx.db
    .insertInto('bot_webhooks')
    .values({
      bot_id: bot.bot_id,
      url: receiver.url,
      secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
      secret_token: null,
      is_active: 1,
      verified_at: null,
      last_error_at: null,
      last_error_message: null,
      created_at: now,
      updated_at: now,
    })
    .execute()
  const sent = await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: 'to a private address' })
  assert.equal(sent.status, 200, sent.text)
  const refused = await waitFor(
    async () => {
      const [row] = await (async () => {
        const res = await owner.api.get(`/api/bots/${bot.bot_id}/deliveries`)
        return res.body.items as any[]
      })()
      return row && row.attempts >= 2 ? row : undefined
    },
    { timeoutMs: 5000, message: 'the attempts are refused' },
  )
  assert.equal(refused.status, 'pending')
  assert.match(refused.last_error, /refused: .*private, loopback or link-local/)
  assert.equal(receiver.received.length, 0, 'nothing reached the private address')

  // positive control: with WEBHOOK_ALLOW_PRIVATE=true (the main server) the same receiver is set and reached
  const owner2 = await server.registerUser()
  const bot2 = await registerBot(owner2)
  await setHook(owner2, bot2.bot_id, { url: receiver.url })
  await owner2.api.post(`/api/bots/${bot2.bot_id}/webhook/send`, { data: 'allowed' })
  await waitFor(async () => (receiver.received.length ? true : undefined), { timeoutMs: 5000, message: 'the allowed delivery arrives' })
  assert.deepEqual(
    receiver.received.map((r) => r.json.data),
    ['allowed'],
  )
})

test('https is required with WEBHOOK_REQUIRE_HTTPS (NODE_ENV=production); http is allowed otherwise', async () => {
  const production = await startTestServer({ env: { ...FAST, NODE_ENV: 'production' } })
  after(() => production.close())
  const owner = await production.registerUser()
  const bot = await registerBot(owner, production)
  const res = await owner.api.post(`/api/bots/${bot.bot_id}/webhook`, { url: 'http://127.0.0.1:9/hook' })
  assert.equal(res.status, 400, res.text)
  assert.match(res.body.error.message, /https/)
  const viaBotApi = await botApi(production, bot.token, 'setWebhook', { url: 'http://127.0.0.1:9/hook' })
  assert.equal(viaBotApi.status, 400)
  // positive control: the same URL on the development server
  const owner2 = await server.registerUser()
  const bot2 = await registerBot(owner2)
  assert.equal((await setHook(owner2, bot2.bot_id, { url: 'http://127.0.0.1:9/hook' })).url, 'http://127.0.0.1:9/hook')
})

test('a delivery still failing when its retry time is over is marked failed, and the next of its chat goes', async () => {
  const brief = await startTestServer({ env: { ...FAST, WEBHOOK_RETRY_FOR_SECONDS: '1' } })
  after(() => brief.close())
  const owner = await brief.registerUser()
  const bot = await registerBot(owner, brief)
  const receiver = await startReceiver()
  receiver.answerWith((body) => (body.data === 'doomed' ? 503 : 200))
  await setHook(owner, bot.bot_id, { url: receiver.url })
  const { delivery_id: doomed } = (await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: 'doomed' })).body.data
  const { delivery_id: next } = (await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: 'next' })).body.data
  const log = await waitFor(
    async () => {
      const items = (await deliveries(owner, bot.bot_id)).items
      return items.every((d) => d.status !== 'pending') ? items : undefined
    },
    { timeoutMs: 8000, intervalMs: 100, message: 'both settle' },
  )
  const byId = new Map(log.map((d) => [d.id, d]))
  assert.equal(byId.get(doomed).status, 'failed')
  assert.equal(byId.get(doomed).last_status_code, 503)
  assert.ok(byId.get(doomed).attempts >= 2)
  assert.equal(byId.get(next).status, 'delivered')
  // the next one waited for the first to be given up
  const order = receiver.received.map((r) => r.json.data)
  assert.equal(order.lastIndexOf('doomed') < order.indexOf('next'), true)
})

test('the queue survives a restart: a delivery pending when the server stops goes out from the new one', async () => {
  const first = await startTestServer({ env: FAST })
  const owner = await first.registerUser()
  const bot = await registerBot(owner, first)
  const receiver = await startReceiver()
  receiver.answerWith(() => 500)
  await setHook(owner, bot.bot_id, { url: receiver.url })
  await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: 'across a restart' })
  await waitFor(async () => (receiver.received.length ? true : undefined), { timeoutMs: 5000, message: 'a first failed attempt' })
  const second = await first.restart()
  after(() => second.close())
  receiver.answerWith(() => 200)
  await waitFor(async () => (receiver.accepted().length ? true : undefined), {
    timeoutMs: 8000,
    message: 'delivered by the restarted server',
  })
  // the receiver's 200 is in before the server has recorded it: wait for the row to settle
  const rows = await waitFor(
    async () => {
      const found = await second.ctx.db.selectFrom('bot_webhook_deliveries').selectAll().where('bot_id', '=', bot.bot_id).execute()
      return found.some((row) => row.status === 'pending') ? undefined : found
    },
    { timeoutMs: 5000, message: 'the delivery recorded' },
  )
  assert.equal(rows.length, 1)
  assert.equal(rows[0].status, 'delivered')
  assert.ok(rows[0].attempts >= 2)
})

test('an attempt times out after 5 s, and a redirect is not followed: both are failed attempts, retried', { timeout: 30_000 }, async () => {
  const owner = await server.registerUser()
  const bot = await registerBot(owner)
  const target = await startReceiver()
  let mode: 'hang' | 'redirect' | 'ok' = 'hang'
  const hung: http.ServerResponse[] = []
  const listener = http.createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      if (mode === 'hang') return void hung.push(response)
      if (mode === 'redirect') return void response.writeHead(307, { location: target.url }).end()
      response.writeHead(200).end()
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
  await setHook(owner, bot.bot_id, { url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/slow` })
  const started = Date.now()
  await owner.api.post(`/api/bots/${bot.bot_id}/webhook/send`, { data: 'slow' })
  const timedOut = await waitFor(
    async () => {
      const [row] = (await deliveries(owner, bot.bot_id)).items
      return row?.attempts >= 1 ? row : undefined
    },
    { timeoutMs: 10_000, intervalMs: 100, message: 'the first attempt times out' },
  )
  const took = Date.now() - started
  assert.ok(took >= 5000 && took < 9000, `timed out after ${took} ms`)
  assert.equal(timedOut.status, 'pending')
  assert.equal(timedOut.last_status_code, null)
  assert.match(timedOut.last_error, /no answer within 5 s/)

  mode = 'redirect'
  const redirected = await waitFor(
    async () => {
      const [row] = (await deliveries(owner, bot.bot_id)).items
      return row?.last_status_code === 307 ? row : undefined
    },
    { timeoutMs: 10_000, intervalMs: 50, message: 'an attempt gets the redirect' },
  )
  assert.equal(redirected.status, 'pending')
  assert.match(redirected.last_error, /redirect \(307\) not followed/)
  assert.equal(target.received.length, 0, 'the redirect target got nothing')

  // positive control: the same delivery goes through once the receiver answers
  mode = 'ok'
  const done = await waitFor(
    async () => {
      const [row] = (await deliveries(owner, bot.bot_id)).items
      return row?.status === 'delivered' ? row : undefined
    },
    { timeoutMs: 10_000, intervalMs: 50, message: 'delivered at last' },
  )
  assert.equal(done.last_status_code, 200)
  assert.ok(done.attempts >= 3)
  for (const response of hung) response.destroy()
})
