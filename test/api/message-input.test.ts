/** What a message and a reaction may carry: one emoji per reaction, and encrypted sends that say so. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'

const server = await startTestServer()

test('a reaction is one emoji; text, two emoji and prototype names are 400, the map stays right', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const message = await send(alice, bob, 'react to me')
  const react = (emoji: unknown) => bob.api.post(`${V2}/messages/${message.message_id}/reaction`, { emoji })
  for (const emoji of ['ok', '👍👍', '__proto__', 'constructor', 'valueOf', '1', ' ']) {
    const res = await react(emoji)
    assert.equal(res.status, 400, `${emoji}: ${res.text}`)
    assert.equal(res.body.error.code, 'validation_error')
  }
  for (const emoji of ['👍🏽', '🇫🇷', '👩‍👩‍👧']) {
    const res = await react(emoji)
    assert.equal(res.status, 200, `${emoji}: ${res.text}`)
    assert.deepEqual(res.body.data, { [emoji]: 1 })
  }
  assert.deepEqual((await react(null)).body.data, {})
})

test('is_encrypted: true needs encrypted_content and encryption_key_id, and then no content', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const sendRaw = (body: Record<string, unknown>) => alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, ...body })
  for (const body of [
    { is_encrypted: true, content: 'plain' },
    { is_encrypted: true, encrypted_content: 'Y2lwaGVy' },
    { is_encrypted: true, encryption_key_id: 'k1' },
    { encrypted_content: 'Y2lwaGVy', encryption_key_id: 'k1' },
    { is_encrypted: false, content: 'x', encryption_key_id: 'k1' },
  ]) {
    const res = await sendRaw(body)
    assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`)
    assert.equal(res.body.error.code, 'validation_error')
  }
  const sealed = await sendRaw({ is_encrypted: true, encrypted_content: 'Y2lwaGVy', encryption_key_id: 'k1' })
  assert.equal(sealed.status, 200, sealed.text)
  assert.deepEqual(
    [sealed.body.data.is_encrypted, sealed.body.data.encrypted_content, sealed.body.data.encryption_key_id, sealed.body.data.content],
    [true, 'Y2lwaGVy', 'k1', ''],
  )
  assert.equal((await sendRaw({ content: 'plain again' })).status, 200)
})

test('a client_message_id reused for a different send is 409 conflict; the same send again answers the first', async () => {
  const [alice, bob, carol] = await registerUsers(server, 3)
  const body = { receiver_id: bob.id, content: 'once', client_message_id: 'k-409' }
  const first = await alice.api.post(`${V2}/messages/send`, body)
  assert.equal(first.status, 200, first.text)
  const again = await alice.api.post(`${V2}/messages/send`, body)
  assert.deepEqual(again.body.data, first.body.data, 'the same send is answered with the first message')
  for (const other of [
    { ...body, receiver_id: carol.id },
    { ...body, content: 'twice' },
    { ...body, chat_id: first.body.data.chat_id, receiver_id: undefined, content: 'twice' },
    { ...body, reply_to_id: first.body.data.message_id },
  ]) {
    const res = await alice.api.post(`${V2}/messages/send`, other)
    assert.equal(res.status, 409, `${JSON.stringify(other)}: ${res.text}`)
    assert.equal(res.body.error.code, 'conflict')
  }
  // by chat_id it is the same send: answered
  const byChat = await alice.api.post(`${V2}/messages/send`, {
    chat_id: first.body.data.chat_id,
    content: 'once',
    client_message_id: 'k-409',
  })
  assert.equal(byChat.body.data.message_id, first.body.data.message_id)
  // the Idempotency-Key header follows the same rule
  const keyed = await alice.api.post(
    `${V2}/messages/send`,
    { receiver_id: bob.id, content: 'header' },
    { headers: { 'idempotency-key': 'h-409' } },
  )
  assert.equal(keyed.status, 200)
  const clash = await alice.api.post(
    `${V2}/messages/send`,
    { receiver_id: bob.id, content: 'header, changed' },
    { headers: { 'idempotency-key': 'h-409' } },
  )
  assert.equal(clash.status, 409, clash.text)
  // Saved Messages (a send to oneself) retried is the same send too
  const note = { receiver_id: alice.id, content: 'note', client_message_id: 'self-1' }
  const saved = await alice.api.post(`${V2}/messages/send`, note)
  assert.equal(saved.status, 200, saved.text)
  assert.equal((await alice.api.post(`${V2}/messages/send`, note)).body.data.message_id, saved.body.data.message_id)
  // nothing extra reached bob's chat
  const history = await bob.api.get(`${V2}/chat/history`, { query: { chat_id: first.body.data.chat_id } })
  assert.deepEqual(history.body.items.map((m: { content: string }) => m.content).sort(), ['header', 'once'])
})

test('a scheduled send retried with other content under the same client id is 409; the same retry answers the pending one', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const due = new Date(Date.now() + 3_600_000).toISOString()
  const body = { receiver_id: bob.id, content: 'later', client_message_id: 's-409', scheduled_at: due }
  const first = await alice.api.post(`${V2}/messages/send`, body)
  assert.equal(first.status, 200, first.text)
  assert.deepEqual((await alice.api.post(`${V2}/messages/send`, body)).body.data, first.body.data)
  const res = await alice.api.post(`${V2}/messages/send`, { ...body, content: 'sooner' })
  assert.equal(res.status, 409, res.text)
  assert.equal(res.body.error.code, 'conflict')
})
