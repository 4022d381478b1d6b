/**
 * Personal messaging end to end, as one conversation: two users, each with devices on two instances
 * (PostgreSQL + Redis; on SQLite both "instances" are the one server), go through every personal
 * messaging endpoint. Every device gets every logged event of its user exactly once, in seq order,
 * the same as the update log says, and a device that drops out and comes back on the other
 * instance resumes without a gap or a repeat.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import type { Client } from '../harness/client.js'
import { testDatabaseUrl, testRedisUrl } from '../harness/database.js'
import { type Update, V2 } from '../harness/messaging.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { TestSocket, type Frame } from '../harness/socket.js'
import { waitFor } from '../harness/wait.js'

const twoInstances = Boolean(testDatabaseUrl && testRedisUrl)
// One prefix for both, so they share the fan-out channel (the harness gives each server its own).
const env: Record<string, string> = twoInstances ? { REDIS_PREFIX: `tern-test-${randomBytes(6).toString('hex')}:` } : {}
const one = await startTestServer({ env })
const two = twoInstances ? await startTestServer({ database: one.database, env }) : one

async function ok(res: { status: number; body: any; text: string }) {
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.success, true, res.text)
  return res.body.data
}

/** A device: its own session, with an API client and a socket on the given instance. */
async function device(server: TestServer, user: TestUser) {
  const login = await ok(await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password }))
  const token = login.session_token as string
  return { token, api: server.api.as(token), socket: await TestSocket.connect(server.url, token) }
}

/** The user's update log after `since`, read through the given client. */
async function logAfter(api: Client, since: number): Promise<{ items: Update[]; seq: number }> {
  const res = await api.get(`${V2}/updates`, { query: { since, limit: 1000 } })
  assert.equal(res.status, 200, res.text)
  const { updates: items, seq } = res.body.data
  return { items, seq }
}

/** The logged frames (those with a seq) a socket received, in arrival order. */
const logged = (socket: TestSocket) => socket.received.filter((f): f is Frame & { seq: number } => f.seq !== undefined)

/** Waits until the socket has received the frame with this seq. */
const reaches = (socket: TestSocket, seq: number) =>
  waitFor(async () => (logged(socket).some((f) => f.seq === seq) ? true : undefined), {
    timeoutMs: 5000,
    message: `seq ${seq} on the socket`,
  })

/**
 * Every logged frame the socket received is exactly the log after `since` (its ready seq, or the
 * seq it resumed from): the same seqs, contiguous, each once, in order, of the same types and
 * about the same messages.
 */
function assertSameAsLog(socket: TestSocket, since: number, log: Update[], what: string) {
  const got = logged(socket)
  const summary = (f: { type: string; seq: number; data: any }) => [
    f.seq,
    f.type,
    f.data?.message?.message_id ?? f.data?.message_id ?? null,
  ]
  assert.deepEqual(got.map(summary), log.map(summary), what)
  const seqs = got.map((f) => f.seq)
  assert.deepEqual(
    seqs,
    seqs.map((_, i) => since + 1 + i),
    `${what}: contiguous from ${since}`,
  )
}

test('two users on two instances go through every messaging endpoint; every device gets every event once, in order, across a drop-out and a switch of instance', async () => {
  const [alice, bob] = [await one.registerUser({ display_name: 'Alice' }), await one.registerUser({ display_name: 'Bob' })]
  const laptop = await device(one, alice) // alice, on instance one
  const aliceTwo = two.api.as(alice.token) // alice's first session, through instance two
  const phone = await device(two, bob) // bob, on instance two: drops out and comes back on one
  const tablet = await device(one, bob) // bob, on instance one, connected throughout
  const bobOne = one.api.as(bob.token)
  const start = { alice: laptop.socket.received[0].data.seq as number, bob: tablet.socket.received[0].data.seq as number }
  const phoneStart = phone.socket.received[0].data.seq as number
  assert.equal(phoneStart, start.bob, 'nothing happened to bob between his two devices connecting')

  // the chat, resolved the same from both sides
  const chat = await ok(await laptop.api.post(`${V2}/chat/create`, { user_id: bob.id }))
  const chatId = chat.chat_id as number
  assert.equal((await ok(await phone.api.post(`${V2}/chat/create`, { user_id: alice.id }))).chat_id, chatId)

  // bob writes (by receiver_id), alice replies through the other instance; the reply reads bob's message
  const hi = await ok(await phone.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'hi Alice' }))
  const reply = await ok(await aliceTwo.post(`${V2}/messages/send`, { chat_id: chatId, content: 'hi Bob', reply_to_id: hi.message_id }))
  assert.equal(reply.reply_to_id, hi.message_id)
  await ok(await bobOne.post(`${V2}/messages/${hi.message_id}/edit`, { content: 'hi Alice!' }))
  await ok(await laptop.api.post(`${V2}/messages/${hi.message_id}/reaction`, { emoji: '👍' }))
  await ok(await aliceTwo.post(`${V2}/messages/${hi.message_id}/reaction`, { emoji: '❤️' }))
  const reacted = await ok(await phone.api.post(`${V2}/messages/${hi.message_id}/reaction`, { emoji: '❤️' }))
  assert.deepEqual(reacted, { '❤️': 2 })
  await ok(await tablet.api.post(`${V2}/messages/${reply.message_id}/read`, {}))
  await ok(await laptop.api.post(`${V2}/chat/typing`, { chat_id: chatId, is_typing: true }))
  const typing = await tablet.socket.next('typing')
  assert.deepEqual(typing.data, { chat_id: chatId, user_id: alice.id, is_typing: true })
  assert.equal(typing.seq, undefined, 'typing is ephemeral')

  // the phone drops out; the conversation goes on through both instances
  await reaches(phone.socket, (await logAfter(phone.api, 0)).seq)
  const phoneLast = Math.max(...logged(phone.socket).map((f) => f.seq))
  await phone.socket.close()
  const missed = [
    await ok(await aliceTwo.post(`${V2}/messages/send`, { chat_id: chatId, content: 'while you were away 1' })),
    await ok(await laptop.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'while you were away 2' })),
  ]
  const forwarded = await ok(await laptop.api.post(`${V2}/messages/forward`, { message_id: hi.message_id, target_chat_id: chatId }))
  const again = await ok(await aliceTwo.post(`${V2}/forward`, { message_id: forwarded.message_id, target_chat_id: chatId }))
  assert.equal(forwarded.forwarded_from, 'Bob')
  assert.equal(again.forwarded_from, 'Bob', 'a forward of a forward names the first sender')
  await ok(await laptop.api.delete(`${V2}/messages/${missed[0].message_id}`, { query: { for_all: 'true' } }))
  await ok(await bobOne.delete(`${V2}/messages/${missed[1].message_id}`))
  await ok(await laptop.api.post(`${V2}/saved/add`, { message_id: hi.message_id }))
  const due = new Date(Date.now() + 600).toISOString()
  const pending = await ok(await aliceTwo.post(`${V2}/messages/send`, { chat_id: chatId, content: 'on time', scheduled_at: due }))
  assert.equal(pending.is_scheduled, true)
  const isOnTime = (f: Frame) => f.type === 'message.new' && f.data.message.content === 'on time'
  const scheduled = await waitFor(async () => tablet.socket.received.find(isOnTime), { timeoutMs: 3000, message: 'the scheduled message' })

  // the phone comes back on the other instance and resumes where it left off
  const back = await TestSocket.connect(one.url, phone.token)
  back.send({ type: 'resume', seq: phoneLast })
  const bye = await ok(await phone.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'bye' }))

  // everything is in: each device got its user's whole log since it connected, once, in order
  const aliceLog = await logAfter(aliceTwo, start.alice)
  const bobLog = await logAfter(bobOne, start.bob)
  for (const socket of [laptop.socket, tablet.socket, back]) await reaches(socket, socket === laptop.socket ? aliceLog.seq : bobLog.seq)
  assertSameAsLog(laptop.socket, start.alice, aliceLog.items, "alice's laptop (instance one)")
  assertSameAsLog(tablet.socket, start.bob, bobLog.items, "bob's tablet (instance one)")
  assertSameAsLog(
    phone.socket,
    phoneStart,
    bobLog.items.filter((u) => u.seq <= phoneLast),
    "bob's phone before it dropped (instance two)",
  )
  assertSameAsLog(
    back,
    phoneLast,
    bobLog.items.filter((u) => u.seq > phoneLast),
    "bob's phone after resuming on instance one",
  )

  // the log holds what each side should see: bob never hears of alice's save, alice not of bob's delete for me
  const types = (log: Update[]) => log.map((u) => u.type)
  // (a reply reads what it answers: alice's reply, and bob's "bye", each log a message.read first)
  const conversation = [
    'message.new',
    'message.read',
    'message.new',
    'message.edited',
    'reaction.updated',
    'reaction.updated',
    'reaction.updated',
    'message.read',
    'message.new',
    'message.new',
    'message.new',
    'message.new',
    'message.deleted',
  ]
  assert.deepEqual(
    types(bobLog.items).filter((t) => t !== 'chat.updated'),
    [...conversation, 'message.deleted', 'message.new', 'message.read', 'message.new'],
  )
  assert.deepEqual(
    types(aliceLog.items).filter((t) => t !== 'chat.updated'),
    [...conversation, 'message.new', 'message.read', 'message.new'],
  )
  const bobDeletes = bobLog.items.filter((u) => u.type === 'message.deleted').map((u) => u.data)
  assert.deepEqual(bobDeletes, [
    { chat_id: chatId, message_id: missed[0].message_id, deleted_for_all: true },
    { chat_id: chatId, message_id: missed[1].message_id, deleted_for_all: false },
  ])
  const news = bobLog.items.filter((u) => u.type === 'message.new').map((u) => u.data.message.content)
  assert.deepEqual(
    news,
    ['hi Alice!', 'hi Bob', '', 'while you were away 2', 'hi Alice!', 'hi Alice!', 'on time', 'bye'],
    'a message deleted for everyone is blank in the log too',
  )

  // and the chat reads the same from both sides, through either instance (bob hid one for himself)
  const historyOf = async (api: Client) =>
    ((await api.get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 100 } })).body.items as any[]).map((m) => m.content)
  assert.deepEqual(await historyOf(aliceTwo), ['bye', 'on time', 'hi Alice!', 'hi Alice!', 'while you were away 2', 'hi Bob', 'hi Alice!'])
  assert.deepEqual(await historyOf(bobOne), ['bye', 'on time', 'hi Alice!', 'hi Alice!', 'hi Bob', 'hi Alice!'])
  assert.equal(bye.chat_id, chatId)
  const saved = (await laptop.api.get(`${V2}/saved`)).body.items as any[]
  assert.deepEqual(
    saved.map((s) => s.message_id ?? s.message?.message_id),
    [hi.message_id],
  )
  assert.ok(scheduled.data.message.message_id > missed[1].message_id)
})
