/**
 * The WebSocket protocol's description (/asyncapi.json): it validates as AsyncAPI, names every
 * event, and every frame a real conversation produces matches the schema it documents.
 */
import assert from 'node:assert/strict'
import test from 'node:test'
import { Parser } from '@asyncapi/parser'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { EVENTS } from '../../src/events/map.js'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { TestSocket, type Frame } from '../harness/socket.js'

const server = await startTestServer()

async function fetchDocument() {
  const res = await server.api.get('/asyncapi.json')
  assert.equal(res.status, 200, res.text)
  assert.match(res.headers.get('content-type') ?? '', /application\/json/)
  return res.body
}

test('/asyncapi.json is a valid AsyncAPI 3 document (@asyncapi/parser) naming every event and the gateway frames', async () => {
  const document = await fetchDocument()
  const { document: parsed, diagnostics } = await new Parser().parse(JSON.stringify(document))
  const errors = diagnostics.filter((d) => d.severity === 0).map((d) => `${d.path.join('.')}: ${d.message}`)
  assert.deepEqual(errors, [])
  assert.ok(parsed, 'the parser returned a document')
  assert.equal(parsed.version(), '3.0.0')
  const names = parsed
    .messages()
    .all()
    .map((m) => m.name())
  for (const event of Object.keys(EVENTS)) assert.ok(names.includes(event), `${event} is documented`)
  for (const frame of ['ready', 'reset', 'error', 'pong', 'resume', 'ping', 'ack', 'send', 'edit', 'delete', 'react', 'read'])
    assert.ok(names.includes(frame), `${frame} is documented`)
  assert.equal(parsed.channels().all()[0].address(), '/api.v2/api/ws')
})

test('every frame of a real conversation matches the schema the document gives its type', async () => {
  const document = await fetchDocument()
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats.default(ajv)
  const schemaOf = (type: string) => {
    const message = document.components.messages[type]
    assert.ok(message, `the document describes ${type}`)
    return message.payload
  }
  const check = (frame: Frame, who: string) => {
    const validate = ajv.compile(schemaOf(frame.type))
    assert.ok(validate(frame), `${who}'s ${frame.type} frame ${JSON.stringify(frame)}: ${ajv.errorsText(validate.errors)}`)
  }

  const [alice, bob] = await registerUsers(server, 2)
  const aliceSocket = await TestSocket.connect(server.url, alice.token)
  let bobSocket = await TestSocket.connect(server.url, bob.token)

  // a personal chat: message.new, message.read, reaction.updated, message.edited, message.deleted, typing
  const first = await send(alice, bob, 'hello')
  await bobSocket.next('message.new')
  assert.equal((await bob.api.post(`${V2}/messages/${first.message_id}/read`)).status, 200)
  await aliceSocket.next('message.read')
  assert.equal((await bob.api.post(`${V2}/messages/${first.message_id}/reaction`, { emoji: '👍' })).status, 200)
  await aliceSocket.next('reaction.updated')
  assert.equal((await alice.api.post(`${V2}/messages/${first.message_id}/edit`, { content: 'hello, edited' })).status, 200)
  await bobSocket.next('message.edited')
  const second = await send(alice, bob, 'to delete', { reply_to_id: first.message_id })
  assert.equal((await alice.api.delete(`${V2}/messages/${second.message_id}`, { query: { for_all: 'true' } })).status, 200)
  await bobSocket.next('message.deleted')
  // it was the chat's last message: the chat's last message moves back
  assert.equal((await aliceSocket.next('chat.updated')).data.last_message_id, first.message_id)
  assert.equal((await bob.api.post(`${V2}/chat/typing`, { chat_id: first.chat_id, is_typing: true })).status, 200)
  await aliceSocket.next('typing')
  // blocking tells my own devices (chat.updated is_blocked)
  assert.equal((await alice.api.post(`${V2}/block`, { user_id: bob.id })).status, 200)
  assert.equal((await aliceSocket.next('chat.updated')).data.is_blocked, true)
  assert.equal((await alice.api.post(`${V2}/unblock`, { user_id: bob.id })).status, 200)
  assert.equal((await aliceSocket.next('chat.updated')).data.is_blocked, false)
  // presence: bob's last socket closes, then a new one opens
  await bobSocket.close()
  assert.equal((await aliceSocket.next('presence')).data.is_online, false)
  bobSocket = await TestSocket.connect(server.url, bob.token)
  assert.equal((await aliceSocket.next('presence')).data.is_online, true)

  // a group: member.joined, chat.updated, a group message, member.left
  const group = await alice.api.post(`${V2}/groups/create`, { title: 'Protocol', member_ids: [bob.id] })
  assert.equal(group.status, 200, group.text)
  const groupId = group.body.data.group_id
  await bobSocket.next('member.joined')
  assert.equal((await alice.api.post(`${V2}/groups/set-title`, { chat_id: groupId, title: 'Protocol 2' })).status, 200)
  await bobSocket.next('chat.updated')
  assert.equal((await alice.api.post(`${V2}/messages/send`, { chat_id: groupId, content: 'to the group' })).status, 200)
  assert.equal((await bobSocket.next('message.new')).chat_id, groupId)
  assert.equal((await bob.api.post(`${V2}/groups/leave`, { chat_id: groupId })).status, 200)
  await aliceSocket.next('member.left')

  // requests over the socket: an ack, and a refusal by id
  const ack = await aliceSocket.request('send', { chat_id: first.chat_id, content: 'over the socket' })
  assert.equal(ack.type, 'ack')
  await bobSocket.next('message.new')
  const refused = await aliceSocket.request('edit', { message_id: first.message_id, content: ' ' })
  assert.equal(refused.error?.code, 'validation_error')

  // the gateway's own frames
  bobSocket.send({ type: 'ping' })
  await bobSocket.next('pong')
  bobSocket.send({ type: 'no-such-frame' })
  await bobSocket.next('error')

  const frames = [...aliceSocket.received.map((f) => [f, 'alice'] as const), ...bobSocket.received.map((f) => [f, 'bob'] as const)]
  for (const [frame, who] of frames) check(frame, who)
  const seen = new Set(frames.map(([frame]) => frame.type))
  for (const type of [
    'ready',
    'message.new',
    'message.read',
    'reaction.updated',
    'message.edited',
    'message.deleted',
    'typing',
    'chat.updated',
    'presence',
    'member.joined',
    'member.left',
    'pong',
    'error',
    'ack',
  ]) {
    assert.ok(seen.has(type), `a ${type} frame was checked`)
  }

  // the schemas are not vacuous: a message.new whose message lacks its id, or a read with a bad time, fails them
  const newFrame = frames.find(([frame]) => frame.type === 'message.new')![0]
  const broken = structuredClone(newFrame)
  delete broken.data.message.chat_id
  assert.equal(ajv.compile(schemaOf('message.new'))(broken), false)
  const readFrame = structuredClone(frames.find(([frame]) => frame.type === 'message.read')![0])
  readFrame.data.read_at = 'yesterday'
  assert.equal(ajv.compile(schemaOf('message.read'))(readFrame), false)
})
