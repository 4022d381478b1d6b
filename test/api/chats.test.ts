import assert from 'node:assert/strict'
import test from 'node:test'
import { startTestServer } from '../harness/server.js'

const server = await startTestServer()
const V2 = '/api.v2/api'

test('chat/create makes the personal chat once, the same from both sides', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const first = await alice.api.post(`${V2}/chat/create`, { user_id: bob.id })
  assert.equal(first.status, 200)
  const item = first.body.data
  assert.equal(item.chat_type, 'personal')
  assert.equal(item.peer.user_id, bob.id)
  assert.equal(item.peer.username, bob.username)
  assert.equal(item.unread_count, 0)
  assert.equal(item.last_message, null)
  assert.equal(item.is_saved, false)
  const again = await alice.api.post(`${V2}/chat/create`, { user_id: bob.id })
  const fromBob = await bob.api.post(`${V2}/chat/create`, { user_id: alice.id })
  assert.equal(again.body.data.chat_id, item.chat_id)
  assert.equal(fromBob.body.data.chat_id, item.chat_id)
  assert.equal(fromBob.body.data.peer.user_id, alice.id)
})

test('chat/create with an unknown user is 404, a bad id 400, no token 401', async () => {
  const alice = await server.registerUser()
  assert.equal((await alice.api.post(`${V2}/chat/create`, { user_id: 99_999_999 })).status, 404)
  const bad = await alice.api.post(`${V2}/chat/create`, { user_id: 'bob' })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.error.code, 'validation_error')
  assert.equal((await server.api.post(`${V2}/chat/create`, { user_id: alice.id })).status, 401)
})

test('concurrent chat/create from both sides resolves to one chat', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const results = await Promise.all([
    ...Array.from({ length: 4 }, () => alice.api.post(`${V2}/chat/create`, { user_id: bob.id })),
    ...Array.from({ length: 4 }, () => bob.api.post(`${V2}/chat/create`, { user_id: alice.id })),
  ])
  assert.ok(results.every((r) => r.status === 200))
  assert.equal(new Set(results.map((r) => r.body.data.chat_id)).size, 1)
})

test('chat_list: Saved Messages is always there, chats ordered by last activity, unread counted', async () => {
  const [me, bob, carol] = [await server.registerUser(), await server.registerUser(), await server.registerUser()]
  const empty = await me.api.get(`${V2}/chat_list`)
  assert.equal(empty.status, 200)
  assert.equal(empty.body.total, 1)
  const saved = empty.body.items[0]
  assert.equal(saved.is_saved, true)
  assert.equal(saved.peer.username, 'saved_messages')
  assert.equal(saved.peer.display_name, 'Saved Messages')
  assert.equal(saved.unread_count, 0)

  await bob.api.post(`${V2}/messages/send`, { receiver_id: me.id, content: 'from bob 1' })
  await bob.api.post(`${V2}/messages/send`, { receiver_id: me.id, content: 'from bob 2' })
  await carol.api.post(`${V2}/messages/send`, { receiver_id: me.id, content: 'from carol' })
  const list = await me.api.get(`${V2}/chat_list`)
  assert.equal(list.body.total, 3)
  const [first, second] = list.body.items
  assert.equal(first.peer.user_id, carol.id)
  assert.equal(first.unread_count, 1)
  assert.deepEqual(Object.keys(first.last_message).sort(), ['content', 'is_read', 'message_id', 'sender_id', 'timestamp'])
  assert.equal(first.last_message.content, 'from carol')
  assert.equal(first.last_message.is_read, false)
  assert.equal(second.peer.user_id, bob.id)
  assert.equal(second.unread_count, 2)

  // Replying moves bob's chat to the top; my own message is not unread for me.
  await me.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'hi bob' })
  const after = await me.api.get(`${V2}/chat_list`)
  assert.equal(after.body.items[0].peer.user_id, bob.id)
  assert.equal(after.body.items[0].unread_count, 0)
  assert.equal(after.body.items[0].last_message.sender_id, me.id)
  const bobsView = await bob.api.get(`${V2}/chat_list`)
  const withMe = bobsView.body.items.find((i: any) => i.peer.user_id === me.id)
  assert.equal(withMe.unread_count, 1)
})

test('chat_list pages', async () => {
  const me = await server.registerUser()
  for (let i = 0; i < 4; i++) {
    const other = await server.registerUser()
    await other.api.post(`${V2}/messages/send`, { receiver_id: me.id, content: `m${i}` })
  }
  const page = await me.api.get(`${V2}/chat_list`, { query: { per_page: 2, page: 3 } })
  assert.equal(page.body.total, 5)
  assert.equal(page.body.pages, 3)
  assert.equal(page.body.items.length, 1)
  assert.equal((await me.api.get(`${V2}/chat_list`, { query: { per_page: 101 } })).status, 400)
})
