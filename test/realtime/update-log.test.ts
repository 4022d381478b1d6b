/**
 * A personal message.new is logged as a reference to the message (realtime/updates.ts): caught up
 * over GET V2/updates or `resume`, it is the message as it is now, on either send path.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { registerUsers, send, updates, V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const server = await startTestServer()

/** fields that change when the recipient's device receives or reads the message */
const stable = ({ delivered_at, is_read, read_at, ...rest }: Record<string, unknown>) => rest

test('caught up, message.new carries the same message the live frame did', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const socket = await TestSocket.connect(server.url, bob.token)
  // the first send opens the chat (general path), the second takes the SQLite hot path
  const first = await send(alice, bob, 'first')
  const second = await send(alice, bob, 'second', { reply_to_id: first.message_id })
  const live = [await socket.next('message.new'), await socket.next('message.new')]
  const logged = (await updates(bob)).items.filter((u) => u.type === 'message.new')
  assert.deepEqual(
    logged.map((u) => u.seq),
    live.map((f) => f.seq),
  )
  for (const [i, frame] of live.entries()) {
    assert.deepEqual(stable(logged[i].data.message), stable(frame.data.message))
  }
  assert.equal(logged[1].data.message.content, 'second')
  assert.equal(logged[1].data.message.reply_to_id, first.message_id)
  assert.equal(logged[1].data.message.message_id, second.message_id)
  await socket.close()
})

test('caught up, message.new is the message as it is now: edited, reacted to, read; then the events that led there', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  await send(alice, bob, 'opening')
  const m = await send(alice, bob, 'before the edit')
  const edit = await alice.api.post(`${V2}/messages/${m.message_id}/edit`, { content: 'after the edit' })
  assert.equal(edit.status, 200, edit.text)
  const react = await bob.api.post(`${V2}/messages/${m.message_id}/reaction`, { emoji: '👍' })
  assert.equal(react.status, 200, react.text)
  const read = await bob.api.post(`${V2}/messages/${m.message_id}/read`)
  assert.equal(read.status, 200, read.text)

  const items = (await updates(bob)).items
  const created = items.find((u) => u.type === 'message.new' && u.data.message.message_id === m.message_id)!
  assert.equal(created.data.message.content, 'after the edit')
  assert.equal(typeof created.data.message.edited_at, 'string')
  assert.deepEqual(created.data.message.reactions, { '👍': 1 })
  assert.equal(created.data.message.is_read, true)
  const later = items.filter((u) => u.seq > created.seq).map((u) => u.type)
  assert.ok(later.includes('message.edited') && later.includes('reaction.updated'), later.join(', '))
  // the sender's own devices catch up on the same message
  const mine = (await updates(alice)).items.find((u) => u.type === 'message.new' && u.data.message.message_id === m.message_id)!
  assert.equal(mine.data.message.content, 'after the edit')
})

test('caught up, a message deleted for everyone is new and empty, then deleted: its text is not kept in the log', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  await send(alice, bob, 'opening')
  const m = await send(alice, bob, 'a secret sent by mistake')
  const res = await alice.api.delete(`${V2}/messages/${m.message_id}`, { query: { for_all: 'true' } })
  assert.equal(res.status, 200, res.text)
  const socket = await TestSocket.connect(server.url, bob.token)
  socket.send({ type: 'resume', seq: 0 })
  const opening = await socket.next('message.new')
  const created = await socket.next('message.new')
  assert.ok(created.seq! > opening.seq!)
  assert.equal(created.data.message.message_id, m.message_id)
  assert.equal(created.data.message.content, '')
  const deleted = await socket.next('message.deleted')
  assert.ok(deleted.seq! > created.seq!)
  assert.deepEqual(deleted.data, { chat_id: m.chat_id, message_id: m.message_id, deleted_for_all: true })
  assert.ok(!JSON.stringify((await updates(bob)).items).includes('secret'))
  await socket.close()
})

test('caught up, a logged message that no longer exists at all replays as message.deleted, in its place', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  await send(alice, bob, 'opening')
  const m = await send(alice, bob, 'removed from the database behind the API')
  const after = await send(alice, bob, 'still here')
  // no endpoint removes a personal message row (only a group's deletion, whose log is its own):
  // the row goes as an operator's manual removal would take it
  await server.ctx.db.deleteFrom('messages').where('id', '=', m.message_id).execute()
  const items = (await updates(bob)).items.filter((u) => u.type.startsWith('message.'))
  const gone = items.findIndex((u) => u.data.message_id === m.message_id)
  assert.ok(gone > 0, JSON.stringify(items.map((u) => u.type)))
  assert.deepEqual(items[gone].type, 'message.deleted')
  assert.deepEqual(items[gone].data, { chat_id: null, message_id: m.message_id, deleted_for_all: true })
  assert.equal(items[gone - 1].data.message.content, 'opening')
  assert.equal(items[gone + 1].data.message.message_id, after.message_id)
})
