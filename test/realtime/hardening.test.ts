/**
 * The gateway against hostile and stale clients: frame types that name Object.prototype's members,
 * sockets of a session that ended (logout, revoke, ban) closed at once on every instance, cursors
 * ahead of the log, too many sockets, a plain HTTP request, and a server shutting down.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import WebSocket from 'ws'
import { createGroup } from '../harness/fixtures.js'
import { testDatabaseUrl, testRedisUrl } from '../harness/database.js'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { assertDelivered, assertNone, TestSocket } from '../harness/socket.js'

const server = await startTestServer()

/** A fresh session (device) of the user: its token. */
async function login(on: TestServer, user: TestUser): Promise<string> {
  const res = await on.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
  assert.equal(res.status, 200, res.text)
  return res.body.data.session_token
}

/** The upgrade's HTTP status when it is refused (e.g. 401), or 101. */
function upgradeStatus(on: TestServer, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${on.url.replace(/^http/, 'ws')}${V2}/ws`, { headers: { authorization: `Bearer ${token}` } })
    ws.once('open', () => {
      ws.terminate()
      resolve(101)
    })
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0)
      ws.terminate()
    })
    ws.once('error', reject)
  })
}

const PROTOTYPE_NAMES = [
  ...new Set([...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Function.prototype), 'prototype', '']),
]

test('frame types naming Object.prototype members get an error frame; the server and the socket go on', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const socket = await TestSocket.connect(server.url, bob.token)
  for (const type of PROTOTYPE_NAMES) {
    socket.send({ type })
    const error = await socket.next('error')
    assert.match(error.data.message, /unknown frame type/, type)
  }
  for (const junk of ['null', '[]', '"resume"', '42', '{"type":{"toString":1}}', '{"type":"resume","chats":{"__proto__":{"1":2}}}']) {
    socket.ws.send(junk)
    assert.equal((await socket.next('error')).type, 'error', junk)
  }
  // positive control: the same socket still works, and the server still answers
  socket.send({ type: 'ping' })
  await socket.next('pong')
  await send(alice, bob, 'still here')
  assert.equal((await socket.next('message.new')).data.message.content, 'still here')
  assert.equal((await server.api.get('/health')).status, 200)
})

test('logout closes the sockets of that session with 4001, and only those', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const phoneToken = await login(server, bob)
  const laptop = await TestSocket.connect(server.url, bob.token)
  const phone = await TestSocket.connect(server.url, phoneToken)
  assert.equal((await server.api.as(phoneToken).post(`${V2}/auth/logout`, {})).status, 200)
  assert.deepEqual(await phone.closing(), { code: 4001, reason: 'session revoked' })
  assert.equal(await upgradeStatus(server, phoneToken), 401)
  // the other session keeps its socket and its messages
  await send(alice, bob, 'to the laptop')
  assert.equal((await laptop.next('message.new')).data.message.content, 'to the laptop')
  assert.equal(laptop.closed, null)
})

test('the V1 logout (/api/auth/logout) closes the sockets of that session too', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const v1 = await server.api.post('/api/auth/login', { login: bob.username, password: bob.password })
  assert.equal(v1.status, 200, v1.text)
  const v1Token = v1.body.data.session_token as string
  const v1Socket = await TestSocket.connect(server.url, v1Token)
  const laptop = await TestSocket.connect(server.url, bob.token)
  assert.equal((await server.api.as(v1Token).post('/api/auth/logout', {})).status, 200)
  assert.deepEqual(await v1Socket.closing(), { code: 4001, reason: 'session revoked' })
  assert.equal(await upgradeStatus(server, v1Token), 401)
  await send(alice, bob, 'to the laptop')
  assert.equal((await laptop.next('message.new')).data.message.content, 'to the laptop')
})

test("DELETE sessions/{id} closes the sockets of the revoked session with 4001; the caller's stay", async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const phoneToken = await login(server, bob)
  const phone = await TestSocket.connect(server.url, phoneToken)
  const phone2 = await TestSocket.connect(server.url, phoneToken)
  const laptop = await TestSocket.connect(server.url, bob.token)
  const list = await bob.api.get(`${V2}/sessions`, { query: { per_page: 100 } })
  const other = (list.body.items as { id: number; is_current: boolean }[]).find((s) => !s.is_current)!
  assert.equal((await bob.api.delete(`${V2}/sessions/${other.id}`)).status, 200)
  assert.equal((await phone.closing()).code, 4001)
  assert.equal((await phone2.closing()).code, 4001)
  await send(alice, bob, 'after revoke')
  assert.equal((await laptop.next('message.new')).data.message.content, 'after revoke')
})

test('a ban closes every socket of the user with 4003 and refuses a reconnect; other users are untouched', async () => {
  const admin = await server.createAdmin()
  const [alice, bob] = await registerUsers(server, 2)
  const phoneToken = await login(server, bob)
  const sockets = [await TestSocket.connect(server.url, bob.token), await TestSocket.connect(server.url, phoneToken)]
  const alices = await TestSocket.connect(server.url, alice.token)
  assert.equal((await admin.api.post(`/api/admin/users/${bob.id}/ban`, { reason: 'spam' })).status, 200)
  for (const socket of sockets) assert.deepEqual(await socket.closing(), { code: 4003, reason: 'account suspended' })
  assert.equal(await upgradeStatus(server, bob.token), 401)
  // positive control: alice's socket is open and works
  const carol = (await registerUsers(server, 1))[0]
  await send(carol, alice, 'hi alice')
  assert.equal((await alices.next('message.new')).data.message.content, 'hi alice')
})

test("a resume ahead of the user's log gets reset with the current seq, and the socket keeps delivering", async () => {
  const [alice, bob] = await registerUsers(server, 2)
  await send(alice, bob, 'one')
  const socket = await TestSocket.connect(server.url, bob.token)
  const current = (await bob.api.get(`${V2}/updates`)).body.data.seq as number
  socket.send({ type: 'resume', seq: current + 1000 })
  const reset = await socket.next('reset')
  assert.deepEqual(reset.data, { reason: 'ahead', seq: current })
  await send(alice, bob, 'two')
  const frame = await socket.next('message.new')
  assert.deepEqual([frame.seq, frame.data.message.content], [current + 1, 'two'])
  // a resume within the log is no reset
  socket.send({ type: 'resume', seq: current })
  assert.equal((await socket.next('message.new')).seq, current + 1)
  await assertNone(socket, 'reset')
  // control: a resume ahead again is answered with reset
  await assertDelivered(socket, 'reset', async () => socket.send({ type: 'resume', seq: current + 1000 }))
})

test("a resume with a chat cursor ahead of the chat's log gets a reset for that chat and goes on", async () => {
  const [owner, member] = await registerUsers(server, 2)
  const group = await createGroup(owner, { title: 'Cursors' })
  assert.equal((await owner.api.post(`${V2}/groups/add-member`, { chat_id: group.group_id, user_id: member.id })).status, 200)
  const socket = await TestSocket.connect(server.url, member.token)
  const ready = socket.received[0]
  const at = ready.data.chats[group.group_id] as number
  socket.send({ type: 'resume', chats: { [group.group_id]: at + 50 } })
  assert.deepEqual((await socket.next('reset')).data, { chat_id: group.group_id, reason: 'ahead', chat_seq: at })
  await owner.api.post(`${V2}/messages/send`, { chat_id: group.group_id, content: 'live again' })
  const post = await socket.next('message.new')
  assert.deepEqual([post.chat_seq, post.data.message.content], [at + 1, 'live again'])
})

test('GET updates with since ahead of the log answers reset: true and the current seq', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  await send(alice, bob, 'x')
  const now = (await bob.api.get(`${V2}/updates`)).body.data
  assert.equal(now.reset, false)
  const ahead = await bob.api.get(`${V2}/updates`, { query: { since: now.seq + 5 } })
  assert.equal(ahead.status, 200)
  assert.deepEqual(ahead.body.data, { updates: [], seq: now.seq, reset: true })
  for (const since of ['1e400', '9007199254740993', '-1', '1.5']) {
    const res = await bob.api.get(`${V2}/updates`, { query: { since } })
    assert.equal(res.status, 400, since)
    assert.equal(res.body.error.code, 'validation_error')
  }
})

test('a resume naming a chat the user is not in tells nothing of that chat; a followed chat ahead still gets its reset', async () => {
  const [owner, outsider] = await registerUsers(server, 2)
  const secret = (await createGroup(owner, { title: 'Secret' })).group_id as number
  await owner.api.post(`${V2}/messages/send`, { chat_id: secret, content: 'private activity' })
  const open = (await createGroup(owner, { title: 'Followed' })).group_id as number
  assert.equal((await owner.api.post(`${V2}/groups/add-member`, { chat_id: open, user_id: outsider.id })).status, 200)
  const socket = await TestSocket.connect(server.url, outsider.token)
  const at = socket.received[0].data.chats[open] as number
  socket.send({ type: 'resume', chats: { [secret]: 1_000_000, [open]: at + 10 } })
  // control: the followed chat's cursor is answered; the other chat's is not (its chat_seq would leak)
  assert.deepEqual((await socket.next('reset')).data, { chat_id: open, reason: 'ahead', chat_seq: at })
  await assertNone(socket, 'reset')
  // control: the followed chat, named alone again, is answered again
  const [reset] = await assertDelivered(socket, 'reset', async () => socket.send({ type: 'resume', chats: { [open]: at + 10 } }))
  assert.equal(reset.data.chat_id, open)
})

test("GET chat/updates with since ahead of the chat's log answers reset: true and the current chat_seq", async () => {
  const [owner] = await registerUsers(server, 1)
  const group = (await owner.api.post(`${V2}/groups/create`, { title: 'Log' })).body.data.group_id as number
  await owner.api.post(`${V2}/messages/send`, { chat_id: group, content: 'one' })
  const now = (await owner.api.get(`${V2}/chat/updates`, { query: { chat_id: group } })).body.data
  assert.equal(now.reset, false)
  assert.ok(now.updates.length > 0)
  const ahead = await owner.api.get(`${V2}/chat/updates`, { query: { chat_id: group, since: now.chat_seq + 5 } })
  assert.equal(ahead.status, 200)
  assert.deepEqual(ahead.body.data, { updates: [], chat_seq: now.chat_seq, reset: true })
})

test('over WS_MAX_SOCKETS_PER_USER (2 here), the newest socket is closed with 4029; the others still deliver', async () => {
  const capped = await startTestServer({ env: { WS_MAX_SOCKETS_PER_USER: '2' } })
  const [alice, bob] = await registerUsers(capped, 2)
  const open = [await TestSocket.connect(capped.url, bob.token), await TestSocket.connect(capped.url, bob.token)]
  // the third is accepted, then closed before its ready (a socket let in would get ready instead)
  const ws = new WebSocket(`${capped.url.replace(/^http/, 'ws')}${V2}/ws`, { headers: { authorization: `Bearer ${bob.token}` } })
  const third = await new Promise<string>((resolve) => {
    const timer = setTimeout(() => resolve('neither closed nor ready within 3 s'), 3000)
    ws.on('message', (raw) => {
      if (JSON.parse(String(raw)).type !== 'ready') return
      clearTimeout(timer)
      resolve('ready: let in over the cap')
    })
    ws.once('close', (code, reason) => {
      clearTimeout(timer)
      resolve(`${code} ${reason}`)
    })
  })
  ws.terminate()
  assert.equal(third, '4029 too many sockets for this user')
  await send(alice, bob, 'to both')
  for (const socket of open) assert.equal((await socket.next('message.new')).data.message.content, 'to both')
  // a freed slot can be taken again
  await open[0].close()
  await new Promise((resolve) => setTimeout(resolve, 100))
  const again = await TestSocket.connect(capped.url, bob.token)
  assert.equal(again.closed, null)
  await capped.close()
})

test('GET ws without an Upgrade is 426 upgrade_required in the envelope', async () => {
  const [bob] = await registerUsers(server, 1)
  for (const api of [bob.api, server.api]) {
    const res = await api.get(`${V2}/ws`)
    assert.equal(res.status, 426)
    assert.deepEqual(res.body.success, false)
    assert.equal(res.body.error.code, 'upgrade_required')
    assert.equal(res.headers.get('upgrade'), 'websocket')
  }
})

test('a server that shuts down closes its sockets with 1001', async () => {
  const own = await startTestServer()
  const [bob] = await registerUsers(own, 1)
  const socket = await TestSocket.connect(own.url, bob.token)
  await own.close()
  assert.deepEqual(await socket.closing(), { code: 1001, reason: 'server shutting down' })
})

// Two instances on one PostgreSQL + Redis: the session ends through one, its sockets are on the other.
const skip = testDatabaseUrl && testRedisUrl ? false : 'needs PostgreSQL + Redis (TEST_DATABASE_URL, TEST_REDIS_URL)'
if (skip) console.log(`# SKIPPED two-instance session-close tests: ${skip}`)
const pair = skip
  ? null
  : await (async () => {
      const env = { REDIS_PREFIX: `tern-test-${randomBytes(6).toString('hex')}:` }
      const one = await startTestServer({ env })
      return { one, two: await startTestServer({ database: one.database, env }) }
    })()

test('two instances: logout, revoke and ban through one close the sockets on the other', { skip }, async () => {
  const { one, two } = pair!
  const admin = await one.createAdmin()
  const [alice, bob] = await registerUsers(one, 2)

  const phone = await login(one, bob)
  const phoneSocket = await TestSocket.connect(two.url, phone)
  const laptopSocket = await TestSocket.connect(two.url, bob.token)
  assert.equal((await one.api.as(phone).post(`${V2}/auth/logout`, {})).status, 200)
  assert.equal((await phoneSocket.closing()).code, 4001)
  assert.equal(await upgradeStatus(two, phone), 401)

  const tablet = await login(one, bob)
  const tabletSocket = await TestSocket.connect(two.url, tablet)
  const sessions = (await one.api.as(bob.token).get(`${V2}/sessions`, { query: { per_page: 100 } })).body.items as {
    id: number
    is_current: boolean
  }[]
  const tabletId = sessions.find((s) => !s.is_current)!.id
  assert.equal((await one.api.as(bob.token).delete(`${V2}/sessions/${tabletId}`)).status, 200)
  assert.equal((await tabletSocket.closing()).code, 4001)
  assert.equal(await upgradeStatus(two, tablet), 401)

  // positive control: the laptop's socket on instance two survived both and still delivers
  await send(alice, bob, 'still on two')
  assert.equal((await laptopSocket.next('message.new')).data.message.content, 'still on two')

  assert.equal((await admin.api.post(`/api/admin/users/${bob.id}/ban`, {})).status, 200)
  assert.equal((await laptopSocket.closing()).code, 4003)
  assert.equal(await upgradeStatus(two, bob.token), 401)
})

test('a resume in the upgrade URL (?seq=) replays what was missed before anything live: every seq once, in order', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  for (let i = 0; i < 5; i++) await send(alice, bob, `missed ${i}`)
  const missedFrom = 0
  let sending = true
  const live = (async () => {
    for (let i = 0; sending; i++) await send(alice, bob, `live ${i}`)
  })()
  try {
    for (let round = 0; round < 5; round++) {
      const socket = await TestSocket.connect(server.url, bob.token, 'header', { seq: String(missedFrom) })
      await new Promise((resolve) => setTimeout(resolve, 40))
      const seqs = socket.received.filter((f) => f.seq !== undefined).map((f) => f.seq!)
      assert.equal(socket.received[0].type, 'ready')
      assert.ok(seqs.length >= 5, `replayed ${seqs.length}`)
      assert.deepEqual(
        seqs,
        seqs.map((_, k) => missedFrom + 1 + k),
        'from seq 1, contiguous: nothing twice, nothing out of order',
      )
      await socket.close()
    }
  } finally {
    sending = false
    await live
  }
  // a position the URL cannot name closes the socket with 1008, saying how it should look
  const bad = new WebSocket(`${server.url.replace(/^http/, 'ws')}${V2}/ws?seq=abc`, { headers: { authorization: `Bearer ${bob.token}` } })
  const [code, reason] = await new Promise<[number, string]>((resolve) => bad.once('close', (c, r) => resolve([c, String(r)])))
  assert.equal(code, 1008)
  assert.match(reason, /seq/)
})
