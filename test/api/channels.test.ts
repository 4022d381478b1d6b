/**
 * Channels (V2) end to end: shapes, subscribing (public by id, private by invite), subscribers
 * pages, posts and reactions over the WebSocket and in history, the chat list, verification,
 * channel admins, discussion groups, invite links, leaving, catch-up, and bad input.
 * Who may do what is tested cell by cell in permissions.test.ts.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createChannel as channel } from '../harness/fixtures.js'
import { assertError } from '../harness/assert.js'
import type { Response } from '../harness/client.js'
import { history, ISO, registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { TestSocket, type Frame } from '../harness/socket.js'
import WebSocket from 'ws'

const server = await startTestServer()
const platformAdmin = await server.createAdmin()
const users = (n: number) => registerUsers(server, n)
const connect = (user: TestUser) => TestSocket.connect(server.url, user.token)

const CREATE_KEYS = [
  'avatar_url',
  'channel_id',
  'chat_seq',
  'created_at',
  'description',
  'discussion_group_id',
  'invite_link',
  'is_public',
  'is_verified',
  'my_role',
  'name',
  'owner_id',
  'owner_username',
  'subscriber_count',
]
const FULL_KEYS = [...CREATE_KEYS, 'admins', 'is_subscribed'].sort()
const MESSAGE_KEYS = [
  'chat_id',
  'client_message_id',
  'content',
  'delivered_at',
  'edited_at',
  'emoji',
  'emoji_count',
  'emoji_file',
  'emoji_size',
  'emoji_url',
  'encrypted_content',
  'encryption_key_id',
  'external_message_id',
  'file_path',
  'file_type',
  'file_url',
  'forwarded_from',
  'is_encrypted',
  'is_from_external',
  'is_read',
  'message_id',
  'poll_id',
  'reactions',
  'read_at',
  'receiver_id',
  'reply_to_id',
  'sender_avatar_url',
  'sender_id',
  'sender_username',
  'timestamp',
  'topic_id',
]
const PEER_KEYS = [
  'avatar_url',
  'bot_webapp_url',
  'display_name',
  'is_bot',
  'is_online',
  'is_premium',
  'last_seen',
  'status_emoji',
  'user_id',
  'username',
]
const CHANNEL_LINK = /^https?:\/\/[^/]+\/channel\/[A-Za-z0-9_-]{16,}$/

function ok(res: Response) {
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.success, true)
  return res.body.data ?? res.body
}
const createChannel = (owner: TestUser, body: Record<string, unknown> = {}) =>
  channel(owner, { title: 'News', description: 'daily news', ...body })
const getChannel = async (user: TestUser, id: number) => ok(await user.api.get(`${V2}/channels/${id}`))
const subscribe = async (user: TestUser, body: Record<string, unknown>) => ok(await user.api.post(`${V2}/channels/subscribe`, body))
const publish = async (user: TestUser, channelId: number, content: string) =>
  ok(await user.api.post(`${V2}/messages/send`, { chat_id: channelId, content }))
const subscribers = async (user: TestUser, channelId: number, query: Record<string, number> = {}) =>
  ok(await user.api.get(`${V2}/channels/subscribers`, { query: { channel_id: channelId, ...query } }))
/** The chat list item of this chat, or undefined */
const listItem = async (user: TestUser, chatId: number) =>
  (ok(await user.api.get(`${V2}/chat_list`, { query: { per_page: 100 } })).items as any[]).find((item) => item.chat_id === chatId)

/** The first frame of a fresh connection (TestSocket.connect takes it for itself). */
async function readyFrame(user: TestUser): Promise<Frame> {
  const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}${V2}/ws`, { headers: { authorization: `Bearer ${user.token}` } })
  try {
    return await new Promise<Frame>((resolve, reject) => {
      ws.once('message', (raw) => resolve(JSON.parse(String(raw))))
      ws.once('error', reject)
      setTimeout(() => reject(new Error('no ready frame')), 3000)
    })
  } finally {
    ws.close()
  }
}

// ---- create and the Channel shape -----------------------------------------------------------------

test('create answers the Channel shape without is_subscribed and admins; public by default', async () => {
  const [owner] = await users(1)
  const channel = await createChannel(owner)
  assert.deepEqual(Object.keys(channel).sort(), CREATE_KEYS)
  assert.equal(typeof channel.channel_id, 'number')
  assert.equal(channel.name, 'News')
  assert.equal(channel.description, 'daily news')
  assert.equal(channel.avatar_url, null)
  assert.equal(channel.owner_id, owner.id)
  assert.equal(channel.owner_username, owner.username)
  assert.equal(channel.is_public, true)
  assert.match(channel.invite_link, CHANNEL_LINK)
  assert.equal(channel.subscriber_count, 1)
  assert.match(channel.created_at, ISO)
  assert.equal(channel.is_verified, false)
  assert.equal(channel.discussion_group_id, null)
  assert.equal(channel.my_role, 'owner')
  assert.equal(typeof channel.chat_seq, 'number')

  const bare = ok(await owner.api.post(`${V2}/channels/create`, { title: '  Trimmed  ' }))
  assert.equal(bare.name, 'Trimmed')
  assert.equal(bare.description, '')
  const hidden = await createChannel(owner, { is_public: false })
  assert.equal(hidden.is_public, false)
  assert.match(hidden.invite_link, CHANNEL_LINK, 'the owner sees the invite link of a private channel')
})

test('GET channels/{id} and channels/info: the full shape, admins owner first, invite link by visibility', async () => {
  const [owner, admin, subscriber, outsider] = await users(4)
  const channel = await createChannel(owner)
  await subscribe(admin, { channel_id: channel.channel_id })
  await subscribe(subscriber, { channel_id: channel.channel_id })
  ok(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: admin.id }))

  const full = await getChannel(owner, channel.channel_id)
  assert.deepEqual(Object.keys(full).sort(), FULL_KEYS)
  const byInfo = ok(await owner.api.get(`${V2}/channels/info`, { query: { channel_id: channel.channel_id } }))
  assert.deepEqual(byInfo, full, 'channels/info is the same as channels/{id}')
  assert.equal(full.is_subscribed, true)
  assert.equal(full.subscriber_count, 3)
  assert.equal(full.owner_username, owner.username)
  assert.deepEqual(full.admins, [
    { user_id: owner.id, username: owner.username, role: 'owner' },
    { user_id: admin.id, username: admin.username, role: 'admin' },
  ])
  assert.equal(full.invite_link, channel.invite_link)

  const asSubscriber = await getChannel(subscriber, channel.channel_id)
  assert.equal(asSubscriber.my_role, 'subscriber')
  assert.equal(asSubscriber.is_subscribed, true)
  assert.equal(asSubscriber.invite_link, channel.invite_link, 'public: everyone sees the link')
  const asOutsider = await getChannel(outsider, channel.channel_id)
  assert.equal(asOutsider.my_role, null)
  assert.equal(asOutsider.is_subscribed, false)
  assert.equal(asOutsider.invite_link, channel.invite_link)
  assert.deepEqual(asOutsider.admins, full.admins)

  // owner first even when the owner joined after an admin (ownership moved to a later subscriber)
  ok(await owner.api.post(`${V2}/channels/transfer`, { channel_id: channel.channel_id, user_id: subscriber.id }))
  const moved = await getChannel(outsider, channel.channel_id)
  assert.equal(moved.owner_id, subscriber.id)
  assert.equal(moved.owner_username, subscriber.username)
  assert.deepEqual(
    moved.admins.map((a: any) => [a.user_id, a.role]),
    [
      [subscriber.id, 'owner'],
      [owner.id, 'admin'],
      [admin.id, 'admin'],
    ],
  )
})

test('a private channel: invite link only for owner and admins; invisible (404) to outsiders', async () => {
  const [owner, admin, subscriber, outsider] = await users(4)
  const channel = await createChannel(owner, { is_public: false })
  await subscribe(admin, { code: channel.invite_link })
  await subscribe(subscriber, { code: channel.invite_link })
  ok(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: admin.id }))
  assert.equal((await getChannel(admin, channel.channel_id)).invite_link, channel.invite_link)
  const asSubscriber = await getChannel(subscriber, channel.channel_id)
  assert.equal(asSubscriber.invite_link, null)
  assert.equal(asSubscriber.is_public, false)
  assertError(await outsider.api.get(`${V2}/channels/${channel.channel_id}`), 404, 'not_found')
  assertError(await outsider.api.get(`${V2}/channels/info`, { query: { channel_id: channel.channel_id } }), 404, 'not_found')
  assertError(await outsider.api.get(`${V2}/chat/history`, { query: { chat_id: channel.channel_id } }), 404, 'not_found')
  assertError(await outsider.api.get(`${V2}/chat/updates`, { query: { chat_id: channel.channel_id, since: 0 } }), 404, 'not_found')
})

// ---- subscribe and unsubscribe ---------------------------------------------------------------------

test('subscribe to a public channel by id; twice is 409; unsubscribe; subscriber_count follows', async () => {
  const [owner, reader, other] = await users(3)
  const channel = await createChannel(owner)
  const joined = await subscribe(reader, { channel_id: channel.channel_id })
  assert.deepEqual(Object.keys(joined).sort(), FULL_KEYS)
  assert.equal(joined.is_subscribed, true)
  assert.equal(joined.my_role, 'subscriber')
  assert.equal(joined.subscriber_count, 2)
  assertError(await reader.api.post(`${V2}/channels/subscribe`, { channel_id: channel.channel_id }), 409, 'conflict')
  assertError(await owner.api.post(`${V2}/channels/subscribe`, { channel_id: channel.channel_id }), 409, 'conflict')
  assert.equal((await subscribe(other, { channel_id: channel.channel_id })).subscriber_count, 3)

  const left = ok(await reader.api.post(`${V2}/channels/unsubscribe`, { channel_id: channel.channel_id }))
  assert.deepEqual(left, { chat_id: channel.channel_id, left: true, dissolved: false })
  const after = await getChannel(reader, channel.channel_id)
  assert.equal(after.is_subscribed, false)
  assert.equal(after.my_role, null)
  assert.equal(after.subscriber_count, 2)
  // the channel is public, so a non-subscriber sees it: 403, not 404
  assertError(await reader.api.post(`${V2}/channels/unsubscribe`, { channel_id: channel.channel_id }), 403, 'forbidden')
  // and back again
  assert.equal((await subscribe(reader, { channel_id: channel.channel_id })).subscriber_count, 3)
})

test('a private channel: by id → 404; by code or the whole link → subscribed', async () => {
  const [owner, a, b, c] = await users(4)
  const channel = await createChannel(owner, { is_public: false })
  const code = channel.invite_link.split('/').pop()
  assertError(await a.api.post(`${V2}/channels/subscribe`, { channel_id: channel.channel_id }), 404, 'not_found')
  assert.equal((await getChannel(owner, channel.channel_id)).subscriber_count, 1, 'nobody got in')

  const byCode = await subscribe(a, { code })
  assert.equal(byCode.channel_id, channel.channel_id)
  assert.equal(byCode.is_subscribed, true)
  const byLink = await subscribe(b, { code: channel.invite_link })
  assert.equal(byLink.subscriber_count, 3)
  assertError(await a.api.post(`${V2}/channels/subscribe`, { code }), 409, 'conflict')
  // a code together with its own channel id is fine; with another channel's id it is not
  ok(await c.api.post(`${V2}/channels/subscribe`, { channel_id: channel.channel_id, code }))
  const other = await createChannel(owner)
  const mismatch = await (await users(1))[0].api.post(`${V2}/channels/subscribe`, { channel_id: other.channel_id, code })
  assertError(mismatch, 400, 'validation_error')
  assertError(await a.api.post(`${V2}/channels/subscribe`, { code: 'no-such-code' }), 404, 'not_found')
})

test("channel and group invite codes do not cross: a group's code does not subscribe, a channel's does not join a group", async () => {
  const [owner, user] = await users(2)
  const channel = await createChannel(owner, { is_public: false })
  const group = ok(await owner.api.post(`${V2}/groups/create`, { title: 'G' }))
  assertError(await user.api.post(`${V2}/channels/subscribe`, { code: group.invite_link }), 404, 'not_found')
  assertError(await user.api.post(`${V2}/groups/invite-link/join`, { code: channel.invite_link }), 404, 'not_found')
  assert.equal((await getChannel(owner, channel.channel_id)).subscriber_count, 1)
  assert.equal(ok(await owner.api.get(`${V2}/groups/info`, { query: { chat_id: group.group_id } })).member_count, 1)
  // a group is not a channel, and a channel is not a group
  assertError(await owner.api.get(`${V2}/channels/${group.group_id}`), 404, 'not_found')
  assertError(await owner.api.get(`${V2}/groups/info`, { query: { chat_id: channel.channel_id } }), 404, 'not_found')
})

test('group endpoints refuse a channel id and channel endpoints a group id (404), and nothing changes', async () => {
  const [owner, user] = await users(2)
  const channel = await createChannel(owner)
  await subscribe(user, { channel_id: channel.channel_id })
  const group = ok(await owner.api.post(`${V2}/groups/create`, { title: 'Open group', is_public: true }))
  const cid = channel.channel_id
  const gid = group.group_id
  for (const res of [
    await owner.api.post(`${V2}/groups/add-member`, { chat_id: cid, user_id: (await users(1))[0].id }),
    await owner.api.post(`${V2}/groups/promote`, { chat_id: cid, user_id: user.id }),
    await owner.api.post(`${V2}/groups/remove-member`, { chat_id: cid, user_id: user.id }),
    await owner.api.post(`${V2}/groups/set-title`, { chat_id: cid, title: 'hijacked' }),
    await owner.api.post(`${V2}/groups/set-forum`, { chat_id: cid, is_forum: true }),
    await owner.api.post(`${V2}/groups/topics/create`, { chat_id: cid, title: 'topic' }),
    await owner.api.get(`${V2}/groups/invite-links`, { query: { chat_id: cid } }),
    await owner.api.get(`${V2}/groups/members`, { query: { chat_id: cid } }),
    await user.api.post(`${V2}/groups/leave`, { chat_id: cid }),
    // a public group cannot be subscribed to like a channel
    await user.api.post(`${V2}/channels/subscribe`, { channel_id: gid }),
    await owner.api.post(`${V2}/channels/set-title`, { channel_id: gid, title: 'hijacked' }),
    await owner.api.get(`${V2}/channels/subscribers`, { query: { channel_id: gid } }),
    await owner.api.post(`${V2}/channels/unsubscribe`, { channel_id: gid }),
  ])
    assertError(res, 404, 'not_found')
  const after = await getChannel(owner, cid)
  assert.equal(after.name, 'News')
  assert.equal(after.subscriber_count, 2)
  assert.equal((await getChannel(user, cid)).my_role, 'subscriber')
  const groupAfter = ok(await owner.api.get(`${V2}/groups/info`, { query: { chat_id: gid } }))
  assert.equal(groupAfter.name, 'Open group')
  assert.equal(groupAfter.member_count, 1, 'the channel subscribe did not join the group')
})

// ---- subscribers -------------------------------------------------------------------------------

test('subscribers: pages in join order with roles; total is the subscriber count', async () => {
  const [owner, ...rest] = await users(6)
  const channel = await createChannel(owner)
  for (const u of rest) await subscribe(u, { channel_id: channel.channel_id })
  ok(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: rest[2].id }))

  const page1 = await subscribers(rest[4], channel.channel_id, { per_page: 4 })
  assert.equal(page1.total, 6)
  assert.equal(page1.page, 1)
  assert.equal(page1.per_page, 4)
  assert.equal(page1.pages, 2)
  assert.deepEqual(
    page1.items.map((s: any) => [s.user_id, s.role]),
    [
      [owner.id, 'owner'],
      [rest[0].id, 'subscriber'],
      [rest[1].id, 'subscriber'],
      [rest[2].id, 'admin'],
    ],
  )
  assert.deepEqual(Object.keys(page1.items[0]).sort(), [...PEER_KEYS, 'joined_at', 'role'].sort())
  assert.match(page1.items[1].joined_at, ISO)
  const page2 = await subscribers(rest[4], channel.channel_id, { per_page: 4, page: 2 })
  assert.deepEqual(
    page2.items.map((s: any) => s.user_id),
    [rest[3].id, rest[4].id],
  )
  const page3 = await subscribers(rest[4], channel.channel_id, { per_page: 4, page: 3 })
  assert.deepEqual(page3.items, [])

  ok(await rest[1].api.post(`${V2}/channels/unsubscribe`, { channel_id: channel.channel_id }))
  ok(await owner.api.post(`${V2}/channels/remove-subscriber`, { channel_id: channel.channel_id, user_id: rest[3].id }))
  const again = await subscribers(owner, channel.channel_id, { per_page: 4 })
  assert.equal(again.total, 4)
  assert.deepEqual(
    again.items.map((s: any) => s.user_id),
    [owner.id, rest[0].id, rest[2].id, rest[4].id],
  )
  assert.equal((await getChannel(owner, channel.channel_id)).subscriber_count, 4)
})

test('subscribers of a private channel: owner and admins only', async () => {
  const [owner, admin, subscriber] = await users(3)
  const channel = await createChannel(owner, { is_public: false })
  await subscribe(admin, { code: channel.invite_link })
  await subscribe(subscriber, { code: channel.invite_link })
  ok(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: admin.id }))
  assert.equal((await subscribers(owner, channel.channel_id)).total, 3)
  assert.equal((await subscribers(admin, channel.channel_id)).total, 3)
  assertError(await subscriber.api.get(`${V2}/channels/subscribers`, { query: { channel_id: channel.channel_id } }), 403, 'forbidden')
})

// ---- posts, reactions, history -----------------------------------------------------------------

test('posts by the owner and an admin reach subscribers over the WebSocket as chat frames; a subscriber cannot post', async () => {
  const [owner, admin, s1, s2] = await users(4)
  const channel = await createChannel(owner)
  for (const u of [admin, s1, s2]) await subscribe(u, { channel_id: channel.channel_id })
  ok(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: admin.id }))
  const [ownerWs, s1Ws, s2Ws] = [await connect(owner), await connect(s1), await connect(s2)]

  const post = await publish(owner, channel.channel_id, 'first post')
  for (const ws of [s1Ws, s2Ws, ownerWs]) {
    const frame: any = await ws.next('message.new')
    assert.equal(frame.chat_id, channel.channel_id)
    assert.equal(typeof frame.chat_seq, 'number')
    assert.equal('seq' in frame, false, 'channel posts are not in the per-user log')
    assert.equal(frame.data.message.message_id, post.message_id)
    assert.equal(frame.data.message.content, 'first post')
    assert.equal(frame.data.message.chat_id, channel.channel_id)
    assert.equal(frame.data.message.sender_username, owner.username)
  }
  const byAdmin = await publish(admin, channel.channel_id, 'admin post')
  const frame: any = await s1Ws.next('message.new')
  assert.equal(frame.data.message.message_id, byAdmin.message_id)
  assert.equal(frame.data.message.sender_id, admin.id)
  assert.equal((await s2Ws.next('message.new')).data.message.content, 'admin post')

  const refused = await s1.api.post(`${V2}/messages/send`, { chat_id: channel.channel_id, content: 'let me speak' })
  assertError(refused, 403, 'forbidden')
  assert.deepEqual(await s2Ws.drain('message.new', 250), [], 'nothing reached anyone')
  assert.deepEqual(
    (await history(s2, channel.channel_id)).map((m) => m.content),
    ['admin post', 'first post'],
  )
  await ownerWs.drain('message.new', 0)
})

test('a subscriber cannot get a post in sideways: forwards and scheduled sends are refused too', async () => {
  const [owner, s1, friend] = await users(3)
  const channel = await createChannel(owner)
  await subscribe(s1, { channel_id: channel.channel_id })
  const personal = ok(await s1.api.post(`${V2}/messages/send`, { receiver_id: friend.id, content: 'forward me' }))
  assertError(
    await s1.api.post(`${V2}/messages/forward`, { message_id: personal.message_id, target_chat_id: channel.channel_id }),
    403,
    'forbidden',
  )
  const later = new Date(Date.now() + 3600_000).toISOString()
  assertError(
    await s1.api.post(`${V2}/messages/send`, { chat_id: channel.channel_id, content: 'later', scheduled_at: later }),
    403,
    'forbidden',
  )
  assert.deepEqual(await history(owner, channel.channel_id), [])
})

test("an admin's scheduled post is dropped when they are no longer an admin at delivery", async () => {
  const [owner, admin] = await users(2)
  const channel = await createChannel(owner)
  await subscribe(admin, { channel_id: channel.channel_id })
  ok(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: admin.id }))
  const later = new Date(Date.now() + 3600_000).toISOString()
  const pending = ok(
    await admin.api.post(`${V2}/messages/send`, { chat_id: channel.channel_id, content: 'scheduled', scheduled_at: later }),
  )
  ok(await owner.api.post(`${V2}/channels/remove-admin`, { channel_id: channel.channel_id, user_id: admin.id }))
  const now = await admin.api.post(`${V2}/messages/${pending.scheduled_id}/scheduled`, { scheduled_at: null })
  assert.notEqual(now.status, 200, 'not delivered')
  assert.deepEqual(await history(owner, channel.channel_id), [])
})

test('posts are in history with the V2 message shape and the reactions map; subscribers react and others hear it', async () => {
  const [owner, s1, s2] = await users(3)
  const channel = await createChannel(owner)
  for (const u of [s1, s2]) await subscribe(u, { channel_id: channel.channel_id })
  const post = await publish(owner, channel.channel_id, 'react to this')
  assert.deepEqual(Object.keys(post).sort(), MESSAGE_KEYS)
  assert.equal(post.receiver_id, null)

  const [s2Ws, ownerWs] = [await connect(s2), await connect(owner)]
  const reacted = ok(await s1.api.post(`${V2}/messages/${post.message_id}/reaction`, { emoji: '🔥' }))
  assert.deepEqual(reacted, { '🔥': 1 })
  for (const ws of [s2Ws, ownerWs]) {
    const frame: any = await ws.next('reaction.updated')
    assert.equal(frame.chat_id, channel.channel_id)
    assert.equal(typeof frame.chat_seq, 'number')
    assert.deepEqual(frame.data, { chat_id: channel.channel_id, message_id: post.message_id, reactions: { '🔥': 1 } })
  }
  ok(await s2.api.post(`${V2}/messages/${post.message_id}/reaction`, { emoji: '🔥' }))
  assert.deepEqual((await ownerWs.next('reaction.updated')).data.reactions, { '🔥': 2 })

  const [item] = await history(s1, channel.channel_id)
  assert.deepEqual(Object.keys(item).sort(), MESSAGE_KEYS)
  assert.equal(item.message_id, post.message_id)
  assert.equal(item.sender_id, owner.id)
  assert.equal(item.sender_username, owner.username)
  assert.equal(item.receiver_id, null)
  assert.equal(item.chat_id, channel.channel_id)
  assert.deepEqual(item.reactions, { '🔥': 2 })
  // an outsider reads a public channel's history too
  const [outsider] = await users(1)
  assert.deepEqual(
    (await history(outsider, channel.channel_id)).map((m) => m.message_id),
    [post.message_id],
  )

  ok(await s1.api.post(`${V2}/messages/${post.message_id}/reaction`, { emoji: null }))
  assert.deepEqual((await history(owner, channel.channel_id))[0].reactions, { '🔥': 1 })
})

test('subscribing with a socket open starts the channel stream at once; unsubscribing or removal stops it', async () => {
  const [owner, reader, removed] = await users(3)
  const channel = await createChannel(owner)
  const readerWs = await connect(reader)
  const removedWs = await connect(removed)
  await subscribe(reader, { channel_id: channel.channel_id })
  await subscribe(removed, { channel_id: channel.channel_id })
  const joined = await readerWs.next('member.joined')
  assert.equal(joined.data.chat_id, channel.channel_id)
  assert.equal(joined.data.user_id, reader.id)
  assert.equal(typeof joined.seq, 'number', "the subscriber's own log says they joined")

  await publish(owner, channel.channel_id, 'hello subscribers')
  assert.equal((await readerWs.next('message.new')).data.message.content, 'hello subscribers')
  assert.equal((await removedWs.next('message.new')).data.message.content, 'hello subscribers')

  ok(await reader.api.post(`${V2}/channels/unsubscribe`, { channel_id: channel.channel_id }))
  ok(await owner.api.post(`${V2}/channels/remove-subscriber`, { channel_id: channel.channel_id, user_id: removed.id }))
  const readerLeft = await removedWs.next('member.left')
  assert.deepEqual([readerLeft.data.user_id, readerLeft.seq], [reader.id, undefined], "the reader's leaving, in the channel's log")
  const ownLeft = await removedWs.next('member.left')
  assert.equal(ownLeft.data.user_id, removed.id)
  assert.equal(typeof ownLeft.seq, 'number', "the removed subscriber's own log says they left")
  await publish(owner, channel.channel_id, 'after they left')
  assert.deepEqual(await readerWs.drain('message.new', 300), [])
  assert.deepEqual(await removedWs.drain('message.new', 0), [])
  assert.equal((await getChannel(owner, channel.channel_id)).subscriber_count, 1)
})

// ---- chat list ---------------------------------------------------------------------------------

test('chat list: the channel item with unread_count; older posts are not unread; reads and deletes lower it', async () => {
  const [owner, reader] = await users(2)
  const channel = await createChannel(owner, { title: 'Daily' })
  await publish(owner, channel.channel_id, 'before you came')
  await subscribe(reader, { channel_id: channel.channel_id })
  let item = await listItem(reader, channel.channel_id)
  assert.equal(item.unread_count, 0, 'posts before subscribing are not unread')
  assert.deepEqual(Object.keys(item).sort(), ['channel', 'chat_id', 'chat_seq', 'chat_type', 'last_message', 'my_role', 'unread_count'])
  assert.equal(item.chat_type, 'channel')
  assert.deepEqual(item.channel, { channel_id: channel.channel_id, name: 'Daily', avatar_url: null, is_verified: false })
  assert.equal(item.my_role, 'subscriber')

  await publish(owner, channel.channel_id, 'one')
  const two = await publish(owner, channel.channel_id, 'two')
  const three = await publish(owner, channel.channel_id, 'three')
  item = await listItem(reader, channel.channel_id)
  assert.equal(item.unread_count, 3)
  assert.equal(item.last_message.message_id, three.message_id)
  assert.equal(item.last_message.content, 'three')
  assert.equal(item.last_message.sender_username, owner.username)
  assert.equal(item.last_message.is_read, false)
  assert.equal((await listItem(owner, channel.channel_id)).unread_count, 0, 'own posts are not unread')

  ok(await owner.api.delete(`${V2}/messages/${three.message_id}`, { query: { for_all: 'true' } }))
  item = await listItem(reader, channel.channel_id)
  assert.equal(item.unread_count, 2, 'a post deleted for everyone is not unread')
  assert.equal(item.last_message.message_id, two.message_id)

  const read = ok(await reader.api.post(`${V2}/messages/${two.message_id}/read`, {}))
  assert.equal(read.unread_count, 0)
  item = await listItem(reader, channel.channel_id)
  assert.equal(item.unread_count, 0)
  assert.equal(item.last_message.is_read, true)

  ok(await platformAdmin.api.post(`${V2}/channels/verify`, { channel_id: channel.channel_id }))
  assert.equal((await listItem(reader, channel.channel_id)).channel.is_verified, true)
  ok(await reader.api.post(`${V2}/channels/unsubscribe`, { channel_id: channel.channel_id }))
  assert.equal(await listItem(reader, channel.channel_id), undefined, 'gone from the list after unsubscribing')
})

// ---- verify ------------------------------------------------------------------------------------

test('verify: a platform admin marks the channel verified, with a ModLog row; others get 403 and nothing is logged', async () => {
  const [owner, subscriber] = await users(2)
  const channel = await createChannel(owner)
  await subscribe(subscriber, { channel_id: channel.channel_id })
  const modlog = async () =>
    (ok(await platformAdmin.api.get('/api/admin/modlog', { query: { per_page: 100 } })).items as any[]).filter(
      (r) => r.target_id === channel.channel_id,
    )

  assertError(await owner.api.post(`${V2}/channels/verify`, { channel_id: channel.channel_id }), 403, 'forbidden')
  assert.deepEqual(await modlog(), [])
  assert.equal((await getChannel(owner, channel.channel_id)).is_verified, false)

  const ws = await connect(subscriber)
  const verified = ok(await platformAdmin.api.post(`${V2}/channels/verify`, { channel_id: channel.channel_id }))
  assert.deepEqual(Object.keys(verified).sort(), FULL_KEYS)
  assert.equal(verified.is_verified, true)
  assert.equal((await getChannel(subscriber, channel.channel_id)).is_verified, true)
  const rows = await modlog()
  assert.equal(rows.length, 1)
  assert.equal(rows[0].admin_id, platformAdmin.id)
  assert.match(rows[0].action, /verif/)
  assert.match(rows[0].created_at, ISO)
  const updated: any = await ws.next('chat.updated')
  assert.equal(updated.chat_id, channel.channel_id)
  assert.equal(updated.data.chat_id, channel.channel_id)
  assert.equal(updated.data.is_verified, true)

  assertError(await platformAdmin.api.post(`${V2}/channels/verify`, { channel_id: 999999999 }), 404, 'not_found')
  const group = ok(await owner.api.post(`${V2}/groups/create`, { title: 'not a channel' }))
  assertError(await platformAdmin.api.post(`${V2}/channels/verify`, { channel_id: group.group_id }), 404, 'not_found')
})

// ---- channel admins ------------------------------------------------------------------------------

test('add-admin / remove-admin: an added admin posts and is listed; a removed one gets 403', async () => {
  const [owner, editor, outsider] = await users(3)
  const channel = await createChannel(owner)
  await subscribe(editor, { channel_id: channel.channel_id })
  assertError(await editor.api.post(`${V2}/messages/send`, { chat_id: channel.channel_id, content: 'too early' }), 403, 'forbidden')

  const added = ok(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: editor.id }))
  assert.deepEqual(added, { chat_id: channel.channel_id, user_id: editor.id, role: 'admin' })
  assert.deepEqual(
    (await getChannel(owner, channel.channel_id)).admins.map((a: any) => a.user_id),
    [owner.id, editor.id],
  )
  assert.equal((await getChannel(editor, channel.channel_id)).my_role, 'admin')
  const post = await publish(editor, channel.channel_id, 'editor post')
  assert.equal(post.sender_id, editor.id)
  assertError(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: editor.id }), 409, 'conflict')
  assertError(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: outsider.id }), 404, 'not_found')

  const removed = ok(await owner.api.post(`${V2}/channels/remove-admin`, { channel_id: channel.channel_id, user_id: editor.id }))
  assert.deepEqual(removed, { chat_id: channel.channel_id, user_id: editor.id, role: 'subscriber' })
  assertError(await editor.api.post(`${V2}/messages/send`, { chat_id: channel.channel_id, content: 'still here?' }), 403, 'forbidden')
  assert.deepEqual(
    (await getChannel(owner, channel.channel_id)).admins.map((a: any) => a.user_id),
    [owner.id],
  )
  assert.equal((await getChannel(editor, channel.channel_id)).my_role, 'subscriber')
  assertError(await owner.api.post(`${V2}/channels/remove-admin`, { channel_id: channel.channel_id, user_id: editor.id }), 409, 'conflict')
  assert.deepEqual(
    (await history(owner, channel.channel_id)).map((m) => m.content),
    ['editor post'],
  )
})

test('channel edits and role changes reach subscribers as chat.updated; the Channel shape follows', async () => {
  const [owner, editor, reader] = await users(3)
  const channel = await createChannel(owner)
  for (const u of [editor, reader]) await subscribe(u, { channel_id: channel.channel_id })
  const ws = await connect(reader)
  const titled = ok(await owner.api.post(`${V2}/channels/set-title`, { channel_id: channel.channel_id, title: 'Evening news' }))
  assert.deepEqual(Object.keys(titled).sort(), FULL_KEYS)
  assert.equal(titled.name, 'Evening news')
  let frame: any = await ws.next('chat.updated')
  assert.equal(frame.chat_id, channel.channel_id)
  assert.deepEqual(frame.data, { chat_id: channel.channel_id, title: 'Evening news' })
  ok(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: editor.id }))
  frame = await ws.next('chat.updated')
  assert.deepEqual(frame.data, { chat_id: channel.channel_id, user_id: editor.id, role: 'admin' })
  const described = ok(
    await editor.api.post(`${V2}/channels/set-description`, { channel_id: channel.channel_id, description: 'by the editor' }),
  )
  assert.equal(described.description, 'by the editor')
  assert.deepEqual((await ws.next('chat.updated')).data, { chat_id: channel.channel_id, description: 'by the editor' })
  const cleared = ok(await editor.api.post(`${V2}/channels/set-avatar`, { channel_id: channel.channel_id, avatar: null }))
  assert.equal(cleared.avatar_url, null)
  const info = await getChannel(reader, channel.channel_id)
  assert.equal(info.name, 'Evening news')
  assert.equal(info.description, 'by the editor')
  assert.equal((await listItem(reader, channel.channel_id)).channel.name, 'Evening news')
})

test("revoking needs the link's own channel: another channel's id does not reach it", async () => {
  const [owner, stranger, joiner] = await users(3)
  const mine = await createChannel(owner)
  const theirs = await createChannel(stranger, { is_public: false })
  assertError(
    await owner.api.post(`${V2}/channels/invite-link/revoke`, { channel_id: mine.channel_id, code: theirs.invite_link }),
    404,
    'not_found',
  )
  const joined = await subscribe(joiner, { code: theirs.invite_link })
  assert.equal(joined.channel_id, theirs.channel_id, 'the link still works')
})

test('transfer: the owner role moves, the old owner stays as an admin and can still post', async () => {
  const [owner, heir] = await users(2)
  const channel = await createChannel(owner)
  await subscribe(heir, { channel_id: channel.channel_id })
  const after = ok(await owner.api.post(`${V2}/channels/transfer`, { channel_id: channel.channel_id, user_id: heir.id }))
  assert.deepEqual(Object.keys(after).sort(), FULL_KEYS)
  assert.equal(after.owner_id, heir.id)
  assert.equal(after.owner_username, heir.username)
  assert.equal(after.my_role, 'admin')
  await publish(owner, channel.channel_id, 'still an admin')
  await publish(heir, channel.channel_id, 'the new owner')
  // permission comes first: the old owner (an admin now) may not transfer, whoever they name
  assertError(await owner.api.post(`${V2}/channels/transfer`, { channel_id: channel.channel_id, user_id: owner.id }), 403, 'forbidden')
  assertError(await heir.api.post(`${V2}/channels/transfer`, { channel_id: channel.channel_id, user_id: heir.id }), 400, 'validation_error')
  const [stranger] = await users(1)
  assertError(await heir.api.post(`${V2}/channels/transfer`, { channel_id: channel.channel_id, user_id: stranger.id }), 404, 'not_found')
})

// ---- discussion groups -------------------------------------------------------------------------

test('bind-group / unbind-group: discussion_group_id in the Channel shape; binding again replaces; unbinding nothing is 409', async () => {
  const [owner, subscriber] = await users(2)
  const channel = await createChannel(owner)
  await subscribe(subscriber, { channel_id: channel.channel_id })
  const g1 = ok(await owner.api.post(`${V2}/groups/create`, { title: 'Talk 1' }))
  const g2 = ok(await owner.api.post(`${V2}/groups/create`, { title: 'Talk 2', is_public: true }))

  assertError(await owner.api.post(`${V2}/channels/unbind-group`, { channel_id: channel.channel_id }), 409, 'conflict')
  const bound = ok(await owner.api.post(`${V2}/channels/bind-group`, { channel_id: channel.channel_id, group_id: g1.group_id }))
  assert.deepEqual(Object.keys(bound).sort(), FULL_KEYS)
  assert.equal(bound.discussion_group_id, g1.group_id)
  assert.equal((await getChannel(subscriber, channel.channel_id)).discussion_group_id, g1.group_id)

  const rebound = ok(await owner.api.post(`${V2}/channels/bind-group`, { channel_id: channel.channel_id, group_id: g2.group_id }))
  assert.equal(rebound.discussion_group_id, g2.group_id)
  // a channel is not a group: refused, and the binding stays
  const other = await createChannel(owner)
  assertError(
    await owner.api.post(`${V2}/channels/bind-group`, { channel_id: channel.channel_id, group_id: other.channel_id }),
    404,
    'not_found',
  )
  assertError(await owner.api.post(`${V2}/channels/bind-group`, { channel_id: channel.channel_id, group_id: 999999999 }), 404, 'not_found')
  assert.equal((await getChannel(owner, channel.channel_id)).discussion_group_id, g2.group_id)

  const unbound = ok(await owner.api.post(`${V2}/channels/unbind-group`, { channel_id: channel.channel_id }))
  assert.equal(unbound.discussion_group_id, null)
  assert.equal((await getChannel(subscriber, channel.channel_id)).discussion_group_id, null)
})

test('a dissolved discussion group is no longer bound', async () => {
  const [owner] = await users(1)
  const channel = await createChannel(owner)
  const group = ok(await owner.api.post(`${V2}/groups/create`, { title: 'Short-lived' }))
  ok(await owner.api.post(`${V2}/channels/bind-group`, { channel_id: channel.channel_id, group_id: group.group_id }))
  const left = ok(await owner.api.post(`${V2}/groups/leave`, { chat_id: group.group_id }))
  assert.equal(left.dissolved, true)
  assert.equal((await getChannel(owner, channel.channel_id)).discussion_group_id, null)
})

// ---- invite links ------------------------------------------------------------------------------

test('channel invite links: {base}/channel/<code>, usage limit, a 409 does not take a use, revocation replaces the permanent link', async () => {
  const [owner, a, b, c, d] = await users(5)
  const channel = await createChannel(owner, { is_public: false })
  const link = ok(await owner.api.post(`${V2}/channels/invite-link/create`, { channel_id: channel.channel_id, usage_limit: 1 }))
  assert.deepEqual(Object.keys(link).sort(), [
    'code',
    'created_at',
    'expires_at',
    'invite_link',
    'is_primary',
    'is_revoked',
    'usage_limit',
    'uses',
  ])
  assert.match(link.invite_link, CHANNEL_LINK)
  assert.ok(link.invite_link.endsWith(`/channel/${link.code}`))
  assert.equal(link.usage_limit, 1)
  assert.equal(link.uses, 0)
  assert.equal(link.is_primary, false)
  assert.equal(link.is_revoked, false)
  assert.equal(link.expires_at, null)

  await subscribe(a, { code: channel.invite_link })
  assertError(await a.api.post(`${V2}/channels/subscribe`, { code: link.code }), 409, 'conflict')
  const joined = await subscribe(b, { code: link.invite_link })
  assert.equal(joined.channel_id, channel.channel_id, 'the conflict did not use up the one use')
  const exhausted = await c.api.post(`${V2}/channels/subscribe`, { code: link.code })
  assertError(exhausted, 403, 'forbidden')
  assert.match(exhausted.body.error.message, /limit/)

  const revoked = ok(
    await owner.api.post(`${V2}/channels/invite-link/revoke`, { channel_id: channel.channel_id, code: channel.invite_link }),
  )
  assert.equal(revoked.is_revoked, true)
  assertError(await c.api.post(`${V2}/channels/subscribe`, { code: channel.invite_link }), 403, 'forbidden')
  const now = await getChannel(owner, channel.channel_id)
  assert.notEqual(now.invite_link, channel.invite_link)
  assert.match(now.invite_link, CHANNEL_LINK)
  await subscribe(c, { code: now.invite_link })
  assert.equal((await getChannel(owner, channel.channel_id)).subscriber_count, 4)

  assertError(
    await owner.api.post(`${V2}/channels/invite-link/create`, { channel_id: channel.channel_id, expires_at: '2020-01-01T00:00:00Z' }),
    400,
    'validation_error',
  )
  assertError(
    await owner.api.post(`${V2}/channels/invite-link/revoke`, { channel_id: channel.channel_id, code: 'no-such-code' }),
    404,
    'not_found',
  )
  assertError(await d.api.post(`${V2}/channels/subscribe`, { code: link.code }), 403, 'forbidden')
})

// ---- leaving -------------------------------------------------------------------------------------

test('the owner leaving: an admin inherits; without an admin it is 409; alone it dissolves the channel', async () => {
  const [owner, s1, admin, lone] = await users(4)
  const channel = await createChannel(owner)
  await subscribe(s1, { channel_id: channel.channel_id })
  await subscribe(admin, { channel_id: channel.channel_id })

  const refused = await owner.api.post(`${V2}/channels/unsubscribe`, { channel_id: channel.channel_id })
  assertError(refused, 409, 'conflict')
  let info = await getChannel(owner, channel.channel_id)
  assert.equal(info.owner_id, owner.id, 'still the owner')
  assert.equal(info.subscriber_count, 3)

  ok(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: admin.id }))
  const left = ok(await owner.api.post(`${V2}/channels/unsubscribe`, { channel_id: channel.channel_id }))
  assert.deepEqual(left, { chat_id: channel.channel_id, left: true, dissolved: false })
  info = await getChannel(s1, channel.channel_id)
  assert.equal(info.owner_id, admin.id, 'the admin inherits, though a subscriber joined earlier')
  assert.equal(info.owner_username, admin.username)
  assert.equal(info.subscriber_count, 2)
  assert.deepEqual(info.admins, [{ user_id: admin.id, username: admin.username, role: 'owner' }])
  await publish(admin, channel.channel_id, 'new management')

  const solo = await createChannel(lone)
  const gone = ok(await lone.api.post(`${V2}/channels/unsubscribe`, { channel_id: solo.channel_id }))
  assert.deepEqual(gone, { chat_id: solo.channel_id, left: true, dissolved: true })
  assertError(await lone.api.get(`${V2}/channels/${solo.channel_id}`), 404, 'not_found')
})

// ---- catch-up ------------------------------------------------------------------------------------

test('catch-up after a reconnect: resume with the channel cursor, and GET chat/updates', async () => {
  const [owner, reader] = await users(2)
  const channel = await createChannel(owner)
  await subscribe(reader, { channel_id: channel.channel_id })
  const first = await connect(reader)
  await publish(owner, channel.channel_id, 'p1')
  const p1: any = await first.next('message.new')
  await first.close()

  for (const content of ['p2', 'p3', 'p4']) await publish(owner, channel.channel_id, content)
  const second = await connect(reader)
  second.send({ type: 'resume', chats: { [channel.channel_id]: p1.chat_seq } })
  const replayed: any[] = [await second.next('message.new'), await second.next('message.new'), await second.next('message.new')]
  assert.deepEqual(
    replayed.map((f) => f.data.message.content),
    ['p2', 'p3', 'p4'],
  )
  assert.deepEqual(
    replayed.map((f) => f.chat_seq),
    [p1.chat_seq + 1, p1.chat_seq + 2, p1.chat_seq + 3],
  )
  assert.ok(replayed.every((f) => f.chat_id === channel.channel_id && !('seq' in f)))
  await publish(owner, channel.channel_id, 'p5')
  assert.equal((await second.next('message.new')).data.message.content, 'p5')
  assert.deepEqual(await second.drain('message.new', 200), [], 'nothing twice')

  const http = ok(await reader.api.get(`${V2}/chat/updates`, { query: { chat_id: channel.channel_id, since: p1.chat_seq } }))
  assert.deepEqual(
    http.updates.map((u: any) => u.data.message.content),
    ['p2', 'p3', 'p4', 'p5'],
  )
  assert.deepEqual(
    http.updates.map((u: any) => u.chat_seq),
    [1, 2, 3, 4].map((n) => p1.chat_seq + n),
  )
  assert.ok(http.updates.every((u: any) => u.type === 'message.new' && u.chat_id === channel.channel_id))
  assert.equal(http.chat_seq, p1.chat_seq + 4)
  assert.equal(http.reset, false)
  const limited = ok(await reader.api.get(`${V2}/chat/updates`, { query: { chat_id: channel.channel_id, since: p1.chat_seq, limit: 2 } }))
  assert.deepEqual(
    limited.updates.map((u: any) => u.data.message.content),
    ['p2', 'p3'],
  )
  assert.equal((await getChannel(reader, channel.channel_id)).chat_seq, http.chat_seq)

  // the ready frame names the channel at its current position
  const ready = await readyFrame(reader)
  assert.equal(ready.data.user_id, reader.id)
  assert.equal(ready.data.chats[channel.channel_id], http.chat_seq)
})

test('a subscription made while offline: the own log carries the join with its chat_seq, from which chat/updates has the posts', async () => {
  const [owner, reader] = await users(2)
  const channel = await createChannel(owner)
  await subscribe(reader, { channel_id: channel.channel_id })
  for (const content of ['q1', 'q2']) await publish(owner, channel.channel_id, content)
  const own = ok(await reader.api.get(`${V2}/updates`, { query: { since: 0, limit: 100 } }))
  const joined = own.updates.find((u: any) => u.type === 'member.joined' && u.data.chat_id === channel.channel_id)
  assert.ok(joined, 'member.joined is in the own log')
  assert.equal(joined.data.user_id, reader.id)
  assert.equal(typeof joined.data.chat_seq, 'number')
  const missed = ok(await reader.api.get(`${V2}/chat/updates`, { query: { chat_id: channel.channel_id, since: joined.data.chat_seq } }))
  assert.deepEqual(
    missed.updates.map((u: any) => u.data.message.content),
    ['q1', 'q2'],
  )
})

test('removed while offline: the next ready frame no longer names the channel, and the own log says why', async () => {
  const [owner, reader] = await users(2)
  const channel = await createChannel(owner)
  await subscribe(reader, { channel_id: channel.channel_id })
  assert.equal(typeof (await readyFrame(reader)).data.chats[channel.channel_id], 'number')
  ok(await owner.api.post(`${V2}/channels/remove-subscriber`, { channel_id: channel.channel_id, user_id: reader.id }))
  const ready = await readyFrame(reader)
  assert.equal(ready.data.chats[channel.channel_id], undefined)
  const own = ok(await reader.api.get(`${V2}/updates`, { query: { since: 0, limit: 100 } }))
  const left = own.updates.find((u: any) => u.type === 'member.left' && u.data.chat_id === channel.channel_id)
  assert.equal(left?.data.user_id, reader.id)
  assert.equal(await listItem(reader, channel.channel_id), undefined)
})

// ---- bad input -----------------------------------------------------------------------------------

test('bad input: validation errors in the envelope; unknown properties are dropped; unknown channels are 404', async () => {
  const [owner, other] = await users(2)
  for (const body of [
    {},
    { title: '' },
    { title: '   ' },
    { title: 'x'.repeat(129) },
    { title: 5 },
    { title: 'ok', is_public: 'yes' },
    { title: 'ok', description: 5 },
    { title: 'ok', description: 'x'.repeat(256) },
    { title: 'ok', avatar: 7 },
  ]) {
    assertError(await owner.api.post(`${V2}/channels/create`, body), 400, 'validation_error')
  }
  assertError(await owner.api.post(`${V2}/channels/create`, { title: 'ok', avatar: 'never/uploaded.png' }), 400, 'invalid_file')
  const stripped = ok(await owner.api.post(`${V2}/channels/create`, { title: 'ok', bogus: 1, owner_id: other.id }))
  assert.equal('bogus' in stripped, false, 'unknown properties are removed, never stored')
  assert.equal(stripped.owner_id, owner.id)

  const channel = await createChannel(owner)
  const id = channel.channel_id
  const bad: [Promise<Response>, number, string][] = [
    [owner.api.get(`${V2}/channels/abc`), 400, 'validation_error'],
    [owner.api.get(`${V2}/channels/info`), 400, 'validation_error'],
    [owner.api.get(`${V2}/channels/subscribers`, { query: { channel_id: id, per_page: 101 } }), 400, 'validation_error'],
    [owner.api.get(`${V2}/channels/subscribers`, { query: { channel_id: id, page: 0 } }), 400, 'validation_error'],
    [other.api.post(`${V2}/channels/subscribe`, {}), 400, 'validation_error'],
    [other.api.post(`${V2}/channels/subscribe`, { channel_id: String(id) }), 400, 'validation_error'],
    [other.api.post(`${V2}/channels/subscribe`, { code: '' }), 400, 'validation_error'],
    [owner.api.post(`${V2}/channels/set-title`, { channel_id: id, title: '' }), 400, 'validation_error'],
    [owner.api.post(`${V2}/channels/set-title`, { channel_id: id }), 400, 'validation_error'],
    [owner.api.post(`${V2}/channels/set-description`, { channel_id: id, description: null }), 400, 'validation_error'],
    [owner.api.post(`${V2}/channels/add-admin`, { channel_id: id, user_id: String(other.id) }), 400, 'validation_error'],
    [owner.api.post(`${V2}/channels/add-admin`, { channel_id: id }), 400, 'validation_error'],
    [owner.api.post(`${V2}/channels/invite-link/create`, { channel_id: id, usage_limit: 0 }), 400, 'validation_error'],
    [owner.api.post(`${V2}/channels/invite-link/create`, { channel_id: id, expires_at: 'tomorrow' }), 400, 'validation_error'],
    [owner.api.post(`${V2}/channels/bind-group`, { channel_id: id }), 400, 'validation_error'],
    [owner.api.post(`${V2}/channels/verify`, {}), 400, 'validation_error'],
  ]
  for (const [pending, status, code] of bad) assertError(await pending, status, code)

  const missing = 999999999
  const unknown: Promise<Response>[] = [
    owner.api.get(`${V2}/channels/${missing}`),
    owner.api.get(`${V2}/channels/info`, { query: { channel_id: missing } }),
    owner.api.get(`${V2}/channels/subscribers`, { query: { channel_id: missing } }),
    other.api.post(`${V2}/channels/subscribe`, { channel_id: missing }),
    owner.api.post(`${V2}/channels/unsubscribe`, { channel_id: missing }),
    owner.api.post(`${V2}/channels/set-title`, { channel_id: missing, title: 'x' }),
    owner.api.post(`${V2}/channels/set-description`, { channel_id: missing, description: 'x' }),
    owner.api.post(`${V2}/channels/set-avatar`, { channel_id: missing, avatar: null }),
    owner.api.post(`${V2}/channels/add-admin`, { channel_id: missing, user_id: other.id }),
    owner.api.post(`${V2}/channels/remove-admin`, { channel_id: missing, user_id: other.id }),
    owner.api.post(`${V2}/channels/remove-subscriber`, { channel_id: missing, user_id: other.id }),
    owner.api.post(`${V2}/channels/transfer`, { channel_id: missing, user_id: other.id }),
    owner.api.post(`${V2}/channels/invite-link/create`, { channel_id: missing }),
    owner.api.post(`${V2}/channels/invite-link/revoke`, { channel_id: missing, code: 'x' }),
    owner.api.post(`${V2}/channels/unbind-group`, { channel_id: missing }),
    owner.api.post(`${V2}/messages/send`, { chat_id: missing, content: 'x' }),
    owner.api.get(`${V2}/chat/updates`, { query: { chat_id: missing, since: 0 } }),
  ]
  for (const pending of unknown) assertError(await pending, 404, 'not_found')
  // unknown users in a real channel
  assertError(await owner.api.post(`${V2}/channels/remove-subscriber`, { channel_id: id, user_id: missing }), 404, 'not_found')
  assertError(await owner.api.post(`${V2}/channels/remove-subscriber`, { channel_id: id, user_id: other.id }), 404, 'not_found')
  assert.equal((await getChannel(owner, id)).subscriber_count, 1)
})

test('without a session every channel route is 401', async () => {
  const [owner] = await users(1)
  const channel = await createChannel(owner)
  for (const res of [
    await server.api.get(`${V2}/channels/${channel.channel_id}`),
    await server.api.post(`${V2}/channels/create`, { title: 'x' }),
    await server.api.post(`${V2}/channels/subscribe`, { channel_id: channel.channel_id }),
    await server.api.get(`${V2}/channels/subscribers`, { query: { channel_id: channel.channel_id } }),
  ])
    assertError(res, 401, 'unauthorized')
})

test('channel invite links are listed for the owner and admins only, with their uses', async () => {
  const [owner, admin, subscriber, outsider] = await users(4)
  const channel = await createChannel(owner, { is_public: false })
  const link = ok(await owner.api.post(`${V2}/channels/invite-link/create`, { channel_id: channel.channel_id, usage_limit: 5 }))
  for (const user of [admin, subscriber]) await subscribe(user, { code: link.invite_link })
  ok(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: admin.id }))
  const listed = ok(await admin.api.get(`${V2}/channels/invite-links`, { query: { channel_id: channel.channel_id } }))
  const mine = listed.items.find((l: any) => l.code === link.code)
  assert.equal(mine.uses, 2)
  assert.equal(listed.items.filter((l: any) => l.is_primary).length, 1)
  assertError(await subscriber.api.get(`${V2}/channels/invite-links`, { query: { channel_id: channel.channel_id } }), 403, 'forbidden')
  assertError(await outsider.api.get(`${V2}/channels/invite-links`, { query: { channel_id: channel.channel_id } }), 404, 'not_found')
})

test('an admin who loses the role can no longer edit their earlier posts', async () => {
  const [owner, admin] = await users(2)
  const channel = await createChannel(owner)
  await subscribe(admin, { channel_id: channel.channel_id })
  ok(await owner.api.post(`${V2}/channels/add-admin`, { channel_id: channel.channel_id, user_id: admin.id }))
  const post = await publish(admin, channel.channel_id, 'as admin')
  ok(await admin.api.post(`${V2}/messages/${post.message_id}/edit`, { content: 'still admin' }))
  ok(await owner.api.post(`${V2}/channels/remove-admin`, { channel_id: channel.channel_id, user_id: admin.id }))
  assertError(await admin.api.post(`${V2}/messages/${post.message_id}/edit`, { content: 'not any more' }), 403, 'forbidden')
  assert.equal((await history(owner, channel.channel_id))[0].content, 'still admin')
})

test('an outsider of a public channel who posts is told 403 (they can see it); of a private one, 404', async () => {
  const [owner, outsider] = await users(2)
  const open = await createChannel(owner)
  const closed = ok(await owner.api.post(`${V2}/channels/create`, { title: 'Closed', is_public: false }))
  assertError(await outsider.api.post(`${V2}/messages/send`, { chat_id: open.channel_id, content: 'hi' }), 403, 'forbidden')
  assertError(await outsider.api.post(`${V2}/messages/send`, { chat_id: closed.channel_id, content: 'hi' }), 404, 'not_found')
  // control: once subscribed, still not allowed to post (403 for the role), and reading works
  await subscribe(outsider, { channel_id: open.channel_id })
  assertError(await outsider.api.post(`${V2}/messages/send`, { chat_id: open.channel_id, content: 'hi' }), 403, 'forbidden')
  assert.equal((await owner.api.post(`${V2}/messages/send`, { chat_id: open.channel_id, content: 'owner post' })).status, 200)
})
