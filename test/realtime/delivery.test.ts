import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestServer } from '../harness/server.js'
import { assertOpeningsInOrder, TestSocket } from '../harness/socket.js'

const server = await startTestServer()
const V2 = '/api.v2/api'
const connect = (token: string, via: 'header' | 'query' = 'header') => TestSocket.connect(server.url, token, via)

test("a message reaches the receiver and the sender's other device, with their own seqs", async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const bobSocket = await connect(bob.token)
  const aliceLogin = await server.api.post(`${V2}/auth/login`, { login: alice.username, password: alice.password })
  const alicePhone = await connect(aliceLogin.body.data.session_token, 'query')
  const sent = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'hi bob' })
  const frame = await bobSocket.next('message.new')
  assert.equal(frame.seq, 1)
  assert.deepEqual(frame.data.message, sent.body.data)
  const own = await alicePhone.next('message.new')
  assert.equal(own.data.message.message_id, sent.body.data.message_id)
})

test('every device of a user gets every event once, in order', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const devices = [await connect(bob.token), await connect(bob.token), await connect(bob.token, 'query')]
  for (let i = 1; i <= 20; i++) await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: `n${i}` })
  for (const device of devices) {
    await device.next('message.new')
    const frames = [{ seq: 1 }, ...(await device.drain('message.new', 300))]
    assert.deepEqual(
      frames.map((f) => f.seq),
      Array.from({ length: 20 }, (_, i) => i + 1),
    )
  }
})

test('a socket opened while messages flow says ready first, then only what follows its seq', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'first' })
  let sent = 0
  await assertOpeningsInOrder(
    () => connect(bob.token),
    [() => alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: `flow ${++sent}` })],
  )
})

test('resume after a disconnect replays exactly what was missed, in order, then continues live', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const first = await connect(bob.token)
  await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'seen' })
  const seen = await first.next('message.new')
  await first.close()
  for (const content of ['missed 1', 'missed 2', 'missed 3']) {
    await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content })
  }
  const second = await connect(bob.token)
  second.send({ type: 'resume', seq: seen.seq })
  const replayed = [await second.next('message.new'), await second.next('message.new'), await second.next('message.new')]
  assert.deepEqual(
    replayed.map((f) => f.data.message.content),
    ['missed 1', 'missed 2', 'missed 3'],
  )
  assert.deepEqual(
    replayed.map((f) => f.seq),
    [2, 3, 4],
  )
  await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'live again' })
  const live = await second.next('message.new')
  assert.equal(live.seq, 5)
  assert.deepEqual(await second.drain('message.new'), [], 'nothing twice')
})

test('a bad or missing token is refused before the upgrade', async () => {
  await assert.rejects(TestSocket.connect(server.url, 'not-a-real-token-at-all-xxxxxxxx'), /upgrade refused: 401/)
  const user = await server.registerUser()
  await user.api.post(`${V2}/auth/logout`)
  await assert.rejects(TestSocket.connect(server.url, user.token, 'query'), /upgrade refused: 401/)
})

test('nobody outside the chat sees its events', async () => {
  const [alice, bob, eve] = [await server.registerUser(), await server.registerUser(), await server.registerUser()]
  const eveSocket = await connect(eve.token)
  await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'secret' })
  assert.deepEqual(await eveSocket.drain('message.new', 300), [])
})

test('ping frames are answered; unknown or malformed frames get an error frame, not a disconnect', async () => {
  const user = await server.registerUser()
  const socket = await connect(user.token)
  socket.send({ type: 'ping' })
  await socket.next('pong')
  socket.send({ type: 'frobnicate' })
  assert.match((await socket.next('error')).data.message, /unknown frame type/)
  socket.ws.send('{not json')
  assert.match((await socket.next('error')).data.message, /JSON/)
  socket.send({ type: 'resume', seq: -1 })
  await socket.next('error')
  socket.send({ type: 'ping' })
  await socket.next('pong')
})

test('a frame that pub/sub lost is repaired from the update log when the next one shows the gap', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const socket = await connect(bob.token)
  // An update committed to the log whose fan-out nudge never arrived (as when Redis drops it).
  const { record } = await import('../../src/realtime/updates.js')
  await record(server.ctx, server.ctx.db, [bob.id], 'chat.updated', { chat_id: 0, note: 'lost nudge' }, Date.now())
  await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'after the gap' })
  const repaired = await socket.next('chat.updated')
  const live = await socket.next('message.new')
  assert.deepEqual([repaired.seq, live.seq], [1, 2])
  assert.equal(repaired.data.note, 'lost nudge')
  assert.deepEqual(await socket.drain('message.new'), [], 'the live frame is not delivered twice')
})
