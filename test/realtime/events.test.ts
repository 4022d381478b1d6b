import assert from 'node:assert/strict'
import { test } from 'node:test'
import { anotherDevice, history, ISO, registerUsers, send, updates, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { assertDelivered, assertNone, TestSocket, type Frame } from '../harness/socket.js'
import { sleep, waitFor } from '../harness/wait.js'

const server = await startTestServer()
const connect = (user: TestUser) => TestSocket.connect(server.url, user.token)
/** another session (device) of the same user */
const device = (user: TestUser) => anotherDevice(server, user)
const users = (n: number) => registerUsers(server, n)
async function peerOf(user: TestUser, peerId: number) {
  const res = await user.api.get(`${V2}/chat_list`, { query: { per_page: 100 } })
  assert.equal(res.status, 200, res.text)
  return res.body.items.find((i: any) => i.peer?.user_id === peerId && !i.is_saved)?.peer
}

// ---------------------------------------------------------------- message.deleted

test('delete for me: message.deleted reaches all my devices, with seqs, and nothing reaches the peer', async () => {
  const [alice, bob] = await users(2)
  const m = await send(alice, bob, 'oops')
  const [laptop, phone, bobSocket] = [await connect(alice), await device(alice), await connect(bob)]
  const res = await alice.api.delete(`${V2}/messages/${m.message_id}`)
  assert.equal(res.status, 200, res.text)
  for (const socket of [laptop, phone]) {
    const frame = await socket.next('message.deleted')
    assert.equal(typeof frame.seq, 'number')
    assert.deepEqual(frame.data, { chat_id: m.chat_id, message_id: m.message_id, deleted_for_all: false })
  }
  await assertNone(bobSocket, 'message.deleted')
  assert.deepEqual(
    bobSocket.frames.filter((f) => f.type !== 'presence'),
    [],
    'the peer gets no frame at all',
  )
  // control: the peer's socket does get message.deleted when it concerns them
  const both = await send(alice, bob, 'for both')
  await assertDelivered(bobSocket, 'message.deleted', () =>
    alice.api.delete(`${V2}/messages/${both.message_id}`, { query: { for_all: 'true' } }),
  )
})

test("delete for all: every member's devices get message.deleted with deleted_for_all true", async () => {
  const [alice, bob] = await users(2)
  const m = await send(alice, bob, 'retract')
  const [laptop, phone, bobSocket] = [await connect(alice), await device(alice), await connect(bob)]
  await alice.api.delete(`${V2}/messages/${m.message_id}`, { query: { for_all: 'true' } })
  for (const socket of [laptop, phone, bobSocket]) {
    const frame = await socket.next('message.deleted')
    assert.deepEqual(frame.data, { chat_id: m.chat_id, message_id: m.message_id, deleted_for_all: true })
    assert.equal(typeof frame.seq, 'number')
  }
  for (const socket of [laptop, phone, bobSocket]) await assertNone(socket, 'message.deleted', 100, 'second message.deleted')
  // control: a second deletion does reach every device
  const next = await send(alice, bob, 'and this')
  await assertDelivered([laptop, phone, bobSocket], 'message.deleted', () =>
    alice.api.delete(`${V2}/messages/${next.message_id}`, { query: { for_all: 'true' } }),
  )
})

// ---------------------------------------------------------------- message.edited

test('edit: both members get message.edited with the edited message', async () => {
  const [alice, bob] = await users(2)
  const m = await send(alice, bob, 'draft')
  const [aliceSocket, bobSocket] = [await connect(alice), await connect(bob)]
  const res = await alice.api.post(`${V2}/messages/${m.message_id}/edit`, { content: 'final' })
  assert.equal(res.status, 200, res.text)
  for (const socket of [aliceSocket, bobSocket]) {
    const frame = await socket.next('message.edited')
    assert.equal(typeof frame.seq, 'number')
    assert.equal(frame.data.message.message_id, m.message_id)
    assert.equal(frame.data.message.chat_id, m.chat_id)
    assert.equal(frame.data.message.content, 'final')
    assert.equal(frame.data.message.edited_at, res.body.data.edited_at)
    assert.match(frame.data.message.edited_at, ISO)
  }
})

// ---------------------------------------------------------------- message.read

test('read: the sender sees the receipt live; an older read afterwards sends nothing', async () => {
  const [alice, bob] = await users(2)
  const m1 = await send(alice, bob, 'r1')
  const m2 = await send(alice, bob, 'r2')
  await send(alice, bob, 'r3')
  const [aliceSocket, bobSocket] = [await connect(alice), await connect(bob)]
  const res = await bob.api.post(`${V2}/messages/${m2.message_id}/read`)
  assert.equal(res.status, 200, res.text)
  const expected = { chat_id: m1.chat_id, reader_id: bob.id, message_id: m2.message_id, read_at: res.body.data.read_at }
  for (const socket of [aliceSocket, bobSocket]) {
    const frame = await socket.next('message.read')
    assert.equal(typeof frame.seq, 'number')
    assert.deepEqual(frame.data, expected)
  }
  const older = await bob.api.post(`${V2}/messages/${m1.message_id}/read`)
  assert.equal(older.status, 200, older.text)
  await assertNone(aliceSocket, 'message.read', 300, 'message.read for an older message')
  await assertNone(bobSocket, 'message.read', 0, 'message.read for an older message')
  // control: reading further does send it again
  const m3 = (await history(bob, m1.chat_id))[0]
  await assertDelivered([aliceSocket, bobSocket], 'message.read', () => bob.api.post(`${V2}/messages/${m3.message_id}/read`))
})

// ---------------------------------------------------------------- reaction.updated

test('reaction: both members get reaction.updated with the aggregated map', async () => {
  const [alice, bob] = await users(2)
  const m = await send(alice, bob, 'nice')
  const [aliceSocket, bobSocket] = [await connect(alice), await connect(bob)]
  await bob.api.post(`${V2}/messages/${m.message_id}/reaction`, { emoji: '🎉' })
  await alice.api.post(`${V2}/messages/${m.message_id}/reaction`, { emoji: '🎉' })
  await bob.api.post(`${V2}/messages/${m.message_id}/reaction`, { emoji: null })
  for (const socket of [aliceSocket, bobSocket]) {
    const frames = [await socket.next('reaction.updated'), await socket.next('reaction.updated'), await socket.next('reaction.updated')]
    assert.ok(frames.every((f) => typeof f.seq === 'number'))
    assert.deepEqual(
      frames.map((f) => f.data),
      [
        { chat_id: m.chat_id, message_id: m.message_id, reactions: { '🎉': 1 } },
        { chat_id: m.chat_id, message_id: m.message_id, reactions: { '🎉': 2 } },
        { chat_id: m.chat_id, message_id: m.message_id, reactions: { '🎉': 1 } },
      ],
    )
  }
})

// ---------------------------------------------------------------- typing

test("typing is ephemeral: the peer gets it without seq, the typer's devices do not, the log has none", async () => {
  const [alice, bob] = await users(2)
  const m = await send(alice, bob, 'hey')
  const [aliceSocket, aliceOther, bobSocket] = [await connect(alice), await device(alice), await connect(bob)]
  const bobSeq = (await updates(bob)).seq

  const res = await alice.api.post(`${V2}/chat/typing`, { chat_id: m.chat_id, is_typing: true })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.data, { chat_id: m.chat_id, is_typing: true })
  const frame = await bobSocket.next('typing')
  assert.equal('seq' in frame, false, 'typing frames carry no seq')
  assert.deepEqual(frame, { type: 'typing', data: { chat_id: m.chat_id, user_id: alice.id, is_typing: true } })

  const stop = await alice.api.post(`${V2}/chat/typing`, { chat_id: m.chat_id, is_typing: false })
  assert.deepEqual(stop.body.data, { chat_id: m.chat_id, is_typing: false })
  const stopped = await bobSocket.next('typing')
  assert.deepEqual(stopped.data, { chat_id: m.chat_id, user_id: alice.id, is_typing: false })

  await assertNone(aliceSocket, 'typing', 200, 'typing echo to the typer')
  await assertNone(aliceOther, 'typing', 0, "typing echo to the typer's other device")
  const log = await updates(bob)
  assert.equal(log.seq, bobSeq, 'typing does not take a seq')
  assert.ok(log.items.every((u) => u.type !== 'typing'))
  // control: alice's devices do get typing, from bob
  await assertDelivered([aliceSocket, aliceOther], 'typing', () =>
    bob.api.post(`${V2}/chat/typing`, { chat_id: m.chat_id, is_typing: false }),
  )
})

test('typing refusals: outsider 404, missing is_typing or chat_id 400; nothing is sent', async () => {
  const [alice, bob, eve] = await users(3)
  const m = await send(alice, bob, 'hey')
  const bobSocket = await connect(bob)
  for (const [body, status, code] of [
    [{ chat_id: m.chat_id, is_typing: true }, 404, 'not_found'],
    [{ chat_id: 987_654_321, is_typing: true }, 404, 'not_found'],
  ] as const) {
    const res = await eve.api.post(`${V2}/chat/typing`, body)
    assert.equal(res.status, status, res.text)
    assert.equal(res.body.error.code, code)
  }
  for (const body of [{ chat_id: m.chat_id }, { is_typing: true }, { chat_id: m.chat_id, is_typing: 'yes' }]) {
    const res = await alice.api.post(`${V2}/chat/typing`, body)
    assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`)
    assert.equal(res.body.error.code, 'validation_error')
  }
  assert.equal((await server.api.post(`${V2}/chat/typing`, { chat_id: m.chat_id, is_typing: true })).status, 401)
  await assertNone(bobSocket, 'typing')
  // control: a member's typing does reach bob
  await assertDelivered(bobSocket, 'typing', () => alice.api.post(`${V2}/chat/typing`, { chat_id: m.chat_id, is_typing: false }))
})

test('typing that is not refreshed turns into is_typing:false after about 5 s', async () => {
  const [alice, bob] = await users(2)
  const m = await send(alice, bob, 'hey')
  const bobSocket = await connect(bob)
  await alice.api.post(`${V2}/chat/typing`, { chat_id: m.chat_id, is_typing: true })
  const started = Date.now()
  assert.equal((await bobSocket.next('typing')).data.is_typing, true)
  const expired = await bobSocket.next('typing', 9000)
  const elapsed = Date.now() - started
  assert.deepEqual(expired, { type: 'typing', data: { chat_id: m.chat_id, user_id: alice.id, is_typing: false } })
  assert.ok(elapsed >= 4000 && elapsed <= 8000, `expired after ${elapsed} ms`)
  await assertNone(bobSocket, 'typing', 300, 'a second expiry')
  // control: typing again is heard
  await assertDelivered(bobSocket, 'typing', () => alice.api.post(`${V2}/chat/typing`, { chat_id: m.chat_id, is_typing: true }))
})

test('a refreshed is_typing:true pushes the expiry back', async () => {
  const [alice, bob] = await users(2)
  const m = await send(alice, bob, 'hey')
  const bobSocket = await connect(bob)
  await alice.api.post(`${V2}/chat/typing`, { chat_id: m.chat_id, is_typing: true })
  await bobSocket.next('typing')
  await sleep(3000)
  const refreshed = await alice.api.post(`${V2}/chat/typing`, { chat_id: m.chat_id, is_typing: true })
  assert.equal(refreshed.status, 200, refreshed.text)
  const refreshedAt = Date.now()
  // the refresh may or may not be forwarded again; the expiry must count from it
  const frames: Frame[] = []
  for (;;) {
    const frame = await bobSocket.next('typing', 9000)
    frames.push(frame)
    if (frame.data.is_typing === false) break
  }
  const elapsed = Date.now() - refreshedAt
  assert.ok(elapsed >= 4000 && elapsed <= 8000, `expired ${elapsed} ms after the refresh (about 5 s expected)`)
  assert.ok(frames.slice(0, -1).every((f) => f.data.is_typing === true))
})

// ---------------------------------------------------------------- presence

test('presence: first device online, second device silent, last device closing offline with last_seen', async () => {
  const [alice, bob, eve] = await users(3)
  await send(alice, bob, 'we share a chat')
  const bobSocket = await connect(bob)
  const eveSocket = await connect(eve)
  assert.equal((await peerOf(bob, alice.id)).is_online, false)

  const laptop = await TestSocket.connect(server.url, alice.token)
  const online = await bobSocket.next('presence')
  assert.equal('seq' in online, false, 'presence frames carry no seq')
  assert.equal(online.data.user_id, alice.id)
  assert.equal(online.data.is_online, true)
  assert.ok('last_seen' in online.data)
  assert.equal((await peerOf(bob, alice.id)).is_online, true)

  const phone = await device(alice)
  await assertNone(bobSocket, 'presence', 300, 'online again for a second device')
  await phone.close()
  await assertNone(bobSocket, 'presence', 300, 'offline while one device is still connected')
  assert.equal((await peerOf(bob, alice.id)).is_online, true)

  await laptop.close()
  const offline = await bobSocket.next('presence')
  assert.equal('seq' in offline, false)
  assert.equal(offline.data.user_id, alice.id)
  assert.equal(offline.data.is_online, false)
  assert.match(offline.data.last_seen, ISO)
  assert.ok(Math.abs(Date.parse(offline.data.last_seen) - Date.now()) < 5000)
  const peer = await peerOf(bob, alice.id)
  assert.equal(peer.is_online, false)
  assert.match(peer.last_seen, ISO)

  assert.deepEqual(
    eveSocket.frames.filter((f) => f.type === 'presence' && f.data.user_id === alice.id),
    [],
    'no presence to users who share no chat',
  )
  const log = await updates(bob)
  assert.ok(
    log.items.every((u) => u.type !== 'presence'),
    'presence is not in the update log',
  )
  // control for the two silences above: the next first device is heard again
  const [again] = await assertDelivered(bobSocket, 'presence', () => device(alice))
  assert.equal(again.data.is_online, true)
})

// ---------------------------------------------------------------- delivered_at

test("delivered_at is set once the recipient's socket received message.new", async () => {
  const [alice, bob] = await users(2)
  const bobSocket = await connect(bob)
  const m = await send(alice, bob, 'are you there?')
  await bobSocket.next('message.new')
  const delivered = await waitFor(
    async () => {
      const [mine] = await history(alice, m.chat_id)
      return mine.delivered_at === null ? undefined : mine.delivered_at
    },
    { timeoutMs: 1000, message: 'delivered_at set' },
  )
  assert.match(delivered, ISO)
  assert.ok(Date.parse(delivered) >= Date.parse(m.timestamp))
})

test("delivered_at stays null while the recipient is offline (the sender's own devices do not count)", async () => {
  const [alice, bob] = await users(2)
  const first = await connect(bob)
  const seq = (await updates(bob)).seq
  await first.close()
  const alicePhone = await device(alice)
  const m = await send(alice, bob, 'while you were out')
  await alicePhone.next('message.new')
  await sleep(400)
  assert.equal((await history(alice, m.chat_id))[0].delivered_at, null)

  const bobSocket = await connect(bob)
  bobSocket.send({ type: 'resume', seq })
  const frame = await bobSocket.next('message.new')
  assert.equal(frame.data.message.message_id, m.message_id)
  const delivered = await waitFor(
    async () => {
      const [mine] = await history(alice, m.chat_id)
      return mine.delivered_at === null ? undefined : mine.delivered_at
    },
    { timeoutMs: 1000, message: 'delivered_at set after resume' },
  )
  assert.match(delivered, ISO)
})

// ---------------------------------------------------------------- chat.updated

test('chat.updated: deleting the last message for all moves last_message_id back, for both members', async () => {
  const [alice, bob] = await users(2)
  const first = await send(alice, bob, 'stays')
  const last = await send(alice, bob, 'goes')
  const [aliceSocket, bobSocket] = [await connect(alice), await connect(bob)]
  await alice.api.delete(`${V2}/messages/${last.message_id}`, { query: { for_all: true } })
  for (const socket of [aliceSocket, bobSocket]) {
    const frame = await socket.next('chat.updated')
    assert.ok(frame.seq! > 0)
    assert.deepEqual(frame.data, { chat_id: first.chat_id, last_message_id: first.message_id })
  }
  // deleting a message that is not the last one changes nothing in the chat
  const newer = await send(alice, bob, 'newest')
  await alice.api.delete(`${V2}/messages/${first.message_id}`, { query: { for_all: true } })
  await assertNone(bobSocket, 'chat.updated')
  assert.equal(newer.chat_id, first.chat_id)
  // control: deleting the newest one does move it
  const [frame] = await assertDelivered(bobSocket, 'chat.updated', () =>
    alice.api.delete(`${V2}/messages/${newer.message_id}`, { query: { for_all: true } }),
  )
  assert.equal(frame.data.chat_id, first.chat_id)
})

test("chat.updated: a block and an unblock reach the blocker's devices only", async () => {
  const [alice, bob] = await users(2)
  const sent = await send(alice, bob, 'hi')
  const [alicePhone, bobSocket] = [await device(alice), await connect(bob)]
  assert.equal((await alice.api.post(`${V2}/block`, { user_id: bob.id })).status, 200)
  assert.deepEqual((await alicePhone.next('chat.updated')).data, { chat_id: sent.chat_id, is_blocked: true })
  assert.equal((await alice.api.post(`${V2}/unblock`, { user_id: bob.id })).status, 200)
  assert.deepEqual((await alicePhone.next('chat.updated')).data, { chat_id: sent.chat_id, is_blocked: false })
  await assertNone(bobSocket, 'chat.updated', 200, 'chat.updated for the blocked user')
  // control: bob's own block does reach bob's socket
  await assertDelivered(bobSocket, 'chat.updated', () => bob.api.post(`${V2}/block`, { user_id: alice.id }))
})
