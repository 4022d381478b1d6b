import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createGroup as group } from '../harness/fixtures.js'
import { history, ISO, registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const server = await startTestServer()
const users = (n: number) => registerUsers(server, n)
const connect = (user: TestUser) => TestSocket.connect(server.url, user.token)

async function ok(res: { status: number; body: any; text: string }) {
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.success, true)
  return res.body.data ?? res.body
}
const createGroup = (owner: TestUser, body: Record<string, unknown> = {}) =>
  group(owner, { title: 'Hikers', description: 'weekend trips', ...body })
const say = async (user: TestUser, chatId: number, content: string, extra: Record<string, unknown> = {}) =>
  ok(await user.api.post(`${V2}/messages/send`, { chat_id: chatId, content, ...extra }))
/** The chat list without Saved Messages (created, and so on top, at the first listing) */
const chatList = async (user: TestUser) =>
  ((await ok(await user.api.get(`${V2}/chat_list`, { query: { per_page: 100 } }))).items as any[]).filter((item) => !item.is_saved)

test('create answers the Group shape exactly; the creator owns it; info says the same', async () => {
  const [owner, friend] = await users(2)
  const group = await createGroup(owner, { member_ids: [friend.id] })
  assert.deepEqual(Object.keys(group).sort(), [
    'avatar_url',
    'chat_seq',
    'created_at',
    'description',
    'group_id',
    'invite_link',
    'is_forum',
    'is_public',
    'last_message',
    'member_count',
    'my_role',
    'name',
    'owner_id',
  ])
  assert.equal(group.name, 'Hikers')
  assert.equal(group.description, 'weekend trips')
  assert.equal(group.owner_id, owner.id)
  assert.equal(group.my_role, 'owner')
  assert.equal(group.member_count, 2)
  assert.equal(group.is_public, false)
  assert.equal(group.last_message, null)
  assert.match(group.created_at, ISO)
  assert.match(group.invite_link, /^http:\/\/localhost:\d+\/join\/[A-Za-z0-9_-]{16,}$|^https?:\/\/[^/]+\/join\/[A-Za-z0-9_-]{16,}$/)

  const info = await ok(await friend.api.get(`${V2}/groups/info`, { query: { chat_id: group.group_id } }))
  assert.equal(info.my_role, 'member')
  assert.equal(info.invite_link, null, 'a member of a private group does not see its invite link')
  assert.equal(info.member_count, 2)
})

test('group messages: members send and read history; last_message carries sender_username; outsiders get 404', async () => {
  const [owner, member, outsider] = await users(3)
  const group = await createGroup(owner, { member_ids: [member.id] })
  const m1 = await say(member, group.group_id, 'hello all')
  assert.equal(m1.chat_id, group.group_id)
  assert.equal(m1.receiver_id, null)
  await say(owner, group.group_id, 'welcome')
  assert.deepEqual(
    (await history(member, group.group_id)).map((m) => m.content),
    ['welcome', 'hello all'],
  )

  const info = await ok(await member.api.get(`${V2}/groups/info`, { query: { chat_id: group.group_id } }))
  assert.equal(info.last_message.content, 'welcome')
  assert.equal(info.last_message.sender_username, owner.username)

  for (const res of [
    await outsider.api.get(`${V2}/chat/history`, { query: { chat_id: group.group_id } }),
    await outsider.api.get(`${V2}/groups/info`, { query: { chat_id: group.group_id } }),
    await outsider.api.get(`${V2}/groups/members`, { query: { chat_id: group.group_id } }),
    await outsider.api.post(`${V2}/messages/send`, { chat_id: group.group_id, content: 'let me in' }),
    await outsider.api.post(`${V2}/messages/${m1.message_id}/reaction`, { emoji: '👍' }),
  ]) {
    assert.equal(res.status, 404, res.text)
    assert.equal(res.body.error.code, 'not_found')
  }
})

test('chat list: group items with unread counts, ordered with personal chats by last activity', async () => {
  const [owner, member, peer] = await users(3)
  const group = await createGroup(owner, { member_ids: [member.id] })
  await ok(await member.api.post(`${V2}/messages/send`, { receiver_id: peer.id, content: 'personal first' }))
  await say(owner, group.group_id, 'one')
  const two = await say(owner, group.group_id, 'two')

  const list = await chatList(member)
  assert.equal(list[0].chat_type, 'group')
  assert.equal(list[0].chat_id, group.group_id)
  assert.deepEqual(list[0].group, { group_id: group.group_id, name: 'Hikers', avatar_url: null })
  assert.equal(list[0].unread_count, 2)
  assert.equal(list[0].last_message.content, 'two')
  assert.equal(list[0].last_message.sender_username, owner.username)
  assert.equal(list[0].last_message.is_read, false)
  assert.equal(list[0].peer, undefined)
  assert.equal(list[1].chat_type, 'personal')

  await ok(await member.api.post(`${V2}/messages/${two.message_id}/read`, {}))
  const after = (await chatList(member)).find((item) => item.chat_id === group.group_id)
  assert.equal(after.unread_count, 0)
  const ownerItem = (await chatList(owner)).find((item) => item.chat_id === group.group_id)
  assert.equal(ownerItem.unread_count, 0, 'own messages are not unread')
  assert.equal(ownerItem.last_message.is_read, true, 'read once another member read it')

  // a message of the personal chat lifts it above the group again
  await ok(await peer.api.post(`${V2}/messages/send`, { receiver_id: member.id, content: 'back on top' }))
  assert.equal((await chatList(member))[0].chat_type, 'personal')
})

test('a new member does not count earlier messages as unread', async () => {
  const [owner, late] = await users(2)
  const group = await createGroup(owner)
  await say(owner, group.group_id, 'before you came')
  await ok(await owner.api.post(`${V2}/groups/add-member`, { chat_id: group.group_id, user_id: late.id }))
  const item = (await chatList(late)).find((i) => i.chat_id === group.group_id)
  assert.equal(item.unread_count, 0)
  await say(owner, group.group_id, 'after')
  assert.equal((await chatList(late)).find((i) => i.chat_id === group.group_id).unread_count, 1)
})

test('members: paginated in join order with roles; total is the member count', async () => {
  const [owner, ...rest] = await users(6)
  const group = await createGroup(owner, { member_ids: rest.map((u) => u.id) })
  await ok(await owner.api.post(`${V2}/groups/promote`, { chat_id: group.group_id, user_id: rest[0].id }))
  const page1 = await ok(await rest[3].api.get(`${V2}/groups/members`, { query: { chat_id: group.group_id, per_page: 4 } }))
  assert.equal(page1.total, 6)
  assert.equal(page1.pages, 2)
  assert.deepEqual(
    page1.items.map((m: any) => [m.user_id, m.role]),
    [
      [owner.id, 'owner'],
      [rest[0].id, 'admin'],
      [rest[1].id, 'member'],
      [rest[2].id, 'member'],
    ],
  )
  assert.match(page1.items[0].joined_at, ISO)
  const page2 = await ok(await rest[3].api.get(`${V2}/groups/members`, { query: { chat_id: group.group_id, per_page: 4, page: 2 } }))
  assert.deepEqual(
    page2.items.map((m: any) => m.user_id),
    [rest[3].id, rest[4].id],
  )
  // after someone leaves, pages close the gap
  await ok(await rest[1].api.post(`${V2}/groups/leave`, { chat_id: group.group_id }))
  const again = await ok(await owner.api.get(`${V2}/groups/members`, { query: { chat_id: group.group_id, per_page: 4, page: 2 } }))
  assert.deepEqual(
    again.items.map((m: any) => m.user_id),
    [rest[4].id],
  )
  assert.equal(again.total, 5)
})

test('invite links: join by code or whole link, uses counted, expiry, limit and revocation refused', async () => {
  const [owner, a, b, c, d] = await users(5)
  const group = await createGroup(owner)
  const link = await ok(await owner.api.post(`${V2}/groups/invite-link/create`, { chat_id: group.group_id, usage_limit: 2 }))
  assert.equal(link.uses, 0)
  assert.equal(link.usage_limit, 2)
  assert.ok(link.invite_link.endsWith(`/join/${link.code}`))

  const joined = await ok(await a.api.post(`${V2}/groups/invite-link/join`, { code: link.code }))
  assert.equal(joined.group_id, group.group_id)
  assert.equal(joined.my_role, 'member')
  const again = await a.api.post(`${V2}/groups/invite-link/join`, { code: link.code })
  assert.equal(again.status, 409, 'already a member')
  await ok(await b.api.post(`${V2}/groups/invite-link/join`, { code: link.invite_link }))
  const exhausted = await c.api.post(`${V2}/groups/invite-link/join`, { code: link.code })
  assert.equal(exhausted.status, 403, exhausted.text)
  assert.match(exhausted.body.error.message, /limit/)
  const listed = await ok(await owner.api.get(`${V2}/groups/invite-links`, { query: { chat_id: group.group_id } }))
  assert.equal(listed.items.find((l: any) => l.code === link.code).uses, 2)

  // the permanent link, then revoked: it stops working and a new permanent link replaces it
  const permanent = group.invite_link
  await ok(await c.api.post(`${V2}/groups/invite-link/join`, { code: permanent }))
  const revoked = await ok(await owner.api.post(`${V2}/groups/invite-link/revoke`, { chat_id: group.group_id, code: permanent }))
  assert.equal(revoked.is_revoked, true)
  const refused = await d.api.post(`${V2}/groups/invite-link/join`, { code: permanent })
  assert.equal(refused.status, 403)
  assert.match(refused.body.error.message, /revoked/)
  const info = await ok(await owner.api.get(`${V2}/groups/info`, { query: { chat_id: group.group_id } }))
  assert.notEqual(info.invite_link, permanent)
  await ok(await d.api.post(`${V2}/groups/invite-link/join`, { code: info.invite_link }))

  const unknown = await d.api.post(`${V2}/groups/invite-link/join`, { code: 'no-such-code' })
  assert.equal(unknown.status, 404)
  const past = await owner.api.post(`${V2}/groups/invite-link/create`, { chat_id: group.group_id, expires_at: '2020-01-01T00:00:00Z' })
  assert.equal(past.status, 400)
})

test('an expired invite link is refused', async () => {
  const [owner, late] = await users(2)
  const group = await createGroup(owner)
  const soon = new Date(Date.now() + 1500).toISOString()
  const link = await ok(await owner.api.post(`${V2}/groups/invite-link/create`, { chat_id: group.group_id, expires_at: soon }))
  await new Promise((resolve) => setTimeout(resolve, 1700))
  const res = await late.api.post(`${V2}/groups/invite-link/join`, { code: link.code })
  assert.equal(res.status, 403, res.text)
  assert.match(res.body.error.message, /expired/)
})

test('a link with one use left admits exactly one of many racing joins', async () => {
  const [owner, ...racers] = await users(9)
  const group = await createGroup(owner)
  const link = await ok(await owner.api.post(`${V2}/groups/invite-link/create`, { chat_id: group.group_id, usage_limit: 1 }))
  const results = await Promise.all(racers.map((u) => u.api.post(`${V2}/groups/invite-link/join`, { code: link.code })))
  assert.equal(results.filter((r) => r.status === 200).length, 1)
  assert.equal(results.filter((r) => r.status === 403).length, racers.length - 1)
  const info = await ok(await owner.api.get(`${V2}/groups/info`, { query: { chat_id: group.group_id } }))
  assert.equal(info.member_count, 2)
})

test('leave: an owner hands over to the eldest admin, else the eldest member; the last one out dissolves the group', async () => {
  const [owner, m1, m2, admin] = await users(4)
  const group = await createGroup(owner, { member_ids: [m1.id, m2.id, admin.id] })
  await ok(await owner.api.post(`${V2}/groups/promote`, { chat_id: group.group_id, user_id: admin.id }))
  await ok(await owner.api.post(`${V2}/groups/leave`, { chat_id: group.group_id }))
  let info = await ok(await m1.api.get(`${V2}/groups/info`, { query: { chat_id: group.group_id } }))
  assert.equal(info.owner_id, admin.id, 'the admin inherits, though members joined earlier')
  await ok(await admin.api.post(`${V2}/groups/leave`, { chat_id: group.group_id }))
  info = await ok(await m2.api.get(`${V2}/groups/info`, { query: { chat_id: group.group_id } }))
  assert.equal(info.owner_id, m1.id, 'no admin left: the longest-standing member')
  assert.equal(info.member_count, 2)
  await ok(await m1.api.post(`${V2}/groups/leave`, { chat_id: group.group_id }))
  const last = await ok(await m2.api.post(`${V2}/groups/leave`, { chat_id: group.group_id }))
  assert.equal(last.dissolved, true)
  const gone = await m2.api.get(`${V2}/groups/info`, { query: { chat_id: group.group_id } })
  assert.equal(gone.status, 404)
})

test('transfer: the owner role moves; the old owner becomes an admin', async () => {
  const [owner, heir] = await users(2)
  const group = await createGroup(owner, { member_ids: [heir.id] })
  const after = await ok(await owner.api.post(`${V2}/groups/transfer`, { chat_id: group.group_id, user_id: heir.id }))
  assert.equal(after.owner_id, heir.id)
  assert.equal(after.my_role, 'admin')
  const members = await ok(await heir.api.get(`${V2}/groups/members`, { query: { chat_id: group.group_id } }))
  assert.deepEqual(
    members.items.map((m: any) => m.role),
    ['admin', 'owner'],
  )
})

test('events: members get message.new, member.joined/left and chat.updated; an added member starts receiving at once', async () => {
  const [owner, member, newcomer] = await users(3)
  const group = await createGroup(owner, { member_ids: [member.id] })
  const [ownerWs, memberWs, newcomerWs] = [await connect(owner), await connect(member), await connect(newcomer)]

  await say(owner, group.group_id, 'ping')
  const got = await memberWs.next('message.new')
  assert.equal(got.data.message.content, 'ping')
  assert.equal((got as any).chat_id, group.group_id)
  assert.equal(typeof (got as any).chat_seq, 'number')
  assert.equal(got.seq, undefined, 'group events are not in the per-user log')

  await ok(await owner.api.post(`${V2}/groups/add-member`, { chat_id: group.group_id, user_id: newcomer.id }))
  const own = await newcomerWs.next('member.joined')
  assert.equal(own.data.user_id, newcomer.id)
  assert.equal(typeof own.seq, 'number', "the newcomer's own log says they joined")
  const seen = await memberWs.next('member.joined')
  assert.deepEqual(seen.data, { chat_id: group.group_id, user_id: newcomer.id, role: 'member' })

  await say(member, group.group_id, 'welcome newcomer')
  assert.equal((await newcomerWs.next('message.new')).data.message.content, 'welcome newcomer')
  assert.equal((await memberWs.next('message.new')).data.message.content, 'welcome newcomer', "the sender's own devices too")

  await ok(await owner.api.post(`${V2}/groups/set-title`, { chat_id: group.group_id, title: 'Climbers' }))
  assert.deepEqual((await newcomerWs.next('chat.updated')).data, { chat_id: group.group_id, title: 'Climbers' })

  await ok(await owner.api.post(`${V2}/groups/remove-member`, { chat_id: group.group_id, user_id: newcomer.id }))
  assert.equal((await newcomerWs.next('member.left')).data.user_id, newcomer.id)
  assert.equal((await memberWs.next('member.left')).data.user_id, newcomer.id)
  await say(owner, group.group_id, 'after removal')
  assert.equal((await memberWs.next('message.new')).data.message.content, 'after removal')
  assert.deepEqual(await newcomerWs.drain('message.new', 300), [], 'a removed member hears nothing more')
  assert.equal((await ownerWs.next('message.new')).data.message.content, 'ping', "the sender's own socket gets its post too")
})

test('catch-up after a reconnect: resume with the chat cursor replays what was missed, once and in order', async () => {
  const [owner, member] = await users(2)
  const group = await createGroup(owner, { member_ids: [member.id] })
  const first = await connect(member)
  await say(owner, group.group_id, 'm1')
  const m1 = await first.next('message.new')
  await first.close()

  for (const content of ['m2', 'm3', 'm4']) await say(owner, group.group_id, content)
  const second = await connect(member)
  second.send({ type: 'resume', chats: { [group.group_id]: (m1 as any).chat_seq } })
  const replayed = [await second.next('message.new'), await second.next('message.new'), await second.next('message.new')]
  assert.deepEqual(
    replayed.map((f) => f.data.message.content),
    ['m2', 'm3', 'm4'],
  )
  assert.deepEqual(
    replayed.map((f: any) => f.chat_seq),
    [(m1 as any).chat_seq + 1, (m1 as any).chat_seq + 2, (m1 as any).chat_seq + 3],
  )
  await say(owner, group.group_id, 'm5')
  assert.equal((await second.next('message.new')).data.message.content, 'm5')
  assert.deepEqual(await second.drain('message.new', 200), [], 'nothing twice')

  const http = await ok(await member.api.get(`${V2}/chat/updates`, { query: { chat_id: group.group_id, since: (m1 as any).chat_seq } }))
  assert.deepEqual(
    http.updates.map((u: any) => u.data.message.content),
    ['m2', 'm3', 'm4', 'm5'],
  )
  assert.equal(http.chat_seq, (m1 as any).chat_seq + 4)
})

test('forum topics: created by admins in forum mode; messages carry topic_id and a topic has its own history', async () => {
  const [owner, member] = await users(2)
  const group = await createGroup(owner, { member_ids: [member.id] })
  const early = await owner.api.post(`${V2}/groups/topics/create`, { chat_id: group.group_id, title: 'Routes' })
  assert.equal(early.status, 400, 'not in forum mode yet')
  const forum = await ok(await owner.api.post(`${V2}/groups/set-forum`, { chat_id: group.group_id, is_forum: true }))
  assert.equal(forum.is_forum, true)
  const topic = await ok(
    await owner.api.post(`${V2}/groups/topics/create`, { chat_id: group.group_id, title: 'Routes', icon_emoji_id: '5368' }),
  )
  assert.equal(topic.title, 'Routes')
  const other = await ok(await owner.api.post(`${V2}/groups/topics/create`, { chat_id: group.group_id, title: 'Gear' }))
  const denied = await member.api.post(`${V2}/groups/topics/create`, { chat_id: group.group_id, title: 'Mine' })
  assert.equal(denied.status, 403)
  const topics = await ok(await member.api.get(`${V2}/groups/topics`, { query: { chat_id: group.group_id } }))
  assert.deepEqual(
    topics.items.map((t: any) => t.title),
    ['Routes', 'Gear'],
  )

  const inTopic = await say(member, group.group_id, 'north face', { topic_id: topic.topic_id })
  assert.equal(inTopic.topic_id, topic.topic_id)
  await say(member, group.group_id, 'crampons', { topic_id: other.topic_id })
  await say(member, group.group_id, 'general chat')
  assert.deepEqual(
    (await history(member, group.group_id, { topic_id: topic.topic_id })).map((m) => m.content),
    ['north face'],
  )
  assert.deepEqual(
    (await history(member, group.group_id)).map((m) => m.content),
    ['general chat', 'crampons', 'north face'],
  )

  // a topic of another group, or none at all, is refused and nothing is sent
  const foreign = await createGroup(owner)
  await ok(await owner.api.post(`${V2}/groups/set-forum`, { chat_id: foreign.group_id, is_forum: true }))
  const foreignTopic = await ok(await owner.api.post(`${V2}/groups/topics/create`, { chat_id: foreign.group_id, title: 'Elsewhere' }))
  for (const topicId of [foreignTopic.topic_id, 999999]) {
    const wrong = await member.api.post(`${V2}/messages/send`, { chat_id: group.group_id, content: 'x', topic_id: topicId })
    assert.equal(wrong.status, 400, wrong.text)
    assert.equal(wrong.body.error.code, 'validation_error')
  }
  assert.equal((await history(member, group.group_id)).length, 3)
})

test('bad input gets validation errors in the envelope', async () => {
  const [owner] = await users(1)
  for (const body of [
    {},
    { title: '' },
    { title: '   ' },
    { title: 'x'.repeat(129) },
    { title: 'ok', member_ids: 'nope' },
    { title: 'ok', extra: 1, description: 5 },
  ]) {
    const res = await owner.api.post(`${V2}/groups/create`, body)
    assert.equal(res.status, 400, JSON.stringify(body))
    assert.equal(res.body.error.code, 'validation_error')
  }
  const unknownUser = await owner.api.post(`${V2}/groups/create`, { title: 'ok', member_ids: [99999999] })
  assert.equal(unknownUser.status, 404)
  const avatar = await owner.api.post(`${V2}/groups/create`, { title: 'ok', avatar: 'never/uploaded.png' })
  assert.equal(avatar.status, 400)
  assert.equal(avatar.body.error.code, 'invalid_file')
})
