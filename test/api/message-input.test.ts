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
  assert.deepEqual([sealed.body.data.is_encrypted, sealed.body.data.encrypted_content, sealed.body.data.encryption_key_id, sealed.body.data.content], [true, 'Y2lwaGVy', 'k1', ''])
  assert.equal((await sendRaw({ content: 'plain again' })).status, 200)
})
