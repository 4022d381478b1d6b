/**
 * Rate limits on writes: per user and per client IP on every non-GET request, shared
 * by instances through Redis; and frames per second per gateway socket, with an error frame and
 * then a close for a client that keeps on.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import test, { after } from 'node:test'
import { assertError } from '../harness/assert.js'
import { testRedisUrl } from '../harness/database.js'
import { TestSocket } from '../harness/socket.js'
import { startTestServer, type TestServer } from '../harness/server.js'

const V2 = '/api.v2/api'
const servers: TestServer[] = []
after(() => Promise.all(servers.map((server) => server.close())))
const start = async (env: Record<string, string>, database?: TestServer['database']) => {
  const server = await startTestServer({ env, ...(database ? { database } : {}) })
  servers.push(server)
  return server
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until a fixed window of `seconds` has at least `needed` seconds left (windows are floor(now / length)). */
async function awayFromWindowEdge(seconds: number, needed = 5) {
  const left = seconds * 1000 - (Date.now() % (seconds * 1000))
  if (left < needed * 1000) await sleep(left + 50)
}

async function history(server: TestServer, token: string, chatId: number): Promise<string[]> {
  const res = await server.api.as(token).get(`${V2}/chat/history`, { query: { chat_id: String(chatId) } })
  assert.equal(res.status, 200)
  return res.body.items.map((message: { content: string }) => message.content)
}

test('a user past WRITE_RATE_LIMIT_USER gets 429 rate_limited with Retry-After and nothing is written; others and reads go on', async () => {
  await awayFromWindowEdge(60)
  const server = await start({ WRITE_RATE_LIMIT_USER: '5/60' })
  const [ann, ben, cat] = [await server.registerUser(), await server.registerUser(), await server.registerUser()]
  let chatId = 0
  for (let i = 0; i < 5; i++) {
    const sent = await ann.api.post(`${V2}/messages/send`, { receiver_id: ben.id, content: `within ${i}` })
    assert.equal(sent.status, 200, sent.text)
    chatId = sent.body.data.chat_id
  }
  const refused = await ann.api.post(`${V2}/messages/send`, { receiver_id: ben.id, content: 'one too many' })
  assertError(refused, 429, 'rate_limited')
  const retryAfter = Number(refused.headers.get('retry-after'))
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`)
  // every write counts, not only sends
  assertError(await ann.api.post(`${V2}/messages/send`, { receiver_id: cat.id, content: 'elsewhere' }), 429, 'rate_limited')
  const stored = await history(server, ben.token, chatId)
  assert.equal(stored.length, 5)
  assert.ok(!stored.includes('one too many'))
  // reads are not writes; another user from the same address is not limited by ann's count
  assert.equal((await ann.api.get(`${V2}/chat_list`)).status, 200)
  assert.equal((await ben.api.post(`${V2}/messages/send`, { receiver_id: ann.id, content: 'ben may' })).status, 200)
})

test('a client IP past WRITE_RATE_LIMIT_IP is refused before anything runs, signed in or not; another IP is not (TRUST_PROXY)', async () => {
  await awayFromWindowEdge(60)
  const server = await start({ WRITE_RATE_LIMIT_IP: '6/60', TRUST_PROXY: '1' })
  const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } })
  const login = (ip: string) => server.api.post(`${V2}/auth/login`, { login: 'nobody_here', password: 'wrong password' }, from(ip))
  for (let i = 0; i < 6; i++) assert.equal((await login('203.0.113.7')).status, 401)
  const refused = await login('203.0.113.7')
  assertError(refused, 429, 'rate_limited')
  assert.ok(Number(refused.headers.get('retry-after')) >= 1)
  // the control: another address writes on
  assert.equal((await login('203.0.113.8')).status, 401)
  // reads from the limited address still answer
  assert.equal((await server.api.get('/health', from('203.0.113.7'))).status, 200)
})

test('the per-user counts are shared by instances through Redis', async (t) => {
  if (!testRedisUrl) {
    t.skip('needs TEST_REDIS_URL (npm run test:pg sets it): two instances sharing Redis')
    return
  }
  await awayFromWindowEdge(60)
  const env = { WRITE_RATE_LIMIT_USER: '6/60', REDIS_PREFIX: `tern-test-${randomBytes(6).toString('hex')}:` }
  const a = await start(env)
  const b = await start(env, a.database)
  const [ann, ben] = [await a.registerUser(), await a.registerUser()]
  const send = (server: TestServer, content: string) =>
    server.api.as(ann.token).post(`${V2}/messages/send`, { receiver_id: ben.id, content })
  for (let i = 0; i < 3; i++) assert.equal((await send(a, `a${i}`)).status, 200)
  await sleep(700)
  for (let i = 0; i < 3; i++) assert.equal((await send(b, `b${i}`)).status, 200)
  await sleep(700)
  // six in all, three on each: both instances now refuse the seventh
  assertError(await send(a, 'a7'), 429, 'rate_limited')
  assertError(await send(b, 'b7'), 429, 'rate_limited')
  const keys = await a.ctx.redis!.keys(`${env.REDIS_PREFIX}wl:user:*`)
  assert.ok(keys.length >= 1, 'the counts are in Redis')
  // the control: ben, on the same instances, is within his limit
  assert.equal((await b.api.as(ben.token).post(`${V2}/messages/send`, { receiver_id: ann.id, content: 'ben' })).status, 200)
})

test('a socket past WS_FRAME_RATE_LIMIT gets one rate_limited error frame, and is closed (1008) when it keeps on', async () => {
  await awayFromWindowEdge(60)
  const server = await start({ WS_FRAME_RATE_LIMIT: '5/60' })
  const user = await server.registerUser()
  const socket = await TestSocket.connect(server.url, user.token)
  const other = await TestSocket.connect(server.url, user.token)
  for (let i = 0; i < 5; i++) socket.ws.send(JSON.stringify({ type: 'ping' }))
  for (let i = 0; i < 5; i++) await socket.next('pong')
  socket.ws.send(JSON.stringify({ type: 'ping' }))
  const error = await socket.next('error')
  assert.equal(error.data.code, 'rate_limited')
  assert.ok(error.data.retry_after >= 1)
  // dropped, not answered
  socket.ws.send(JSON.stringify({ type: 'ping' }))
  await sleep(200)
  assert.equal(socket.frames.filter((frame) => frame.type === 'pong').length, 0)
  assert.equal(socket.closed, null)
  // keeps on past twice the limit: closed
  for (let i = 0; i < 10; i++) socket.ws.send(JSON.stringify({ type: 'ping' }))
  for (let i = 0; i < 50 && !socket.closed; i++) await sleep(20)
  const closed = socket.closed as { code: number; reason: string } | null
  assert.equal(closed?.code, 1008)
  assert.equal(closed?.reason, 'too many frames')
  // the control: the user's other socket has its own budget
  other.ws.send(JSON.stringify({ type: 'ping' }))
  await other.next('pong')
})
