/**
 * Push notifications end to end against a real Web Push service on loopback (web-push-testing:
 * real subscription keys, VAPID checked, aes128gcm decrypted by the service): registration, what
 * the push-delivery job sends to offline users and what it does not, 410 handling, sessions
 * ending, and the admin's send.
 */
import assert from 'node:assert/strict'
import { createECDH, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, test } from 'node:test'
import { fromJson } from '../../src/db/json.js'
import { deliverQueued } from '../../src/modules/push/delivery.js'
import { V2, send } from '../harness/messaging.js'
import { pushServiceOrSkip, type TestSubscription } from '../harness/push-service.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'
import { waitFor } from '../harness/wait.js'

const service = await pushServiceOrSkip()
const skip = service ? false : 'the push service (web-push-testing) could not start'
// loopback push service: WEBHOOK_ALLOW_PRIVATE; a short job period so pushes go out quickly
const server: TestServer | null = service
  ? await startTestServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', PUSH_DELIVERY_INTERVAL_MS: '100' } })
  : null

/** A server whose push job does not run by itself (an hour apart): the test runs it (deliverQueued) when it wants. */
const manualOne: TestServer | null = service
  ? await startTestServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', PUSH_DELIVERY_INTERVAL_MS: '3600000', PUSH_MAX_ATTEMPTS: '3' } })
  : null
const manualServer = async () => manualOne!

async function vapidKey(): Promise<string> {
  const res = await server!.api.get(`${V2}/push/vapid-public-key`)
  assert.equal(res.status, 200, res.text)
  return res.body.data.public_key
}

/** A real subscription at the push service, registered for `user`'s session; returns it with its id. */
async function subscribe(user: TestUser, api = user.api): Promise<TestSubscription & { id: number }> {
  const sub = await service!.subscribe(await vapidKey())
  const res = await api.post(`${V2}/push/register`, { subscription: sub.subscription })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(Object.keys(res.body.data), ['id'])
  return { ...sub, id: res.body.data.id }
}

const subscriptionExists = async (id: number) =>
  (await server!.ctx.db.selectFrom('push_subscriptions').select('id').where('id', '=', id).executeTakeFirst()) !== undefined

/** the user's push items in the work queue (one per chat) */
const pushItems = (target: TestServer, userId: number) =>
  target.ctx.db.selectFrom('work_queue').selectAll().where('kind', '=', 'push').where('item_key', 'like', `${userId}:%`).execute()
/** the manual server gathers a burst for an hour: its items are made due by hand */
const dueNow = (target: TestServer, userId: number) =>
  target.ctx.db.updateTable('work_queue').set({ due_at: 0 }).where('kind', '=', 'push').where('item_key', 'like', `${userId}:%`).execute()

const queuedFor = async (userId: number) => (await pushItems(server!, userId)).length

/** Waits until the subscription has received `n` pushes (and returns them all). */
const received = (sub: TestSubscription, n: number, timeoutMs = 5000) =>
  waitFor(
    async () => {
      const messages = await service!.messages(sub)
      return messages.length >= n ? messages : undefined
    },
    { timeoutMs, message: `${n} push(es) received` },
  )

/** Waits until nothing is queued for the user any more (the job has dealt with it). */
const drained = (userId: number) =>
  waitFor(async () => ((await queuedFor(userId)) === 0 ? true : undefined), { timeoutMs: 5000, message: 'push queue drained' })

test('an offline user gets a push for a new message, naming the sender and the chat, with the text', { skip }, async () => {
  const alice = await server!.registerUser({ display_name: 'Alice A.' })
  const bob = await server!.registerUser()
  const sub = await subscribe(bob)
  const message = await send(alice, bob, 'hello from alice')
  const [push] = await received(sub, 1)
  assert.deepEqual(push, {
    type: 'message',
    chat_id: message.chat_id,
    message_id: message.message_id,
    sender: { user_id: alice.id, username: alice.username, display_name: 'Alice A.' },
    body: 'hello from alice',
    count: 1,
  })
})

test('a receiver who had no subscription and registers one gets the push for the next message', { skip }, async () => {
  const [alice, bob] = [await server!.registerUser(), await server!.registerUser()]
  // messages while bob has no subscription: nothing queued (this instance learns that he has none)
  await send(alice, bob, 'before 1')
  await send(alice, bob, 'before 2')
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.equal(await queuedFor(bob.id), 0)
  const sub = await subscribe(bob)
  await send(alice, bob, 'after')
  const pushes = await received(sub, 1)
  assert.deepEqual(
    pushes.map((p) => p.body),
    ['after'],
  )
})

test('in a group, the push names the group; a reply to me is a reply, a mention of me a mention', { skip }, async () => {
  const [alice, bob] = [await server!.registerUser(), await server!.registerUser()]
  const sub = await subscribe(bob)
  const group = await alice.api.post(`${V2}/groups/create`, { title: 'Hikers', member_ids: [bob.id] })
  assert.equal(group.status, 200, group.text)
  const chatId = group.body.data.group_id
  const mention = await alice.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `see you, @${bob.username}!` })
  assert.equal(mention.status, 200, mention.text)
  const [first] = await received(sub, 1)
  assert.equal(first.type, 'mention')
  assert.equal(first.chat_title, 'Hikers')
  assert.equal(first.chat_id, chatId)

  // bob writes (his own message pushes nothing to him), alice replies to it
  const own = await bob.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'where?' })
  assert.equal(own.status, 200, own.text)
  const reply = await alice.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'the hill', reply_to_id: own.body.data.message_id })
  assert.equal(reply.status, 200, reply.text)
  const pushes = await received(sub, 2)
  assert.equal(pushes.length, 2)
  assert.equal(pushes[1].type, 'reply')
  assert.equal(pushes[1].message_id, reply.body.data.message_id)
})

test('a channel post pushes nothing to offline subscribers; a personal message after it does (positive control)', { skip }, async () => {
  const [owner, bob] = [await server!.registerUser(), await server!.registerUser()]
  const sub = await subscribe(bob)
  const channel = await owner.api.post(`${V2}/channels/create`, { title: 'News' })
  assert.equal(channel.status, 200, channel.text)
  const channelId = channel.body.data.channel_id
  assert.equal((await bob.api.post(`${V2}/channels/subscribe`, { channel_id: channelId })).status, 200)
  assert.equal((await owner.api.post(`${V2}/messages/send`, { chat_id: channelId, content: 'post' })).status, 200)
  await send(owner, bob, 'direct')
  await received(sub, 1)
  await drained(bob.id)
  assert.deepEqual(
    (await service!.messages(sub)).map((p) => p.body),
    ['direct'],
  )
})

test('a user with a live socket gets no push; an offline member of the same group does (positive control)', { skip }, async () => {
  const [alice, bob, carol] = [await server!.registerUser(), await server!.registerUser(), await server!.registerUser()]
  const bobSub = await subscribe(bob)
  const carolSub = await subscribe(carol)
  const socket = await TestSocket.connect(server!.url, bob.token)
  const group = await alice.api.post(`${V2}/groups/create`, { title: 'Trio', member_ids: [bob.id, carol.id] })
  const chatId = group.body.data.group_id
  const sent = await alice.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'hi both' })
  assert.equal(sent.status, 200, sent.text)
  const [push] = await received(carolSub, 1)
  assert.equal(push.message_id, sent.body.data.message_id)
  await drained(bob.id)
  assert.deepEqual(await service!.messages(bobSub), [], 'online bob got no push')
  // once his socket is gone, bob is offline again and gets the next one
  socket.close()
  await waitFor(
    async () =>
      (await server!.ctx.db.selectFrom('users').select('is_online').where('id', '=', bob.id).executeTakeFirstOrThrow()).is_online === 0
        ? true
        : undefined,
    { timeoutMs: 3000 },
  )
  await alice.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'bob?' })
  const [later] = await received(bobSub, 1)
  assert.equal(later.body, 'bob?')
})

test('a chat muted in settings sends nothing; another chat still does (positive control)', { skip }, async () => {
  const [alice, bob, carol] = [await server!.registerUser(), await server!.registerUser(), await server!.registerUser()]
  const sub = await subscribe(bob)
  const first = await send(alice, bob, 'before muting')
  await received(sub, 1)
  const mute = await bob.api.post(`${V2}/settings/update`, { key: 'muted_chats', value: [first.chat_id] })
  assert.equal(mute.status, 200, mute.text)
  await send(alice, bob, 'muted now')
  await send(carol, bob, 'from carol')
  const pushes = await received(sub, 2)
  await drained(bob.id)
  assert.deepEqual(
    (await service!.messages(sub)).map((p) => p.body),
    ['before muting', 'from carol'],
  )
  assert.equal(pushes[1].sender.user_id, carol.id)
})

test("an encrypted message's push names sender and chat but carries no content", { skip }, async () => {
  const [alice, bob] = [await server!.registerUser(), await server!.registerUser()]
  const sub = await subscribe(bob)
  const res = await alice.api.post(`${V2}/messages/send`, {
    receiver_id: bob.id,
    is_encrypted: true,
    encrypted_content: 'c2VjcmV0IGNpcGhlcnRleHQ',
    encryption_key_id: 'k1',
  })
  assert.equal(res.status, 200, res.text)
  const [push] = await received(sub, 1)
  assert.equal(push.message_id, res.body.data.message_id)
  assert.equal(push.sender.user_id, alice.id)
  assert.equal('body' in push, false)
  const text = JSON.stringify(push)
  assert.equal(text.includes('c2VjcmV0'), false)
  assert.equal(text.includes('encrypted_content'), false)
})

test('a burst of messages in one chat collapses into one notification naming the newest', { skip }, async () => {
  const manual = await manualServer()
  const [alice, bob] = [await manual.registerUser(), await manual.registerUser()]
  const key = (await manual.api.get(`${V2}/push/vapid-public-key`)).body.data.public_key
  const sub = await service!.subscribe(key)
  assert.equal((await bob.api.post(`${V2}/push/register`, { subscription: sub.subscription })).status, 200)
  const burst: any[] = []
  for (let i = 1; i <= 5; i++) burst.push(await send(alice, bob, `burst ${i}`))
  const queued = await waitFor(
    async () => {
      const rows = await pushItems(manual, bob.id)
      return rows.length === 1 && rows[0].count === 5 ? rows : undefined
    },
    { timeoutMs: 3000, message: 'five messages queued in one row' },
  )
  assert.equal(queued[0].ref, burst[4].message_id)
  await dueNow(manual, bob.id)
  const stats = await deliverQueued(manual.ctx, new AbortController().signal)
  assert.equal(stats.sent, 1)
  const pushes = await service!.messages(sub)
  assert.equal(pushes.length, 1)
  assert.equal(pushes[0].chat_id, burst[0].chat_id)
  assert.equal(pushes[0].message_id, burst[4].message_id)
  assert.equal(pushes[0].body, 'burst 5')
  assert.equal(pushes[0].count, 5)
  assert.equal((await pushItems(manual, bob.id)).length, 0)
})

test('a push service failing otherwise is retried with backoff and given up after PUSH_MAX_ATTEMPTS; the subscription stays', {
  skip,
}, async () => {
  const manual = await manualServer()
  let hits = 0
  const failing = http.createServer((request, response) => {
    hits++
    request.resume()
    response.writeHead(503).end()
  })
  failing.listen(0, '127.0.0.1')
  await once(failing, 'listening')
  after(() => failing.close())
  const [alice, bob] = [await manual.registerUser(), await manual.registerUser()]
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  const endpoint = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/push/bob`
  const registered = await bob.api.post(`${V2}/push/register`, {
    subscription: { endpoint, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') } },
  })
  assert.equal(registered.status, 200, registered.text)
  await send(alice, bob, 'will it arrive?')
  const row = async () => (await pushItems(manual, bob.id))[0]
  await waitFor(async () => (await row()) ?? undefined, { timeoutMs: 3000, message: 'queued' })
  await dueNow(manual, bob.id)
  const run = () => deliverQueued(manual.ctx, new AbortController().signal)

  assert.equal((await run()).failed, 1)
  const first = (await row())!
  assert.equal(first.attempts, 1)
  assert.ok(first.due_at >= Date.now() + 4000, 'the first retry waits about 5 s')
  await run()
  assert.equal(hits, 1, 'nothing is sent again before the retry is due')

  await manual.ctx.db.updateTable('work_queue').set({ due_at: 0 }).where('id', '=', first.id).execute()
  await run()
  const second = (await row())!
  assert.equal(second.attempts, 2)
  assert.ok(second.due_at >= Date.now() + 9000, 'the second waits about 10 s')
  await manual.ctx.db.updateTable('work_queue').set({ due_at: 0 }).where('id', '=', first.id).execute()
  await run()
  assert.equal(hits, 3)
  assert.equal(await row(), undefined, 'given up after 3 attempts')
  assert.equal(
    (await manual.ctx.db.selectFrom('push_subscriptions').select('id').where('id', '=', registered.body.data.id).execute()).length,
    1,
  )
})

test('a call ringing for an offline callee is pushed to them (not to the caller), named as a call', { skip }, async () => {
  const [alice, bob] = [await server!.registerUser({ display_name: 'Alice Caller' }), await server!.registerUser()]
  const bobSub = await subscribe(bob)
  const aliceSub = await subscribe(alice)
  const started = await alice.api.post(`${V2}/calls/start`, { receiver_id: bob.id, call_type: 'video' })
  assert.equal(started.status, 200, started.text)
  const [push] = await received(bobSub, 1)
  assert.deepEqual(push, {
    type: 'call',
    call_id: started.body.data.call_id,
    call_type: 'video',
    sender: { user_id: alice.id, username: alice.username, display_name: 'Alice Caller' },
  })
  await drained(bob.id)
  assert.deepEqual(await service!.messages(aliceSub), [], 'the caller gets no push for their own call')
  assert.equal((await alice.api.post(`${V2}/calls/${started.body.data.call_id}/end`, {})).status, 200)
})

test('a 410 from the push service deletes the subscription; the other device still gets it', { skip }, async () => {
  const [alice, bob] = [await server!.registerUser(), await server!.registerUser()]
  const gone = await subscribe(bob)
  const kept = await subscribe(bob)
  await service!.expire(gone)
  await send(alice, bob, 'anyone there?')
  await received(kept, 1)
  await waitFor(async () => ((await subscriptionExists(gone.id)) ? undefined : true), {
    timeoutMs: 3000,
    message: 'expired subscription deleted',
  })
  assert.equal(await subscriptionExists(kept.id), true)
})

test("logout, revoking a session and a ban remove that session's subscriptions, and only those", { skip }, async () => {
  const bob = await server!.registerUser()
  const loginAgain = async () => {
    const res = await server!.api.post(`${V2}/auth/login`, { login: bob.username, password: bob.password })
    assert.equal(res.status, 200, res.text)
    return server!.api.as(res.body.data.session_token)
  }
  const stays = await subscribe(bob)
  const phone = await loginAgain()
  const phoneSub = await subscribe(bob, phone)
  assert.equal((await phone.post(`${V2}/auth/logout`, {})).status, 200)
  assert.equal(await subscriptionExists(phoneSub.id), false, 'logout removed it')
  assert.equal(await subscriptionExists(stays.id), true, "the other session's stays")

  const tablet = await loginAgain()
  const tabletSub = await subscribe(bob, tablet)
  const sessions = await tablet.get(`${V2}/sessions`)
  const current = sessions.body.items.find((s: any) => s.is_current)
  assert.equal((await bob.api.delete(`${V2}/sessions/${current.id}`)).status, 200)
  assert.equal(await subscriptionExists(tabletSub.id), false, 'revoking removed it')
  assert.equal(await subscriptionExists(stays.id), true)

  const admin = await server!.createAdmin()
  const ban = await admin.api.post(`/api/admin/users/${bob.id}/ban`, { reason: 'spam' })
  assert.equal(ban.status, 200, ban.text)
  assert.equal(await subscriptionExists(stays.id), false, 'a ban removed every one')
})

test('admin send answers {sent, failed} and writes one ModLog row; others get 403, anonymous 401', { skip }, async () => {
  const [admin, bob, carol] = [await server!.createAdmin(), await server!.registerUser(), await server!.registerUser()]
  const live = await subscribe(bob)
  const failing = await subscribe(bob)
  await service!.expire(failing)
  const native = await bob.api.post(`/api/push/register`, { push_token: 'fcm-token-123', platform: 'fcm' })
  assert.equal(native.status, 200, native.text)

  const res = await admin.api.post(`${V2}/push/send`, {
    user_id: bob.id,
    title: 'Maintenance',
    body: 'Tonight at 22:00',
    data: { url: '/status' },
  })
  assert.equal(res.status, 200, res.text)
  // the expired one is gone (410) and the FCM token has no sender configured: both not delivered
  assert.deepEqual(res.body.data, { sent: 1, failed: 2 })
  const [push] = await received(live, 1)
  assert.deepEqual(push, { type: 'admin', title: 'Maintenance', body: 'Tonight at 22:00', data: { url: '/status' } })
  assert.equal(await subscriptionExists(failing.id), false)

  const rows = await server!.ctx.db
    .selectFrom('mod_logs')
    .selectAll()
    .where('action', '=', 'push.send')
    .where('target_id', '=', bob.id)
    .execute()
  assert.equal(rows.length, 1)
  assert.equal(rows[0].admin_id, admin.id)
  assert.deepEqual(fromJson(rows[0].details), { title: 'Maintenance', sent: 1, failed: 2 })

  const legacy = await admin.api.post('/api/push/send', { user_id: carol.id, title: 'Hi', body: '' })
  assert.equal(legacy.status, 200, legacy.text)
  assert.deepEqual(legacy.body.data, { sent: 0, failed: 0 })

  const notAdmin = await carol.api.post(`${V2}/push/send`, { user_id: bob.id, title: 'x', body: 'y' })
  assert.equal(notAdmin.status, 403)
  assert.equal(notAdmin.body.error.code, 'forbidden')
  assert.equal((await server!.api.post('/api/push/send', { user_id: bob.id, title: 'x', body: 'y' })).status, 401)
  assert.equal((await admin.api.post(`${V2}/push/send`, { user_id: 999_999_999, title: 'x', body: 'y' })).status, 404)
  assert.equal((await admin.api.post(`${V2}/push/send`, { user_id: bob.id, title: 'x'.repeat(201), body: 'y' })).status, 400)
  assert.equal(
    (await server!.ctx.db.selectFrom('mod_logs').select('id').where('action', '=', 'push.send').where('target_id', '=', bob.id).execute())
      .length,
    1,
  )
})
