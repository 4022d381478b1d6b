/**
 * `GET auth/export`: my data as one JSON document, an attachment; other people as ids and
 * usernames only; once a minute.
 */
import assert from 'node:assert/strict'
import test from 'node:test'
import { assertError } from '../harness/assert.js'
import { TestClock } from '../harness/clock.js'
import { createGroup } from '../harness/fixtures.js'
import { send } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'

const V2 = '/api.v2/api'
const clock = new TestClock()
const server = await startTestServer({ clock })

async function member(display: string): Promise<TestUser> {
  const name = uniqueName('ex')
  return server.registerUser({ username: name, email: `${name}@example.test`, display_name: display })
}

async function download(user: TestUser) {
  const res = await user.api.get(`${V2}/auth/export`)
  assert.equal(res.status, 200, res.text)
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
  assert.match(
    res.headers.get('content-disposition') ?? '',
    new RegExp(`^attachment; filename="tern-export-${user.id}-\\d{4}-\\d{2}-\\d{2}\\.json"$`),
  )
  assert.equal(res.body.success, true)
  return { data: res.body.data, text: res.text }
}

test('the export holds my data, and of others only ids and usernames', async () => {
  const me = await member('Export Owner')
  const friend = await member('Friend PRIVATEDISPLAY')
  const blockedOne = await member('Blocked Person')
  await server.ctx.db.updateTable('users').set({ phone: '+79990001199', bio: 'FRIENDBIO' }).where('id', '=', friend.id).execute()
  const mine = await send(me, friend, 'my own words')
  const theirs = await send(friend, me, 'FRIENDSECRETWORDS')
  const group = await createGroup(me, { title: 'Export Group', member_ids: [friend.id] })
  assert.equal((await me.api.post(`${V2}/contacts/add`, { user_id: friend.id, display_name: 'My Pal' })).status, 200)
  assert.equal((await me.api.post(`${V2}/block`, { user_id: blockedOne.id })).status, 200)
  assert.equal((await me.api.post(`${V2}/saved/add`, { message_id: theirs.message_id })).status, 200)
  assert.equal((await me.api.post(`${V2}/saved/add`, { message_id: mine.message_id })).status, 200)
  assert.equal((await me.api.post(`${V2}/settings/update`, { key: 'theme', value: 'dark' })).status, 200)
  assert.equal((await me.api.post('/premium/activate', { plan: 'monthly' })).status, 200)

  const { data, text } = await download(me)
  assert.equal(data.format, 'tern-export-1')
  assert.equal(data.profile.user_id, me.id)
  assert.equal(data.profile.username, me.username)
  assert.equal(data.profile.email, me.email)
  assert.equal(data.profile.display_name, 'Export Owner')
  assert.equal(data.profile.has_password, true)
  assert.equal(data.settings.theme, 'dark')
  assert.equal(data.sessions.length, 1)
  assert.equal(data.sessions[0].is_current, true)
  assert.ok(!text.includes(me.token), 'no session token')
  assert.match(data.sessions[0].session_token, /^.{6}…$/)
  assert.deepEqual(
    data.contacts.map((c: any) => [c.user_id, c.username, c.custom_name]),
    [[friend.id, friend.username, 'My Pal']],
  )
  assert.deepEqual(
    data.blocked_users.map((b: any) => [b.user_id, b.username]),
    [[blockedOne.id, blockedOne.username]],
  )
  const chatIds = data.chats.map((c: any) => c.chat_id)
  assert.ok(chatIds.includes(mine.chat_id) && chatIds.includes(group.chat_id ?? group.group_id), JSON.stringify(data.chats))
  const personal = data.chats.find((c: any) => c.chat_id === mine.chat_id)
  assert.deepEqual(personal.peer, { user_id: friend.id, username: friend.username })
  assert.deepEqual(
    data.messages_sent.map((m: any) => m.content),
    ['my own words'],
  )
  const savedTheirs = data.saved_messages.find((s: any) => s.message_id === theirs.message_id)
  assert.deepEqual(savedTheirs.sender, { user_id: friend.id, username: friend.username })
  assert.equal(savedTheirs.content, undefined, "another's message text stays out")
  assert.equal(data.saved_messages.find((s: any) => s.message_id === mine.message_id).content, 'my own words')
  assert.equal(data.premium_orders.length, 1)
  assert.equal(data.premium_orders[0].status, 'paid')
  // nothing of the friend's own: their messages, display name, phone, bio, email
  for (const secret of ['FRIENDSECRETWORDS', 'PRIVATEDISPLAY', '+79990001199', 'FRIENDBIO', friend.email!, friend.token]) {
    assert.ok(!text.includes(secret), `the export leaks ${secret}`)
  }
  // positive control: the friend's own export has them (all but the token)
  const friendsOwn = await download(friend)
  for (const secret of ['FRIENDSECRETWORDS', 'PRIVATEDISPLAY', '+79990001199', 'FRIENDBIO', friend.email!]) {
    assert.ok(friendsOwn.text.includes(secret), `the friend's own export has ${secret}`)
  }
})

test('the export is once a minute per user, and needs a session', async () => {
  const me = await member('Limited')
  const other = await member('Other')
  await download(me)
  const again = await me.api.get(`${V2}/auth/export`)
  assertError(again, 429, 'rate_limited')
  assert.ok(Number(again.headers.get('retry-after')) > 0)
  // positive control: another user is not limited
  await download(other)
  assertError(await server.api.get(`${V2}/auth/export`), 401, 'unauthorized')
})

test('a large export comes whole, page after page', async () => {
  const me = await member('Talkative')
  const friend = await member('Listener')
  const first = await send(me, friend, 'message 0')
  const rows = Array.from({ length: 1200 }, (_, i) => ({
    chat_id: first.chat_id,
    seq: 1000 + i,
    sender_id: me.id,
    receiver_id: friend.id,
    content: `bulk ${i}`,
    created_at: clock.now(),
  }))
  for (let i = 0; i < rows.length; i += 200)
    await server.ctx.db
      .insertInto('messages')
      .values(rows.slice(i, i + 200))
      .execute()
  const { data } = await download(me)
  assert.equal(data.messages_sent.length, 1201)
  assert.equal(data.messages_sent[0].content, 'message 0')
  assert.equal(data.messages_sent[1200].content, 'bulk 1199')
  assert.equal(new Set(data.messages_sent.map((m: any) => m.message_id)).size, 1201)
})
