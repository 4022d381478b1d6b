import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { history, ISO, registerUsers, send, updates, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'
import { sleep } from '../harness/wait.js'

const server = await startTestServer()
const connect = (user: TestUser) => TestSocket.connect(server.url, user.token)
const users = (n: number) => registerUsers(server, n)
const contents = async (user: TestUser, chatId: number) => (await history(user, chatId)).map((m) => m.content)
const block = (me: TestUser, userId: number) => me.api.post(`${V2}/block`, { user_id: userId })
const unblock = (me: TestUser, userId: number) => me.api.post(`${V2}/unblock`, { user_id: userId })
const blocked = async (me: TestUser, query: Record<string, number> = {}) => {
  const res = await me.api.get(`${V2}/blocked`, { query })
  assert.equal(res.status, 200, res.text)
  return res.body
}

// ---------------------------------------------------------------- 10. blocking

test('block, list and unblock: idempotent, Peer items, paginated', async () => {
  const [alice, bob, carol, dave] = await users(4)
  const res = await block(alice, bob.id)
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body, { success: true, data: { user_id: bob.id, is_blocked: true } })
  const again = await block(alice, bob.id)
  assert.equal(again.status, 200, again.text)
  assert.deepEqual(again.body.data, { user_id: bob.id, is_blocked: true })

  const list = await blocked(alice)
  assert.equal(list.items.length, 1, 'blocking twice lists once')
  assert.equal(list.items[0].user_id, bob.id)
  assert.equal(list.items[0].username, bob.username)
  assert.equal(typeof list.items[0].display_name, 'string')
  assert.equal(typeof list.items[0].is_online, 'boolean')
  assert.equal(list.total, 1)
  assert.equal(list.page, 1)
  assert.deepEqual((await blocked(bob)).items, [], "the list is the blocker's own")

  await block(alice, carol.id)
  await block(alice, dave.id)
  const page1 = await blocked(alice, { per_page: 2 })
  const page2 = await blocked(alice, { per_page: 2, page: 2 })
  assert.deepEqual([page1.total, page1.pages, page1.per_page, page1.items.length, page2.items.length], [3, 2, 2, 2, 1])
  assert.deepEqual(
    [...page1.items, ...page2.items].map((p: any) => p.user_id).sort((a: number, b: number) => a - b),
    [bob.id, carol.id, dave.id].sort((a, b) => a - b),
  )

  const off = await unblock(alice, bob.id)
  assert.equal(off.status, 200, off.text)
  assert.deepEqual(off.body, { success: true, data: { user_id: bob.id, is_blocked: false } })
  assert.deepEqual((await blocked(alice)).items.map((p: any) => p.user_id).sort(), [carol.id, dave.id].sort())
})

test('block refusals: myself 400, unknown user 404, bad body 400, no token 401', async () => {
  const [alice] = await users(1)
  assertError(await block(alice, alice.id), 400, 'validation_error', 'self')
  assertError(await block(alice, 987_654_321), 404, 'not_found', 'unknown user')
  assertError(await alice.api.post(`${V2}/block`, {}), 400, 'validation_error', 'no user_id')
  assertError(await alice.api.post(`${V2}/block`, { user_id: 'bob' }), 400, 'validation_error', 'not an id')
  assert.equal((await server.api.post(`${V2}/block`, { user_id: alice.id })).status, 401)
  assert.equal((await server.api.get(`${V2}/blocked`)).status, 401)
  assert.deepEqual((await blocked(alice)).items, [])
})

test('a blocked sender is refused with code blocked, and nothing reaches the blocker; unblock restores', async () => {
  const [alice, bob] = await users(2)
  const hello = await send(bob, alice, 'hello')
  const chatId = hello.chat_id
  const aliceSocket = await connect(alice)

  // before the block, bob's typing reaches alice (so the check below can fail)
  await bob.api.post(`${V2}/chat/typing`, { chat_id: chatId, is_typing: true })
  assert.equal((await aliceSocket.next('typing')).data.user_id, bob.id)
  await bob.api.post(`${V2}/chat/typing`, { chat_id: chatId, is_typing: false })
  await aliceSocket.next('typing')

  assert.equal((await block(alice, bob.id)).status, 200)
  const aliceLog = await updates(alice)
  const before = await contents(alice, chatId)

  assertError(
    await bob.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'let me explain' }),
    403,
    'blocked',
    'by receiver_id',
  )
  assertError(await bob.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'please' }), 403, 'blocked', 'by chat_id')
  await bob.api.post(`${V2}/chat/typing`, { chat_id: chatId, is_typing: true })
  await sleep(300)
  // alice's own block may tell her devices (chat.updated); nothing of bob's may arrive
  const fromBob = aliceSocket.frames.filter((f) => f.type !== 'presence' && !(f.type === 'chat.updated' && f.data?.is_blocked === true))
  assert.deepEqual(fromBob, [], "alice's socket gets nothing from bob")
  assert.deepEqual(await contents(alice, chatId), before)
  assert.deepEqual(await contents(bob, chatId), before, 'nothing written for bob either')
  assert.deepEqual(await updates(alice), aliceLog, "alice's update log is unchanged")
  assert.equal((await alice.api.get(`${V2}/chat_list`)).body.items.find((i: any) => i.chat_id === chatId).unread_count, 1)

  // the blocker may still write to the blocked user
  const reply = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'no' })
  assert.equal(reply.status, 200, reply.text)

  await bob.api.post(`${V2}/chat/typing`, { chat_id: chatId, is_typing: false })
  assert.equal((await unblock(alice, bob.id)).status, 200)
  aliceSocket.frames.splice(0)
  const again = await bob.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'friends again' })
  assert.equal(again.status, 200, again.text)
  const frame = await aliceSocket.next('message.new')
  assert.equal(frame.data.message.message_id, again.body.data.message_id)
  assert.deepEqual(await contents(alice, chatId), ['friends again', 'no', 'hello'])
})

test('blocking is one-way: the blocked user is not blocked from being written to, and others are unaffected', async () => {
  const [alice, bob, carol] = await users(3)
  await block(alice, bob.id)
  assert.equal((await carol.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'hi' })).status, 200)
  assert.equal((await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'hi' })).status, 200)
  assert.equal((await bob.api.post(`${V2}/messages/send`, { receiver_id: carol.id, content: 'hi' })).status, 200)
  assertError(await bob.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'hi' }), 403, 'blocked')
})

// ---------------------------------------------------------------- 11. saved

const save = (user: TestUser, messageId: number) => user.api.post(`${V2}/saved/add`, { message_id: messageId })
const savedList = async (user: TestUser, query: Record<string, number> = {}) => {
  const res = await user.api.get(`${V2}/saved`, { query })
  assert.equal(res.status, 200, res.text)
  return res.body
}

test('save: {message_id, saved_at}, idempotent with the same saved_at, listed newest saved first with saved_at', async () => {
  const [alice, bob] = await users(2)
  const m1 = await send(alice, bob, 'first')
  const m2 = await send(bob, alice, 'second')

  const s2 = await save(bob, m2.message_id)
  assert.equal(s2.status, 200, s2.text)
  assert.deepEqual(Object.keys(s2.body.data).sort(), ['message_id', 'saved_at'])
  assert.equal(s2.body.data.message_id, m2.message_id)
  assert.match(s2.body.data.saved_at, ISO)
  await sleep(15)
  const s1 = await save(bob, m1.message_id)
  assert.equal(s1.status, 200, s1.text)
  await sleep(15)
  const repeat = await save(bob, m2.message_id)
  assert.equal(repeat.status, 200, repeat.text)
  assert.deepEqual(repeat.body.data, s2.body.data, 'saving again keeps the first saved_at')

  const list = await savedList(bob)
  assert.deepEqual(
    list.items.map((m: any) => m.message_id),
    [m1.message_id, m2.message_id],
    'newest saved first, not newest message',
  )
  assert.deepEqual(
    list.items.map((m: any) => m.saved_at),
    [s1.body.data.saved_at, s2.body.data.saved_at],
  )
  assert.equal(list.items[0].content, 'first')
  assert.equal(list.items[0].sender_id, alice.id)
  assert.equal(list.items[0].chat_id, m1.chat_id)
  assert.deepEqual(list.items[0].reactions, {})
  assert.equal(list.total, 2)
  assert.equal(list.page, 1)
  assert.deepEqual((await savedList(alice)).items, [], 'saved is per user')

  const paged = await savedList(bob, { per_page: 1, page: 2 })
  assert.deepEqual(
    paged.items.map((m: any) => m.message_id),
    [m2.message_id],
  )
  assert.equal(paged.pages, 2)
})

test('save refusals: outsider 404, unknown 404, bad body 400, no token 401; nothing saved', async () => {
  const [alice, bob, eve] = await users(3)
  const m = await send(alice, bob, 'private')
  assertError(await save(eve, m.message_id), 404, 'not_found', 'outsider')
  assertError(await save(eve, 987_654_321), 404, 'not_found', 'unknown')
  assertError(await eve.api.post(`${V2}/saved/add`, {}), 400, 'validation_error', 'no message_id')
  assert.equal((await server.api.post(`${V2}/saved/add`, { message_id: m.message_id })).status, 401)
  assert.equal((await server.api.get(`${V2}/saved`)).status, 401)
  assert.deepEqual((await savedList(eve)).items, [])
})

test('remove: by query or JSON body, removed:false when it was not saved', async () => {
  const [alice, bob] = await users(2)
  const m = await send(alice, bob, 'keep for a while')
  await save(alice, m.message_id)
  const res = await alice.api.delete(`${V2}/saved/remove`, { query: { message_id: m.message_id } })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body, { success: true, data: { message_id: m.message_id, removed: true } })
  assert.deepEqual((await savedList(alice)).items, [])
  const twice = await alice.api.delete(`${V2}/saved/remove`, { query: { message_id: m.message_id } })
  assert.equal(twice.status, 200, twice.text)
  assert.deepEqual(twice.body.data, { message_id: m.message_id, removed: false })

  await save(alice, m.message_id)
  const viaBody = await alice.api.request('DELETE', `${V2}/saved/remove`, { message_id: m.message_id })
  assert.equal(viaBody.status, 200, viaBody.text)
  assert.deepEqual(viaBody.body.data, { message_id: m.message_id, removed: true })
  assert.deepEqual((await savedList(alice)).items, [])
  assert.equal((await alice.api.delete(`${V2}/saved/remove`)).status, 400)
})

test('a message deleted for all disappears from saved lists', async () => {
  const [alice, bob] = await users(2)
  const keep = await send(alice, bob, 'stays')
  const gone = await send(alice, bob, 'goes')
  await save(bob, keep.message_id)
  await save(bob, gone.message_id)
  assert.equal((await savedList(bob)).items.length, 2)
  const del = await alice.api.delete(`${V2}/messages/${gone.message_id}`, { query: { for_all: 'true' } })
  assert.equal(del.status, 200, del.text)
  const list = await savedList(bob)
  assert.deepEqual(
    list.items.map((m: any) => m.message_id),
    [keep.message_id],
  )
  assert.equal(list.total, 1)
})

test("a saved message of a private group drops out of the saver's list once they are removed (edits and reactions included), and is back if they rejoin", async () => {
  const [owner, saver] = await users(2)
  const create = await owner.api.post(`${V2}/groups/create`, { title: 'Private circle' })
  assert.equal(create.status, 200, create.text)
  const chatId: number = create.body.data.group_id ?? create.body.data.chat_id
  assert.equal((await owner.api.post(`${V2}/groups/add-member`, { chat_id: chatId, user_id: saver.id })).status, 200)
  const sent = await owner.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'the plan, version 1' })
  assert.equal(sent.status, 200, sent.text)
  const messageId: number = sent.body.data.message_id
  // a message of a personal chat, saved alongside: the positive control
  const personal = await send(owner, saver, 'a personal note')
  await save(saver, messageId)
  await save(saver, personal.message_id)
  assert.deepEqual(
    (await savedList(saver)).items.map((m: any) => m.message_id).sort(),
    [messageId, personal.message_id].sort(),
    'both shown while a member',
  )

  assert.equal((await owner.api.post(`${V2}/groups/remove-member`, { chat_id: chatId, user_id: saver.id })).status, 200)
  assert.equal((await owner.api.post(`${V2}/messages/${messageId}/edit`, { content: 'the plan, version 2 (secret)' })).status, 200)
  assert.equal((await owner.api.post(`${V2}/messages/${messageId}/reaction`, { emoji: '👍' })).status, 200)
  const after = await savedList(saver)
  assert.deepEqual(
    after.items.map((m: any) => m.message_id),
    [personal.message_id],
    'only what the saver may still read',
  )
  assert.equal(after.total, 1)
  assert.ok(!JSON.stringify(after).includes('secret'), 'the later edit is not shown')

  // added back: it is theirs to read again
  assert.equal((await owner.api.post(`${V2}/groups/add-member`, { chat_id: chatId, user_id: saver.id })).status, 200)
  const back = await savedList(saver)
  assert.equal(back.total, 2)
  assert.equal(back.items.find((m: any) => m.message_id === messageId).content, 'the plan, version 2 (secret)')
})
