/**
 * Requests over the socket (docs/realtime.md): send, edit, delete, react and read as `{type, id, data}`
 * frames, answered by an ack once committed or an error with the code and message their HTTP twin
 * gives, with the same events; ordered per socket and chat; idempotent across a reconnect.
 */
import assert from 'node:assert/strict'
import test, { after } from 'node:test'
import { upload } from '../harness/files.js'
import { createChannel, createGroup } from '../harness/fixtures.js'
import { history, registerUsers, send, V2, wholeHistory } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { assertDelivered, assertNone, TestSocket } from '../harness/socket.js'

const METRICS_TOKEN = 'socket-requests-metrics-token-0123456789'
const server = await startTestServer({ env: { WS_FRAME_RATE_LIMIT: '1000/1', WRITE_RATE_LIMIT_USER: '100000/60', METRICS_TOKEN } })
after(() => server.close())

test('a send over the socket is acknowledged with the stored message, and the peer gets message.new', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const aliceSocket = await TestSocket.connect(server.url, alice.token)
  const bobSocket = await TestSocket.connect(server.url, bob.token)

  // a first message to a user opens the personal chat (the general path)
  const first = await aliceSocket.request('send', { receiver_id: bob.id, content: 'hello over the socket' }, 'a-1')
  assert.equal(first.type, 'ack', JSON.stringify(first))
  assert.equal(first.id, 'a-1')
  assert.equal(first.data.content, 'hello over the socket')
  assert.equal(first.data.sender_id, alice.id)
  const arrived = await bobSocket.next('message.new')
  assert.equal(arrived.data.message.message_id, first.data.message_id)

  // acknowledged means stored: history has it at once
  const chatId = first.data.chat_id
  const second = await aliceSocket.request('send', { chat_id: chatId, content: 'second' }, 7)
  assert.equal(second.type, 'ack')
  assert.equal(second.id, 7)
  // each ack stood for alice's own message.new on this socket (the general path's and the common path's alike)
  assert.equal(second.seq, first.seq! + 1)
  assert.ok(!aliceSocket.received.some((f) => f.type === 'message.new'), 'no copy of her own on the socket that sent them')
  assert.deepEqual(
    (await history(bob, chatId)).map((m) => m.message_id),
    [second.data.message_id, first.data.message_id],
  )
  assert.equal((await bobSocket.next('message.new')).data.message.content, 'second')

  // the ack is what HTTP would have answered: the same shape as the message in history
  const [stored] = await history(alice, chatId)
  for (const key of Object.keys(stored)) assert.ok(key in second.data, `the ack has ${key}`)
})

test('refusals carry the request id and the code and message of the HTTP twin', async () => {
  const [alice, bob, carol] = await registerUsers(server, 3)
  const socket = await TestSocket.connect(server.url, alice.token)
  const sameAsHttp = async (data: Record<string, unknown>, code: string) => {
    const answer = await socket.request('send', data)
    const http = await alice.api.post(`${V2}/messages/send`, data)
    assert.equal(answer.type, 'error', JSON.stringify(answer))
    assert.equal(answer.error!.code, code)
    assert.equal(http.body.error.code, code)
    assert.equal(answer.error!.message, http.body.error.message)
  }
  await sameAsHttp({ content: 'no target' }, 'validation_error')
  await sameAsHttp({ receiver_id: bob.id, content: 'x'.repeat(4097) }, 'validation_error')
  await sameAsHttp({ receiver_id: bob.id, content: 42 }, 'validation_error')
  await sameAsHttp({ chat_id: 999_999_999, content: 'nowhere' }, 'not_found')
  // a channel: only its owner and admins post
  const channel = await createChannel(carol, {}, [alice])
  await sameAsHttp({ chat_id: channel.channel_id, content: 'not mine to post' }, 'forbidden')
  // blocked by the peer
  const opened = await send(alice, bob, 'before the block')
  assert.equal((await bob.api.post(`${V2}/block`, { user_id: alice.id })).status, 200)
  await sameAsHttp({ chat_id: opened.chat_id, content: 'after the block' }, 'blocked')

  // data that is not an object at all, or whose ids are objects that cannot become strings
  const bare = await socket.request('send', 'text')
  assert.equal(bare.error!.code, 'validation_error')
  for (const [type, data] of [
    ['delete', { message_id: { toString: null } }],
    ['send', { chat_id: { toString: null, valueOf: null }, content: 'x' }],
    ['send', { receiver_id: ['__proto__'], content: 'x' }],
  ] as const) {
    const odd = await socket.request(type, data)
    assert.equal(odd.error?.code, 'validation_error', `${type} ${JSON.stringify(data)}: ${JSON.stringify(odd)}`)
  }
  assert.equal(socket.closed, null, 'the socket stays open')
  // a request without a usable id cannot be answered by id: a protocol error says why
  socket.send({ type: 'send', data: { receiver_id: carol.id, content: 'no id' } })
  assert.match((await socket.next('error')).data.message, /needs an id/)
  socket.send({ type: 'send', id: { nested: true }, data: { receiver_id: carol.id, content: 'object id' } })
  assert.match((await socket.next('error')).data.message, /needs an id/)
  // neither was sent (the control: the same send with an id is, and is alone in the chat)
  const control = await socket.request('send', { receiver_id: carol.id, content: 'with an id' })
  assert.equal(control.type, 'ack')
  assert.deepEqual(
    (await history(carol, control.data.chat_id)).map((m) => m.content),
    ['with an id'],
  )
})

test('a retried send (same client_message_id) after a reconnect answers the first message and stores nothing new', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const bobSocket = await TestSocket.connect(server.url, bob.token)
  let socket = await TestSocket.connect(server.url, alice.token)
  const body = { receiver_id: bob.id, content: 'exactly once', client_message_id: 'retry-me-1' }
  let firstAck: Awaited<ReturnType<TestSocket['request']>> | undefined
  const first = await assertDelivered(bobSocket, 'message.new', async () => (firstAck = await socket.request('send', body)))
  const messageId = first[0].data.message.message_id
  // the first send's ack stood for alice's message.new on her socket
  assert.equal(typeof firstAck?.seq, 'number', JSON.stringify(firstAck))
  await socket.close()

  socket = await TestSocket.connect(server.url, alice.token)
  const again = await socket.request('send', body, 'second-try')
  assert.equal(again.type, 'ack')
  assert.equal(again.data.message_id, messageId)
  // nothing new was logged: the retry's ack stands for no update
  assert.equal(again.seq, undefined)
  await assertNone(bobSocket, 'message.new', 300, 'a second message.new for the retry')
  assert.deepEqual(
    (await history(bob, first[0].data.message.chat_id)).map((m) => m.message_id),
    [messageId],
  )
  // the same id for another message is a conflict, as over HTTP
  const other = await socket.request('send', { ...body, content: 'something else' })
  assert.equal(other.error!.code, 'conflict')
  // positive control for the quiet socket above: a new send arrives
  await assertDelivered(bobSocket, 'message.new', () => socket.request('send', { receiver_id: bob.id, content: 'new' }))
})

test('edit, react, read and delete over the socket answer as HTTP does and send the same events', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const aliceSocket = await TestSocket.connect(server.url, alice.token)
  const bobSocket = await TestSocket.connect(server.url, bob.token)
  const message = await send(alice, bob, 'to be worked on')
  await bobSocket.next('message.new')

  const edited = await aliceSocket.request('edit', { message_id: message.message_id, content: 'edited over the socket' })
  assert.equal(edited.type, 'ack')
  assert.equal(edited.data.content, 'edited over the socket')
  assert.equal((await bobSocket.next('message.edited')).data.message.content, 'edited over the socket')
  // bob may not edit alice's message: the HTTP twin's refusal
  const notMine = await bobSocket.request('edit', { message_id: message.message_id, content: 'bob was here' })
  assert.equal(notMine.error!.code, 'forbidden')
  // unknown fields are dropped as in a body; a missing message_id is named
  const missing = await aliceSocket.request('edit', { content: 'which one?' })
  assert.equal(missing.error!.code, 'validation_error')
  assert.match(missing.error!.message, /message_id/)

  const reacted = await bobSocket.request('react', { message_id: message.message_id, emoji: '👍' })
  assert.deepEqual(reacted.data, { '👍': 1 })
  assert.deepEqual((await aliceSocket.next('reaction.updated')).data.reactions, { '👍': 1 })

  const read = await bobSocket.request('read', { message_id: message.message_id })
  assert.equal(read.type, 'ack')
  assert.equal(read.data.message_id, message.message_id)
  assert.equal(read.data.unread_count, 0)
  assert.equal((await aliceSocket.next('message.read')).data.reader_id, bob.id)

  const removed = await aliceSocket.request('delete', { message_id: message.message_id, for_all: true })
  assert.deepEqual(removed.data, { message_id: message.message_id, deleted_for_all: true })
  await bobSocket.next('message.deleted')
  const gone = await aliceSocket.request('edit', { message_id: message.message_id, content: 'too late' })
  assert.equal(gone.error!.code, 'not_found')
})

test('sends pipelined on one socket to one chat are stored in the order they were sent', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const group = await createGroup(alice, { member_ids: [bob.id] })
  const socket = await TestSocket.connect(server.url, alice.token)
  const other = await TestSocket.connect(server.url, bob.token)
  const count = 120
  // alice's socket and bob's socket write to the same group at the same time, without waiting
  for (let i = 0; i < count; i++) {
    socket.send({ type: 'send', id: `a${i}`, data: { chat_id: group.group_id, content: `alice ${i}` } })
    other.send({ type: 'send', id: `b${i}`, data: { chat_id: group.group_id, content: `bob ${i}` } })
  }
  const acks = await Promise.all(Array.from({ length: count }, (_, i) => socket.answer(`a${i}`, 15_000)))
  const bobAcks = await Promise.all(Array.from({ length: count }, (_, i) => other.answer(`b${i}`, 15_000)))
  assert.ok(
    [...acks, ...bobAcks].every((a) => a.type === 'ack'),
    'every send acknowledged',
  )
  const ids = acks.map((a) => a.data.message_id as number)
  assert.deepEqual(
    ids,
    [...ids].sort((a, b) => a - b),
    'alice’s acks in send order',
  )
  const stored = (await wholeHistory(alice, group.group_id)).reverse()
  assert.equal(stored.length, 2 * count)
  const aliceOrder = stored.filter((m) => m.sender_id === alice.id).map((m) => m.content)
  const bobOrder = stored.filter((m) => m.sender_id === bob.id).map((m) => m.content)
  assert.deepEqual(
    aliceOrder,
    Array.from({ length: count }, (_, i) => `alice ${i}`),
  )
  assert.deepEqual(
    bobOrder,
    Array.from({ length: count }, (_, i) => `bob ${i}`),
  )
  // the chat's seqs have no gap: its page total is its last seq
  assert.equal((await alice.api.get(`${V2}/chat/history`, { query: { chat_id: group.group_id, per_page: 1 } })).body.total, 2 * count)
})

/** One series of the server's /metrics, written as it appears there (`name{labels}`); 0 when absent. */
async function metric(series: string) {
  const text = (await server.api.get('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text
  const escaped = series.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return Number(new RegExp(`^${escaped} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
}

test('sends pipelined to a personal chat keep their order around sends that take the general path', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const chatId = (await send(alice, bob, 'opening')).chat_id
  const file = await upload(server, alice, Buffer.from('attached text'), 'note.txt', 'text/plain')
  const socket = await TestSocket.connect(server.url, alice.token)
  const peer = await TestSocket.connect(server.url, bob.token)
  // Unread by alice: her first send reads it, which the general path does, decided inside the
  // group commit, where the sends queued behind it must not overtake it. Every seventh send has an
  // attachment, which the general path handles too (decided before queueing).
  await send(bob, alice, 'unread by alice')
  const count = 60
  const attached = (i: number) => i % 7 === 3
  const data = (i: number) => ({
    chat_id: chatId,
    content: `p${i}`,
    client_message_id: `pipe-${i}`,
    ...(attached(i) ? { file_path: file.path } : {}),
  })
  for (let i = 0; i < count; i++) socket.send({ type: 'send', id: i, data: data(i) })
  const acks = await Promise.all(Array.from({ length: count }, (_, i) => socket.answer(i, 15_000)))
  assert.deepEqual(
    acks.filter((a) => a.type !== 'ack'),
    [],
    'every send acknowledged',
  )
  const ids = acks.map((a) => a.data.message_id as number)
  assert.deepEqual(
    ids,
    [...ids].sort((a, b) => a - b),
    'acks carry ids in send order',
  )
  assert.equal(acks.filter((a, i) => attached(i) && a.data.file_path === file.path).length, 9, 'the attachments were kept')

  const stored = (await wholeHistory(alice, chatId)).reverse()
  assert.deepEqual(
    stored.map((m) => m.content),
    ['opening', 'unread by alice', ...Array.from({ length: count }, (_, i) => `p${i}`)],
    'stored in send order',
  )
  // the chat's seqs have no gap: its page total is its last seq
  assert.equal((await alice.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 1 } })).body.total, count + 2)
  // bob's socket (which also had his own message's): each of alice's once, in his update log's order
  const fromAlice = (f: { type: string; data: any }) => f.type === 'message.new' && f.data.message.sender_id === alice.id
  const arrived = await Promise.all(Array.from({ length: count }, () => peer.nextWhere(fromAlice, 'alice’s message.new', 15_000)))
  assert.deepEqual(
    arrived.map((f) => f.data.message.content),
    Array.from({ length: count }, (_, i) => `p${i}`),
  )
  const seqs = arrived.map((f) => f.seq!)
  assert.deepEqual(
    seqs,
    Array.from({ length: count }, (_, i) => seqs[0] + i),
    'bob’s seqs contiguous',
  )
  // the first send read bob's message
  const chat = (await alice.api.get(`${V2}/chat_list`, { query: { per_page: 100 } })).body.items.find(
    (c: { chat_id: number }) => c.chat_id === chatId,
  )
  assert.equal(chat.unread_count, 0, JSON.stringify(chat))

  // retried with the same client ids, every send is answered with what the first made: nothing twice
  for (let i = 0; i < count; i++) socket.send({ type: 'send', id: `again-${i}`, data: data(i) })
  const again = await Promise.all(Array.from({ length: count }, (_, i) => socket.answer(`again-${i}`, 15_000)))
  assert.deepEqual(
    again.map((a) => a.data?.message_id),
    ids,
  )
  assert.equal((await wholeHistory(alice, chatId)).length, count + 2)
})

test('sends pipelined to a personal chat share commits, and their frames share writes', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const chatId = (await send(alice, bob, 'opening')).chat_id
  const socket = await TestSocket.connect(server.url, alice.token)
  const peer = await TestSocket.connect(server.url, bob.token)
  const count = 40
  const [frames, writes] = [await metric('tern_ws_frames_sent_total'), await metric('tern_ws_writes_total')]
  for (let i = 0; i < count; i++) socket.send({ type: 'send', id: i, data: { chat_id: chatId, content: `burst ${i}` } })
  const acks = await Promise.all(Array.from({ length: count }, (_, i) => socket.answer(i, 15_000)))
  assert.ok(acks.every((a) => a.type === 'ack'))
  await Promise.all(Array.from({ length: count }, () => peer.next('message.new', 15_000)))
  // each send: its ack on alice's socket (in place of her own message.new), bob's message.new on his
  assert.equal((await metric('tern_ws_frames_sent_total')) - frames, 2 * count)
  assert.equal(socket.received.filter((f) => f.type === 'message.new').length, 0)
  assert.deepEqual(
    acks.map((a) => a.seq),
    acks.map((_, i) => acks[0].seq! + i),
    'the acks carry her log’s seqs, in order',
  )
  // one at a time, each send would take a write on each socket (80); queued behind each other they share them
  const used = (await metric('tern_ws_writes_total')) - writes
  assert.ok(used <= count / 2, `${used} socket writes for ${count} sends`)
})

/** A user's chat list, most recent activity first, without Saved Messages (which stays on top). */
async function chatList(user: TestUser) {
  const items = (await user.api.get(`${V2}/chat_list`, { query: { per_page: 20 } })).body.items
  return (
    items as { chat_id: number; is_saved: boolean; unread_count: number; last_message: { message_id: number; content: string } | null }[]
  ).filter((c) => !c.is_saved)
}

test('both members pipelining sends to one personal chat: its last message, read positions and list order end as sends one at a time would leave them', async () => {
  const [alice, bob, carol] = await registerUsers(server, 3)
  const chatId = (await send(alice, bob, 'opening')).chat_id
  // a newer chat of each, on top of their lists until the burst (a second later: activity is in
  // seconds, and a tie goes to the newer chat) moves this one up
  await send(carol, alice, 'older for alice')
  await send(carol, bob, 'older for bob')
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const aliceSocket = await TestSocket.connect(server.url, alice.token)
  const bobSocket = await TestSocket.connect(server.url, bob.token)
  // Sends of one member queued together share a commit, which writes the chat's row and touches
  // its members once for all of them; a send of the other member in the same commit finds
  // messages it has not read and goes the general way after it.
  const count = 30
  for (let i = 0; i < count; i++) {
    aliceSocket.send({ type: 'send', id: i, data: { chat_id: chatId, content: `a${i}` } })
    bobSocket.send({ type: 'send', id: i, data: { chat_id: chatId, content: `b${i}` } })
  }
  const acks = await Promise.all(
    Array.from({ length: count }, (_, i) => [aliceSocket.answer(i, 15_000), bobSocket.answer(i, 15_000)]).flat(),
  )
  assert.deepEqual(
    acks.filter((a) => a.type !== 'ack'),
    [],
    'every send acknowledged',
  )

  const stored = (await wholeHistory(alice, chatId)).reverse()
  assert.equal(stored.length, 2 * count + 1)
  assert.equal(
    (await alice.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 1 } })).body.total,
    2 * count + 1,
    'seqs without a gap',
  )
  const newest = stored[stored.length - 1]
  // a member has read up to their own last message: what came after it is unread
  const unreadFor = (user: { id: number }) => stored.length - 1 - stored.map((m) => m.sender_id).lastIndexOf(user.id)
  for (const [user, other] of [
    [alice, 'older for alice'],
    [bob, 'older for bob'],
  ] as const) {
    const items = await chatList(user)
    assert.equal(items[0].chat_id, chatId, 'the burst’s chat tops the list')
    assert.equal(items[0].last_message?.message_id, newest.message_id, 'its last message is the newest stored')
    assert.equal(items[0].unread_count, unreadFor(user), `${user.id}'s unread count`)
    assert.equal(items[1].last_message?.content, other)
  }
  // and the chat goes on from there: the next send takes the next seq
  const next = await aliceSocket.request('send', { chat_id: chatId, content: 'after the burst' }, 'next')
  assert.equal(next.type, 'ack', JSON.stringify(next))
  assert.equal((await alice.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 1 } })).body.total, 2 * count + 2)
  const items = await chatList(bob)
  assert.equal(items[0].last_message?.message_id, next.data.message_id)
  assert.equal(items[0].unread_count, 1 + unreadFor(bob))
})

test('past the frame limit each request is refused by id (rate_limited); logging out closes the socket', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const limited = await startTestServer({ env: { WS_FRAME_RATE_LIMIT: '5/10', WRITE_RATE_LIMIT_USER: '100000/60' } })
  try {
    const [carol, dave] = await registerUsers(limited, 2)
    const socket = await TestSocket.connect(limited.url, carol.token)
    for (let i = 0; i < 7; i++) socket.send({ type: 'send', id: i, data: { receiver_id: dave.id, content: `burst ${i}` } })
    const answers = await Promise.all(Array.from({ length: 7 }, (_, i) => socket.answer(i)))
    assert.deepEqual(
      answers.map((a) => a.type),
      ['ack', 'ack', 'ack', 'ack', 'ack', 'error', 'error'],
    )
    assert.equal(answers[5].error!.code, 'rate_limited')
    assert.ok(answers[5].error!.retry_after! >= 1)
  } finally {
    await limited.close()
  }

  const socket = await TestSocket.connect(server.url, alice.token)
  const ok = await socket.request('send', { receiver_id: bob.id, content: 'while signed in' })
  assert.equal(ok.type, 'ack')
  assert.equal((await alice.api.post(`${V2}/auth/logout`, {})).status, 200)
  const closed = await socket.closing()
  assert.equal(closed.code, 4001)
})

test('/metrics counts socket requests by type and outcome', async () => {
  const count = (labels: string) => metric(`tern_ws_request_duration_seconds_count{${labels}}`)
  const [alice, bob] = await registerUsers(server, 2)
  const socket = await TestSocket.connect(server.url, alice.token)
  const [acks, refusals] = [await count('type="send",outcome="ack"'), await count('type="edit",outcome="not_found"')]
  assert.equal((await socket.request('send', { receiver_id: bob.id, content: 'counted' })).type, 'ack')
  assert.equal((await socket.request('edit', { message_id: 2 ** 40, content: 'nothing there' })).error?.code, 'not_found')
  assert.equal(await count('type="send",outcome="ack"'), acks + 1)
  assert.equal(await count('type="edit",outcome="not_found"'), refusals + 1)
})
