import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import type { Client } from '../harness/client.js'
import { testDatabaseUrl, testRedisUrl } from '../harness/database.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'
import { sleep } from '../harness/wait.js'

const server = await startTestServer()
const V2 = '/api.v2/api'
const connect = (url: string, token: string) => TestSocket.connect(url, token)

const DAY = 24 * 60 * 60 * 1000
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString()
const users = (n: number, on: TestServer = server) => Promise.all(Array.from({ length: n }, () => on.registerUser()))

async function send(api: Client, body: Record<string, unknown>) {
  const res = await api.post(`${V2}/messages/send`, body)
  assert.equal(res.status, 200, res.text)
  return res.body.data
}
async function history(api: Client, chatId: number) {
  const res = await api.get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 100 } })
  assert.equal(res.status, 200, res.text)
  return res.body.items as any[]
}
async function scheduled(api: Client, chatId: number) {
  const res = await api.get(`${V2}/messages/scheduled`, { query: { chat_id: chatId } })
  assert.equal(res.status, 200, res.text)
  return res.body.items as any[]
}
const seqOf = async (api: Client) => (await api.get(`${V2}/updates`, { query: { since: 0, limit: 1000 } })).body.data.seq as number
const reschedule = (user: TestUser, id: number, body: unknown) => user.api.post(`${V2}/messages/${id}/scheduled`, body)

/** A chat with one ordinary message in it, so later ids and last_message have a baseline. */
async function chatWith(alice: TestUser, bob: TestUser) {
  const first = await send(alice.api, { receiver_id: bob.id, content: 'baseline' })
  return { chatId: first.chat_id as number, first }
}

function assertPending(
  pending: any,
  expected: { chat_id: number; sender_id: number; receiver_id: number; content: string; scheduled_at: string },
) {
  assert.equal(typeof pending.scheduled_id, 'number')
  assert.equal(pending.message_id, null, 'no message id until it is sent')
  assert.equal(pending.is_scheduled, true)
  assert.equal(pending.chat_id, expected.chat_id)
  assert.equal(pending.sender_id, expected.sender_id)
  assert.equal(pending.receiver_id, expected.receiver_id)
  assert.equal(pending.content, expected.content)
  assert.equal(Date.parse(pending.scheduled_at), Date.parse(expected.scheduled_at))
  assert.match(pending.scheduled_at, /Z$/)
}

/** Waits for the scheduled message's frame and checks it came no earlier than due and within ~1 s after. */
async function expectDelivery(socket: TestSocket, dueIso: string, content: string) {
  const due = Date.parse(dueIso)
  const frame = await socket.next('message.new', due - Date.now() + 3000)
  const lateness = Date.now() - due
  assert.equal(frame.data.message.content, content)
  assert.ok(lateness >= 0, `delivered ${-lateness} ms before scheduled_at`)
  assert.ok(lateness <= 1000, `delivered ${lateness} ms after scheduled_at (contract: within 1 s)`)
  return frame
}

test('a scheduled message waits (no history, no event), is listed for its sender only, then arrives on time', async () => {
  const [alice, bob] = await users(2)
  const { chatId, first } = await chatWith(alice, bob)
  const bobSocket = await connect(server.url, bob.token)
  const aliceSeq = await seqOf(alice.api)
  const bobSeq = await seqOf(bob.api)

  const due = inMs(1500)
  const pending = await send(alice.api, { receiver_id: bob.id, content: 'later, bob', scheduled_at: due })
  assertPending(pending, { chat_id: chatId, sender_id: alice.id, receiver_id: bob.id, content: 'later, bob', scheduled_at: due })

  for (const api of [alice.api, bob.api])
    assert.deepEqual(
      (await history(api, chatId)).map((m) => m.content),
      ['baseline'],
    )
  const listed = await scheduled(alice.api, chatId)
  assert.equal(listed.length, 1)
  assertPending(listed[0], { chat_id: chatId, sender_id: alice.id, receiver_id: bob.id, content: 'later, bob', scheduled_at: due })
  assert.equal(listed[0].scheduled_id, pending.scheduled_id)
  assert.deepEqual(await scheduled(bob.api, chatId), [], 'only my own pending messages')
  const bobItem = (await bob.api.get(`${V2}/chat_list`)).body.items.find((i: any) => i.chat_id === chatId)
  assert.equal(bobItem.last_message.message_id, first.message_id)
  assert.equal(bobItem.unread_count, 1)
  assert.deepEqual([await seqOf(alice.api), await seqOf(bob.api)], [aliceSeq, bobSeq], 'no update while pending')
  assert.deepEqual(await bobSocket.drain('message.new', Date.parse(due) - Date.now() - 150), [], 'nothing before it is due')

  const frame = await expectDelivery(bobSocket, due, 'later, bob')
  const delivered = frame.data.message
  assert.equal(typeof frame.seq, 'number')
  assert.ok(delivered.message_id > first.message_id, "a real message id, newer than the chat's last")
  assert.equal(delivered.chat_id, chatId)
  assert.equal(delivered.sender_id, alice.id)
  assert.notEqual(delivered.is_scheduled, true)
  for (const api of [alice.api, bob.api]) {
    const items = await history(api, chatId)
    assert.deepEqual(
      items.map((m) => [m.message_id, m.content]),
      [
        [delivered.message_id, 'later, bob'],
        [first.message_id, 'baseline'],
      ],
    )
  }
  assert.deepEqual(await scheduled(alice.api, chatId), [])
  await sleep(1200)
  assert.deepEqual(await bobSocket.drain('message.new', 0), [], 'delivered once')
  assert.equal((await history(bob.api, chatId)).length, 2)
})

test('scheduled_at in the past sends at once; more than 366 days ahead or not a date is 400', async () => {
  const [alice, bob] = await users(2)
  const { chatId } = await chatWith(alice, bob)
  const bobSocket = await connect(server.url, bob.token)

  const past = await send(alice.api, { receiver_id: bob.id, content: 'already due', scheduled_at: inMs(-60_000) })
  assert.notEqual(past.is_scheduled, true)
  const frame = await bobSocket.next('message.new', 1000)
  assert.equal(frame.data.message.message_id, past.message_id)
  assert.deepEqual(
    (await history(bob.api, chatId)).map((m) => m.content),
    ['already due', 'baseline'],
  )

  for (const scheduledAt of [inMs(367 * DAY), 'tomorrow', '']) {
    const res = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'too far', scheduled_at: scheduledAt })
    assert.equal(res.status, 400, `${scheduledAt}: ${res.text}`)
    assert.equal(res.body.error.code, 'validation_error')
  }
  assert.deepEqual(await scheduled(alice.api, chatId), [])
  assert.equal((await history(bob.api, chatId)).length, 2)

  const farButFine = await send(alice.api, { receiver_id: bob.id, content: 'next year', scheduled_at: inMs(365 * DAY) })
  assert.equal(farButFine.is_scheduled, true)
  const cancel = await reschedule(alice, farButFine.scheduled_id, { cancel: true })
  assert.equal(cancel.status, 200, cancel.text)
})

test('reschedule moves the time; the message arrives at the new time, once', async () => {
  const [alice, bob] = await users(2)
  const { chatId } = await chatWith(alice, bob)
  const bobSocket = await connect(server.url, bob.token)
  const pending = await send(alice.api, { chat_id: chatId, content: 'moved', scheduled_at: inMs(60_000) })
  assert.equal(pending.is_scheduled, true)

  const due = inMs(1200)
  const res = await reschedule(alice, pending.scheduled_id, { scheduled_at: due })
  assert.equal(res.status, 200, res.text)
  assertPending(res.body.data, { chat_id: chatId, sender_id: alice.id, receiver_id: bob.id, content: 'moved', scheduled_at: due })
  assert.equal(res.body.data.scheduled_id, pending.scheduled_id)
  const listed = await scheduled(alice.api, chatId)
  assert.deepEqual(
    listed.map((m) => [m.scheduled_id, Date.parse(m.scheduled_at)]),
    [[pending.scheduled_id, Date.parse(due)]],
  )

  await expectDelivery(bobSocket, due, 'moved')
  assert.deepEqual(await scheduled(alice.api, chatId), [])
  assert.deepEqual(
    (await history(alice.api, chatId)).map((m) => m.content),
    ['moved', 'baseline'],
  )
})

test('scheduled_at null sends now: the answer is the delivered message and the recipient gets it', async () => {
  const [alice, bob] = await users(2)
  const { chatId, first } = await chatWith(alice, bob)
  const bobSocket = await connect(server.url, bob.token)
  const pending = await send(alice.api, { receiver_id: bob.id, content: 'right now', scheduled_at: inMs(60_000) })

  const res = await reschedule(alice, pending.scheduled_id, { scheduled_at: null })
  assert.equal(res.status, 200, res.text)
  const message = res.body.data
  assert.notEqual(message.is_scheduled, true)
  assert.ok(message.message_id > first.message_id)
  assert.equal(message.content, 'right now')
  assert.equal(message.sender_id, alice.id)
  assert.equal(message.chat_id, chatId)
  const frame = await bobSocket.next('message.new', 1000)
  assert.deepEqual(frame.data.message.message_id, message.message_id)
  assert.deepEqual(
    (await history(bob.api, chatId)).map((m) => [m.message_id, m.content]),
    [
      [message.message_id, 'right now'],
      [first.message_id, 'baseline'],
    ],
  )
  assert.deepEqual(await scheduled(alice.api, chatId), [])
})

test('cancel: answered {scheduled_id, cancelled:true} and never delivered', async () => {
  const [alice, bob] = await users(2)
  const { chatId } = await chatWith(alice, bob)
  const bobSocket = await connect(server.url, bob.token)
  const bobSeq = await seqOf(bob.api)
  const due = inMs(800)
  const pending = await send(alice.api, { receiver_id: bob.id, content: 'never mind', scheduled_at: due })
  const res = await reschedule(alice, pending.scheduled_id, { cancel: true })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body, { success: true, data: { scheduled_id: pending.scheduled_id, cancelled: true } })
  assert.deepEqual(await scheduled(alice.api, chatId), [])
  assert.deepEqual(await bobSocket.drain('message.new', Date.parse(due) - Date.now() + 1500), [])
  assert.deepEqual(
    (await history(bob.api, chatId)).map((m) => m.content),
    ['baseline'],
  )
  assert.equal(await seqOf(bob.api), bobSeq)
})

test("someone else's or an unknown pending id is 404 for every operation, and changes nothing", async () => {
  const [alice, bob, eve] = await users(3)
  const { chatId } = await chatWith(alice, bob)
  const due = inMs(60_000)
  const pending = await send(alice.api, { receiver_id: bob.id, content: 'mine', scheduled_at: due })
  for (const user of [bob, eve]) {
    for (const body of [{ scheduled_at: inMs(120_000) }, { scheduled_at: null }, { cancel: true }]) {
      const res = await reschedule(user, pending.scheduled_id, body)
      assert.equal(res.status, 404, `${user === bob ? 'peer' : 'outsider'} ${JSON.stringify(body)}: ${res.text}`)
      assert.equal(res.body.error.code, 'not_found')
    }
  }
  const unknown = await reschedule(alice, 987_654_321, { cancel: true })
  assert.equal(unknown.status, 404)
  assert.equal((await server.api.post(`${V2}/messages/${pending.scheduled_id}/scheduled`, { cancel: true })).status, 401)
  const eveList = await eve.api.get(`${V2}/messages/scheduled`, { query: { chat_id: chatId } })
  assert.ok(eveList.status === 404 || (eveList.status === 200 && eveList.body.items.length === 0), eveList.text)
  const bad = await reschedule(alice, pending.scheduled_id, { scheduled_at: 'soon' })
  assert.equal(bad.status, 400)

  const listed = await scheduled(alice.api, chatId)
  assert.equal(listed.length, 1)
  assertPending(listed[0], { chat_id: chatId, sender_id: alice.id, receiver_id: bob.id, content: 'mine', scheduled_at: due })
  assert.deepEqual(
    (await history(bob.api, chatId)).map((m) => m.content),
    ['baseline'],
  )
  await reschedule(alice, pending.scheduled_id, { cancel: true })
})

test('a retried scheduled send (client_message_id or Idempotency-Key) answers with the first pending message, and one message arrives', async () => {
  const [alice, bob] = await users(2)
  const { chatId } = await chatWith(alice, bob)
  const bobSocket = await connect(server.url, bob.token)
  const due = inMs(1200)
  const body = { chat_id: chatId, content: 'once, later', client_message_id: 'sched-retry-1', scheduled_at: due }
  const first = await send(alice.api, body)
  const again = await send(alice.api, body)
  assert.equal(again.scheduled_id, first.scheduled_id, 'the retry is the same pending message')
  assertPending(again, { chat_id: chatId, sender_id: alice.id, receiver_id: bob.id, content: 'once, later', scheduled_at: due })
  // a retry that lost its scheduled_at (sent at once) still finds the pending one, not a new message
  const immediate = await send(alice.api, { chat_id: chatId, content: 'once, later', client_message_id: 'sched-retry-1' })
  assert.equal(immediate.scheduled_id, first.scheduled_id)
  assert.equal(immediate.is_scheduled, true)

  const keyed = { chat_id: chatId, content: 'by key', scheduled_at: due }
  const headers = { 'idempotency-key': 'sched-key-1' }
  const byKey = await alice.api.post(`${V2}/messages/send`, keyed, { headers })
  const byKeyAgain = await alice.api.post(`${V2}/messages/send`, keyed, { headers })
  assert.equal(byKey.status, 200, byKey.text)
  assert.equal(byKeyAgain.body.data.scheduled_id, byKey.body.data.scheduled_id)

  // a message due after them must not be held back by anything about them
  const afterDue = inMs(1500)
  await send(alice.api, { chat_id: chatId, content: 'unrelated', scheduled_at: afterDue })
  assert.deepEqual(
    (await scheduled(alice.api, chatId)).map((m) => m.content),
    ['once, later', 'by key', 'unrelated'],
  )

  const arrived = [
    await bobSocket.next('message.new', 5000),
    await bobSocket.next('message.new', 5000),
    await bobSocket.next('message.new', 5000),
  ]
  assert.deepEqual(
    arrived.map((f) => f.data.message.content),
    ['once, later', 'by key', 'unrelated'],
  )
  assert.deepEqual(await bobSocket.drain('message.new', 500), [], 'no second copy')
  assert.deepEqual(
    (await history(bob.api, chatId)).map((m) => m.content),
    ['unrelated', 'by key', 'once, later', 'baseline'],
  )
  assert.deepEqual(await scheduled(alice.api, chatId), [])

  // once delivered, a retry answers with the delivered message
  const late = await send(alice.api, body)
  assert.equal(late.message_id, arrived[0].data.message.message_id)
  assert.equal(late.is_scheduled ?? false, false)
  assert.equal((await history(bob.api, chatId)).length, 4, 'still no duplicate')
  await bobSocket.close()
})

test('a pending message that cannot be delivered is retried later and holds back nothing due after it', async () => {
  const [alice, bob] = await users(2)
  const { chatId } = await chatWith(alice, bob)
  const bobSocket = await connect(server.url, bob.token)
  // a row no delivery can turn into a message (its payload is JSON null), due first
  const broken = await server.ctx.db
    .insertInto('scheduled_messages')
    .values({
      chat_id: chatId,
      sender_id: alice.id,
      payload: 'null',
      client_message_id: null,
      scheduled_at: Date.now() - 1000,
      created_at: Date.now(),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  const due = inMs(700)
  await send(alice.api, { chat_id: chatId, content: 'not held back', scheduled_at: due })
  await expectDelivery(bobSocket, due, 'not held back')
  const left = await server.ctx.db.selectFrom('scheduled_messages').select('id').where('chat_id', '=', chatId).execute()
  assert.deepEqual(
    left.map((row) => row.id),
    [broken.id],
    'the broken row waits for a retry',
  )
  await server.ctx.db.deleteFrom('scheduled_messages').where('id', '=', broken.id).execute()
  await bobSocket.close()
})

test("a pending message whose sender was blocked meanwhile is dropped: scheduled.dropped {reason: blocked} reaches the sender's devices, nothing reaches the blocker", async () => {
  const [alice, bob] = await users(2)
  const { chatId } = await chatWith(alice, bob)
  const [laptop, phone, bobSocket] = await Promise.all([
    connect(server.url, alice.token),
    connect(server.url, alice.token),
    connect(server.url, bob.token),
  ])
  const bobSeq = await seqOf(bob.api)
  const due = inMs(700)
  const pending = await send(alice.api, { receiver_id: bob.id, content: 'you will not see this', scheduled_at: due })
  assert.equal((await bob.api.post(`${V2}/block`, { user_id: alice.id })).status, 200)
  const bobAfterBlock = await seqOf(bob.api)

  for (const socket of [laptop, phone]) {
    const frame = await socket.next('scheduled.dropped', Date.parse(due) - Date.now() + 2000)
    assert.deepEqual(frame.data, { chat_id: chatId, scheduled_id: pending.scheduled_id, reason: 'blocked' })
    assert.equal(typeof frame.seq, 'number')
  }
  assert.deepEqual(await scheduled(alice.api, chatId), [], 'no longer pending')
  for (const api of [alice.api, bob.api])
    assert.deepEqual(
      (await history(api, chatId)).map((m) => m.content),
      ['baseline'],
    )
  assert.deepEqual(await bobSocket.drain('message.new', 300), [])
  assert.deepEqual(await bobSocket.drain('scheduled.dropped', 0), [])
  assert.ok(bobAfterBlock > bobSeq, 'the block itself is logged for bob')
  assert.equal(await seqOf(bob.api), bobAfterBlock, 'nothing else reached the blocker')
  // logged: a device that was offline learns it on resume
  const log = (await alice.api.get(`${V2}/updates`, { query: { since: 0, limit: 1000 } })).body.data.updates as any[]
  assert.deepEqual(
    log.filter((item) => item.type === 'scheduled.dropped').map((item) => item.data),
    [{ chat_id: chatId, scheduled_id: pending.scheduled_id, reason: 'blocked' }],
  )
})

test('sending a pending message now while blocked is 403 blocked and it stays pending; after unblock it sends', async () => {
  const [alice, bob] = await users(2)
  const { chatId } = await chatWith(alice, bob)
  const pending = await send(alice.api, { receiver_id: bob.id, content: 'try now', scheduled_at: inMs(60_000) })
  assert.equal((await bob.api.post(`${V2}/block`, { user_id: alice.id })).status, 200)
  const refused = await reschedule(alice, pending.scheduled_id, { scheduled_at: null })
  assert.equal(refused.status, 403, refused.text)
  assert.equal(refused.body.error.code, 'blocked')
  assert.deepEqual(
    (await scheduled(alice.api, chatId)).map((m) => m.scheduled_id),
    [pending.scheduled_id],
    'still pending',
  )
  assert.equal((await bob.api.post(`${V2}/unblock`, { user_id: alice.id })).status, 200)
  const sent = await reschedule(alice, pending.scheduled_id, { scheduled_at: null })
  assert.equal(sent.status, 200, sent.text)
  assert.equal(sent.body.data.content, 'try now')
  assert.deepEqual(
    (await history(bob.api, chatId)).map((m) => m.content),
    ['try now', 'baseline'],
  )
})

test('a pending message in a group its sender left is dropped with reason not_member; the group gets nothing', async () => {
  const [stayer, leaver] = await users(2)
  const created = await leaver.api.post(`${V2}/groups/create`, { title: 'Trips', member_ids: [stayer.id] })
  assert.equal(created.status, 200, created.text)
  const groupId = created.body.data.group_id as number
  const stayerSocket = await connect(server.url, stayer.token)
  const leaverSocket = await connect(server.url, leaver.token)
  const due = inMs(700)
  const pending = await send(leaver.api, { chat_id: groupId, content: 'see you there', scheduled_at: due })
  assert.equal((await leaver.api.post(`${V2}/groups/leave`, { chat_id: groupId })).status, 200)

  const frame = await leaverSocket.next('scheduled.dropped', Date.parse(due) - Date.now() + 2000)
  assert.deepEqual(frame.data, { chat_id: groupId, scheduled_id: pending.scheduled_id, reason: 'not_member' })
  assert.deepEqual(await stayerSocket.drain('message.new', 300), [])
  const res = await stayer.api.get(`${V2}/chat/history`, { query: { chat_id: groupId, per_page: 100 } })
  assert.equal(res.status, 200, res.text)
  assert.ok(!(res.body.items as any[]).some((m) => m.content === 'see you there'))
})

test('a channel post scheduled by an admin who is no longer one when it is due is dropped with reason not_allowed', async () => {
  const [owner, editor] = await users(2)
  const created = await owner.api.post(`${V2}/channels/create`, { title: 'Bulletin' })
  assert.equal(created.status, 200, created.text)
  const channelId = created.body.data.channel_id as number
  assert.equal((await editor.api.post(`${V2}/channels/subscribe`, { channel_id: channelId })).status, 200)
  assert.equal((await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channelId, user_id: editor.id })).status, 200)
  const editorSocket = await connect(server.url, editor.token)
  const due = inMs(700)
  const pending = await send(editor.api, { chat_id: channelId, content: 'scheduled post', scheduled_at: due })
  assert.equal((await owner.api.post(`${V2}/channels/remove-admin`, { channel_id: channelId, user_id: editor.id })).status, 200)

  const frame = await editorSocket.next('scheduled.dropped', Date.parse(due) - Date.now() + 2000)
  assert.deepEqual(frame.data, { chat_id: channelId, scheduled_id: pending.scheduled_id, reason: 'not_allowed' })
  assert.deepEqual(
    (await history(owner.api, channelId)).map((m) => m.content),
    [],
  )
})

test('a pending message survives a restart and is delivered by the new process', async () => {
  const first = await startTestServer()
  const [alice, bob] = await users(2, first)
  const { chatId } = await chatWith(alice, bob)
  const bobSeq = await seqOf(bob.api)
  const due = inMs(4000)
  await send(alice.api, { receiver_id: bob.id, content: 'across restarts', scheduled_at: due })

  const second = await first.restart()
  assert.ok(Date.now() < Date.parse(due) - 200, 'restarted before the message was due')
  const bobSocket = await connect(second.url, bob.token)
  bobSocket.send({ type: 'resume', seq: bobSeq })
  const frame = await bobSocket.next('message.new', Date.parse(due) - Date.now() + 3000)
  assert.equal(frame.data.message.content, 'across restarts')
  assert.ok(Date.now() - Date.parse(due) <= 1250, 'on time after the restart')
  const items = await history(second.api.as(alice.token), chatId)
  assert.deepEqual(
    items.map((m) => m.content),
    ['across restarts', 'baseline'],
  )
  assert.deepEqual(await bobSocket.drain('message.new', 500), [], 'once')
  await bobSocket.close()
  await second.close()
})

const multiInstanceSkip =
  testDatabaseUrl && testRedisUrl ? false : 'needs TEST_DATABASE_URL and TEST_REDIS_URL (two instances on one PostgreSQL and one Redis)'

test('two instances on one database deliver each scheduled message exactly once', { skip: multiInstanceSkip }, async () => {
  const prefix = `tern-test-shared-${randomBytes(6).toString('hex')}:`
  const s1 = await startTestServer({ env: { REDIS_PREFIX: prefix } })
  const s2 = await startTestServer({ database: s1.database, env: { REDIS_PREFIX: prefix } })
  const [alice, bob] = await users(2, s1)
  const { chatId } = await chatWith(alice, bob)
  const bobOnS1 = await connect(s1.url, bob.token)
  const bobOnS2 = await connect(s2.url, bob.token)
  const apis = [s1.api.as(alice.token), s2.api.as(alice.token)]

  const due = inMs(2500)
  for (let i = 0; i < 20; i++) {
    const pending = await send(apis[i % 2], { chat_id: chatId, content: `burst ${i}`, scheduled_at: due })
    assert.equal(pending.is_scheduled, true)
  }
  assert.ok(Date.now() < Date.parse(due), 'all scheduled before they were due')
  await sleep(Date.parse(due) - Date.now() + 2500)

  const page = await s2.api.as(bob.token).get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 100 } })
  assert.equal(page.body.total, 21)
  const burst = page.body.items.filter((m: any) => m.content.startsWith('burst '))
  assert.equal(burst.length, 20)
  assert.equal(new Set(burst.map((m: any) => m.content)).size, 20)
  for (const socket of [bobOnS1, bobOnS2]) {
    const frames = await socket.drain('message.new', 0)
    assert.equal(frames.length, 20, `frames on one device: ${frames.length}`)
    assert.equal(new Set(frames.map((f) => f.data.message.message_id)).size, 20)
  }
  const log = await s1.api.as(bob.token).get(`${V2}/updates`, { query: { since: 0, limit: 1000 } })
  assert.equal(log.body.data.updates.filter((u: any) => u.type === 'message.new').length, 21)
  assert.deepEqual(await scheduled(apis[0], chatId), [])
})
