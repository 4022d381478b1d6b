/** Pinned and archived chats, black-box: the chat list order, the archive view, the pin limit, refusals. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { createGroup } from '../harness/fixtures.js'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'

const server = await startTestServer()
const users = (n: number) => registerUsers(server, n)

async function chatList(user: TestUser, query: Record<string, string | number | boolean> = {}) {
  const res = await user.api.get(`${V2}/chat_list`, { query: { per_page: 100, ...query } })
  assert.equal(res.status, 200, res.text)
  return res.body
}
/** The chat ids in list order, Saved Messages (always there, the newest when the list is first read) left out. */
const order = async (user: TestUser, query: Record<string, string | number | boolean> = {}) =>
  (await chatList(user, query)).items.filter((i: any) => !i.is_saved).map((i: any) => i.chat_id)

test('pinned chats lead the chat list, most recently pinned first; unpinning puts them back in place', async () => {
  const [me, a, b, c] = await users(4)
  const chatA = (await send(a, me, 'from a')).chat_id
  const chatB = (await send(b, me, 'from b')).chat_id
  const group = await createGroup(me, { title: 'Pinned group' })
  const chatC = (await send(c, me, 'from c')).chat_id
  const before = await order(me)
  const totalBefore = (await chatList(me)).total
  assert.deepEqual(before.slice(0, 4), [chatC, group.group_id, chatB, chatA], 'by activity before any pin (control)')

  const pinned = await me.api.post(`${V2}/pin`, { chat_type: 'personal', chat_id: chatA })
  assert.equal(pinned.status, 200, pinned.text)
  assert.deepEqual(
    pinned.body.items.map((p: any) => [p.chat_type, p.chat_id]),
    [['personal', chatA]],
  )
  assert.equal((await me.api.post(`${V2}/pin`, { chat_type: 'group', chat_id: group.group_id })).status, 200)
  const list = await chatList(me)
  assert.deepEqual(
    list.items
      .filter((i: any) => !i.is_saved)
      .slice(0, 4)
      .map((i: any) => i.chat_id),
    [group.group_id, chatA, chatC, chatB],
  )
  assert.deepEqual(
    list.items.slice(0, 2).map((i: any) => i.chat_id),
    [group.group_id, chatA],
    'pins come before everything',
  )
  assert.equal(list.total, totalBefore, 'pins move chats, they do not add any')
  // paging goes through the pins: page 1 of 1 item is the newest pin, page 2 the next
  assert.deepEqual(await order(me, { per_page: 1, page: 1 }), [group.group_id])
  assert.deepEqual(await order(me, { per_page: 1, page: 2 }), [chatA])

  const pins = await me.api.get(`${V2}/pins`)
  assert.deepEqual(
    pins.body.items.map((p: any) => p.chat_id),
    [group.group_id, chatA],
  )
  assert.ok(pins.body.items.every((p: any) => typeof p.pinned_at === 'string'))
  assert.equal((await me.api.post(`${V2}/pin`, { chat_type: 'personal', chat_id: chatA })).body.items.length, 2, 'pinning twice pins once')

  const unpinned = await me.api.delete(`${V2}/pin`, { query: { chat_type: 'group', chat_id: group.group_id } })
  assert.equal(unpinned.status, 200, unpinned.text)
  assert.deepEqual((await order(me)).slice(0, 4), [chatA, chatC, group.group_id, chatB])
  assert.deepEqual((await order(a)).includes(chatA), true, "my pins are mine: a's list is unchanged")
})

test('at most 5 pinned chats; pins are per user', async () => {
  const [me, ...peers] = await users(7)
  const chats: number[] = []
  for (const peer of peers) chats.push((await send(peer, me, 'hi')).chat_id)
  for (const chatId of chats.slice(0, 5))
    assert.equal((await me.api.post(`${V2}/pin`, { chat_type: 'personal', chat_id: chatId })).status, 200)
  assertError(await me.api.post(`${V2}/pin`, { chat_type: 'personal', chat_id: chats[5] }), 400, 'validation_error', 'a sixth pin')
  assert.equal((await me.api.get(`${V2}/pins`)).body.items.length, 5)
  // the peer can still pin the same chat in their own list
  assert.equal((await peers[0].api.post(`${V2}/pin`, { chat_type: 'personal', chat_id: chats[0] })).status, 200)
  await me.api.delete(`${V2}/pin`, { query: { chat_type: 'personal', chat_id: chats[0] } })
  assert.equal((await me.api.post(`${V2}/pin`, { chat_type: 'personal', chat_id: chats[5] })).status, 200, 'room again after an unpin')
})

test('archived chats leave the main list and make up chat_list?archived=true; unarchive brings them back', async () => {
  const [me, a, b] = await users(3)
  const chatA = (await send(a, me, 'from a')).chat_id
  const chatB = (await send(b, me, 'from b')).chat_id
  const group = await createGroup(me, { title: 'Archived group' })
  const total = (await chatList(me)).total
  const archived = await me.api.post(`${V2}/archive`, { chat_type: 'personal', chat_id: chatA })
  assert.equal(archived.status, 200, archived.text)
  assert.deepEqual(archived.body.data, { chat_type: 'personal', chat_id: chatA, is_archived: true })
  await me.api.post(`${V2}/archive`, { chat_type: 'group', chat_id: group.group_id })

  const main = await chatList(me)
  assert.ok(!main.items.some((i: any) => i.chat_id === chatA || i.chat_id === group.group_id), 'not in the main list')
  assert.ok(
    main.items.some((i: any) => i.chat_id === chatB),
    'the others stay',
  )
  assert.equal(main.total, total - 2)
  const archive = await chatList(me, { archived: true })
  assert.deepEqual(
    archive.items.map((i: any) => i.chat_id),
    [group.group_id, chatA],
  )
  assert.equal(archive.total, 2)

  // pinning an archived chat brings it back to the main list; archiving a pinned one unpins it
  await me.api.post(`${V2}/pin`, { chat_type: 'personal', chat_id: chatA })
  assert.equal((await order(me))[0], chatA)
  assert.deepEqual(await order(me, { archived: true }), [group.group_id])
  await me.api.post(`${V2}/archive`, { chat_type: 'personal', chat_id: chatA })
  assert.deepEqual((await me.api.get(`${V2}/pins`)).body.items, [])

  const back = await me.api.delete(`${V2}/archive`, { query: { chat_type: 'group', chat_id: group.group_id } })
  assert.deepEqual(back.body.data, { chat_type: 'group', chat_id: group.group_id, is_archived: false })
  assert.ok((await order(me)).includes(group.group_id))
})

test('pin and archive refusals: a chat I am not in, the wrong chat_type, bad bodies; nothing written', async () => {
  const [me, a, b] = await users(3)
  const theirs = (await send(a, b, 'between a and b')).chat_id
  const mine = (await send(a, me, 'to me')).chat_id
  assertError(await me.api.post(`${V2}/pin`, { chat_type: 'personal', chat_id: theirs }), 404, 'not_found', 'not my chat')
  assertError(await me.api.post(`${V2}/archive`, { chat_type: 'personal', chat_id: theirs }), 404, 'not_found', 'not my chat')
  assertError(await me.api.post(`${V2}/pin`, { chat_type: 'personal', chat_id: 987_654_321 }), 404, 'not_found', 'no such chat')
  assertError(await me.api.post(`${V2}/pin`, { chat_type: 'group', chat_id: mine }), 400, 'validation_error', 'wrong type')
  assertError(await me.api.post(`${V2}/pin`, { chat_type: 'secret', chat_id: mine }), 400, 'validation_error', 'unknown type')
  assertError(await me.api.post(`${V2}/pin`, { chat_id: mine }), 400, 'validation_error', 'no type')
  assertError(await me.api.delete(`${V2}/pin`), 400, 'validation_error', 'nothing named')
  assertError(await me.api.get(`${V2}/chat_list`, { query: { archived: 'maybe' } }), 400, 'validation_error', 'archived not a boolean')
  assert.deepEqual((await me.api.get(`${V2}/pins`)).body.items, [])
  assert.deepEqual(await order(me, { archived: true }), [])
  assert.equal((await server.api.get(`${V2}/pins`)).status, 401)
})
