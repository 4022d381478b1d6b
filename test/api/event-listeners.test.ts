/**
 * In-process listeners (ctx.events, where bots, push and webhooks will hook in): they hear each
 * committed event once, with its typed payload and audience, only after the commit (the row is
 * there when they look), from the send fast path and the general path alike; a refused change
 * announces nothing; a throwing listener neither fails the request nor silences the others.
 */
import assert from 'node:assert/strict'
import test from 'node:test'
import type { CommittedEvent } from '../../src/events/bus.js'
import { assertError } from '../harness/assert.js'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { waitFor } from '../harness/wait.js'

const server = await startTestServer()

test('listeners hear committed events once, after the commit, from both send paths; a refused send announces nothing', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const heard: CommittedEvent[] = []
  /** whether the message each message.new names was already in the database when it was heard */
  const committed: Promise<boolean>[] = []
  const offNew = server.ctx.events.on('message.new', (event) => {
    heard.push(event)
    const id = event.payload.message.message_id!
    committed.push(server.ctx.db.selectFrom('messages').select('id').where('id', '=', id).executeTakeFirst().then(Boolean))
  })
  const offUpdated = server.ctx.events.on('chat.updated', (event) => void heard.push(event))
  assert.equal(server.ctx.events.listens('message.new'), true)

  const first = await send(alice, bob, 'one') // a new pair: the general path
  const second = await send(alice, bob, 'two') // an existing pair: the fast path on SQLite
  await waitFor(async () => (heard.length === 2 ? true : undefined), { message: 'two message.new heard' })
  assert.deepEqual(
    heard.map((e) => [e.name, (e.payload as { message: { content: string } }).message.content]),
    [
      ['message.new', 'one'],
      ['message.new', 'two'],
    ],
  )
  assert.deepEqual(
    heard.map((e) => e.to),
    [{ chatId: first.chat_id }, { chatId: second.chat_id }],
  )
  assert.deepEqual(await Promise.all(committed), [true, true], 'each message was committed before it was announced')

  // bob blocks alice: his own devices hear chat.updated (to him only); alice's send is then refused
  assert.equal((await bob.api.post(`${V2}/block`, { user_id: alice.id })).status, 200)
  await waitFor(async () => (heard.length === 3 ? true : undefined), { message: 'the block heard' })
  assert.deepEqual(heard[2], {
    name: 'chat.updated',
    payload: { chat_id: first.chat_id, is_blocked: true },
    to: { userIds: [bob.id] },
    at: heard[2].at,
  })
  assertError(await alice.api.post(`${V2}/messages/send`, { chat_id: first.chat_id, content: 'refused' }), 403, 'blocked')
  // control: the next committed change is heard, and nothing came before it
  assert.equal((await bob.api.post(`${V2}/unblock`, { user_id: alice.id })).status, 200)
  await waitFor(async () => (heard.length === 4 ? true : undefined), { message: 'the unblock heard' })
  assert.equal(heard[3].name, 'chat.updated', 'the refused send announced nothing')

  offNew()
  offUpdated()
  // message.new keeps the app's own listeners (bots, push); nothing else listens to chat.updated
  assert.equal(server.ctx.events.listens('chat.updated'), false)
  await send(alice, bob, 'after off')
  assert.equal(heard.length, 4, 'a removed listener hears nothing')
})

test('a throwing or rejecting listener fails neither the request nor the other listeners', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const heard: string[] = []
  const offs = [
    server.ctx.events.on('message.new', () => {
      throw new Error('listener bug')
    }),
    server.ctx.events.on('message.new', async () => {
      throw new Error('async listener bug')
    }),
    server.ctx.events.on('message.new', (event) => void heard.push(event.payload.message.content)),
  ]
  await send(alice, bob, 'first')
  await send(alice, bob, 'second')
  await waitFor(async () => (heard.length === 2 ? true : undefined), { message: 'the healthy listener heard both' })
  assert.deepEqual(heard, ['first', 'second'])
  for (const off of offs) off()
})
