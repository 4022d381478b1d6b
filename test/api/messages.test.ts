import assert from 'node:assert/strict'
import test from 'node:test'
import { startTestServer } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const server = await startTestServer()
const V2 = '/api.v2/api'

const MESSAGE_KEYS = [
  'chat_id',
  'client_message_id',
  'content',
  'delivered_at',
  'edited_at',
  'emoji',
  'emoji_count',
  'emoji_file',
  'emoji_size',
  'emoji_url',
  'encrypted_content',
  'encryption_key_id',
  'external_message_id',
  'file_path',
  'file_type',
  'file_url',
  'forwarded_from',
  'is_encrypted',
  'is_from_external',
  'is_read',
  'message_id',
  'poll_id',
  'reactions',
  'read_at',
  'receiver_id',
  'reply_to_id',
  'sender_avatar_url',
  'sender_id',
  'sender_username',
  'timestamp',
  'topic_id',
]

test('send to receiver_id creates the chat and returns the V2 message', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const res = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'hello bob' })
  assert.equal(res.status, 200)
  const m = res.body.data
  assert.deepEqual(Object.keys(m).sort(), MESSAGE_KEYS)
  assert.equal(m.content, 'hello bob')
  assert.equal(m.sender_id, alice.id)
  assert.equal(m.receiver_id, bob.id)
  assert.equal(m.sender_username, alice.username)
  assert.equal(m.is_read, false)
  assert.deepEqual(m.reactions, {})
  assert.match(m.timestamp, /Z$/)
  const chat = await bob.api.post(`${V2}/chat/create`, { user_id: alice.id })
  assert.equal(chat.body.data.chat_id, m.chat_id)
  const byChat = await bob.api.post(`${V2}/messages/send`, { chat_id: m.chat_id, content: 'hi alice' })
  assert.equal(byChat.status, 200)
  assert.equal(byChat.body.data.receiver_id, alice.id)
})

test('empty content without emoji or encryption is a validation_error; over-long content too', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  for (const body of [
    { receiver_id: bob.id, content: '' },
    { receiver_id: bob.id, content: '   \n ' },
    { receiver_id: bob.id },
    { receiver_id: bob.id, content: 'x'.repeat(4097) },
    { content: 'nobody to send to' },
    { receiver_id: bob.id, content: 42 },
  ]) {
    const res = await alice.api.post(`${V2}/messages/send`, body)
    assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80))
    assert.equal(res.body.error.code, 'validation_error')
  }
  const emojiOnly = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, emoji: '🔥', emoji_count: 3 })
  assert.equal(emojiOnly.status, 200)
  assert.equal(emojiOnly.body.data.emoji, '🔥')
  assert.equal(emojiOnly.body.data.emoji_count, 3)
})

test('encryption fields are stored opaque and returned as sent', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const res = await alice.api.post(`${V2}/messages/send`, {
    receiver_id: bob.id,
    is_encrypted: true,
    encrypted_content: 'b64:AAECAwQ=',
    encryption_key_id: 'key-7',
  })
  assert.equal(res.status, 200)
  const history = await bob.api.get(`${V2}/chat/history`, { query: { chat_id: res.body.data.chat_id } })
  const [m] = history.body.items
  assert.equal(m.is_encrypted, true)
  assert.equal(m.encrypted_content, 'b64:AAECAwQ=')
  assert.equal(m.encryption_key_id, 'key-7')
})

test('a file path that was never uploaded is invalid_file', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const res = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'see file', file_path: 'ab/cd.png' })
  assert.equal(res.status, 400)
  assert.equal(res.body.error.code, 'invalid_file')
})

test('sending to an unknown user is 404; to a chat I am not in is 404 and writes nothing', async () => {
  const [alice, bob, eve] = [await server.registerUser(), await server.registerUser(), await server.registerUser()]
  assert.equal((await alice.api.post(`${V2}/messages/send`, { receiver_id: 88_888_888, content: 'x' })).status, 404)
  const sent = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'private' })
  const intrude = await eve.api.post(`${V2}/messages/send`, { chat_id: sent.body.data.chat_id, content: 'let me in' })
  assert.equal(intrude.status, 404)
  const history = await alice.api.get(`${V2}/chat/history`, { query: { chat_id: sent.body.data.chat_id } })
  assert.equal(history.body.items.length, 1)
})

test('reply_to_id must be a message of the same chat', async () => {
  const [alice, bob, carol] = [await server.registerUser(), await server.registerUser(), await server.registerUser()]
  const first = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'question?' })
  const reply = await bob.api.post(`${V2}/messages/send`, {
    receiver_id: alice.id,
    content: 'answer',
    reply_to_id: first.body.data.message_id,
  })
  assert.equal(reply.status, 200)
  assert.equal(reply.body.data.reply_to_id, first.body.data.message_id)
  const elsewhere = await alice.api.post(`${V2}/messages/send`, {
    receiver_id: carol.id,
    content: 'x',
    reply_to_id: first.body.data.message_id,
  })
  assert.equal(elsewhere.status, 400)
  assert.equal(elsewhere.body.error.code, 'validation_error')
})

test('a retried send with the same client_message_id or Idempotency-Key returns the first message', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const body = { receiver_id: bob.id, content: 'once', client_message_id: 'c-123' }
  const results = await Promise.all([1, 2, 3].map(() => alice.api.post(`${V2}/messages/send`, body)))
  assert.ok(results.every((r) => r.status === 200))
  assert.equal(new Set(results.map((r) => r.body.data.message_id)).size, 1)
  const viaHeader = { receiver_id: bob.id, content: 'twice?' }
  const h1 = await alice.api.post(`${V2}/messages/send`, viaHeader, { headers: { 'idempotency-key': 'k-9' } })
  const h2 = await alice.api.post(`${V2}/messages/send`, viaHeader, { headers: { 'idempotency-key': 'k-9' } })
  assert.equal(h1.body.data.message_id, h2.body.data.message_id)
  const history = await bob.api.get(`${V2}/chat/history`, { query: { chat_id: h1.body.data.chat_id } })
  assert.equal(history.body.items.length, 2)
  // The same client id from another sender is a different message.
  const other = await bob.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'mine', client_message_id: 'c-123' })
  assert.notEqual(other.body.data.message_id, results[0].body.data.message_id)
})

test('Saved Messages: sending to myself lands in the saved chat, already read', async () => {
  const me = await server.registerUser()
  const res = await me.api.post(`${V2}/messages/send`, { receiver_id: me.id, content: 'note to self' })
  assert.equal(res.status, 200)
  assert.equal(res.body.data.is_read, true)
  const list = await me.api.get(`${V2}/chat_list`)
  const saved = list.body.items.find((i: any) => i.is_saved)
  assert.equal(saved.chat_id, res.body.data.chat_id)
  assert.equal(saved.last_message.content, 'note to self')
  assert.equal(saved.unread_count, 0)
})

test('history: page 1 holds the newest, pages and keysets agree, only members may read', async () => {
  const [alice, bob, eve] = [await server.registerUser(), await server.registerUser(), await server.registerUser()]
  const ids: number[] = []
  for (let i = 1; i <= 25; i++) {
    const sender = i % 2 ? alice : bob
    const res = await sender.api.post(`${V2}/messages/send`, { receiver_id: sender === alice ? bob.id : alice.id, content: `m${i}` })
    ids.push(res.body.data.message_id)
  }
  const chatId = (await alice.api.post(`${V2}/chat/create`, { user_id: bob.id })).body.data.chat_id
  const page1 = await alice.api.get(`${V2}/chat/history`, { query: { chat_id: chatId } })
  assert.equal(page1.status, 200)
  assert.equal(page1.body.page, 1)
  assert.equal(page1.body.per_page, 20)
  assert.equal(page1.body.total, 25)
  assert.equal(page1.body.pages, 2)
  assert.deepEqual(
    page1.body.items.map((m: any) => m.content),
    Array.from({ length: 20 }, (_, i) => `m${25 - i}`),
  )
  const page2 = await alice.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, page: 2 } })
  assert.deepEqual(
    page2.body.items.map((m: any) => m.content),
    ['m5', 'm4', 'm3', 'm2', 'm1'],
  )
  const page9 = await alice.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, page: 9 } })
  assert.deepEqual(page9.body.items, [])

  const before = await alice.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, before_id: ids[10], limit: 3 } })
  assert.deepEqual(
    before.body.items.map((m: any) => m.content),
    ['m10', 'm9', 'm8'],
  )
  assert.equal(before.body.page, undefined)
  const after = await alice.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, after_id: ids[20], limit: 3 } })
  assert.deepEqual(
    after.body.items.map((m: any) => m.content),
    ['m24', 'm23', 'm22'],
  )
  const between = await alice.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, after_id: ids[0], before_id: ids[3] } })
  assert.deepEqual(
    between.body.items.map((m: any) => m.content),
    ['m3', 'm2'],
  )

  const outsider = await eve.api.get(`${V2}/chat/history`, { query: { chat_id: chatId } })
  assert.equal(outsider.status, 404)
  assert.equal(outsider.body.items, undefined)
  const foreignAnchor = await alice.api.get(`${V2}/chat/history`, {
    query: { chat_id: (await alice.api.post(`${V2}/chat/create`, { user_id: eve.id })).body.data.chat_id, before_id: ids[5] },
  })
  assert.equal(foreignAnchor.status, 404)
  for (const query of [{}, { chat_id: 'x' }, { chat_id: chatId, limit: 101 }, { chat_id: chatId, page: 0 }]) {
    assert.equal((await alice.api.get(`${V2}/chat/history`, { query })).status, 400, JSON.stringify(query))
  }
  assert.equal((await server.api.get(`${V2}/chat/history`, { query: { chat_id: chatId } })).status, 401)
})

test("every send is in both members' update logs, in order, with per-user seqs", async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const a = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'one' })
  await bob.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'two' })
  const bobs = await bob.api.get(`${V2}/updates`, { query: { since: 0 } })
  assert.equal(bobs.status, 200)
  // bob's reply reads alice's message first (a read receipt), then is new itself
  assert.deepEqual(
    bobs.body.data.updates.map((u: any) => [u.type, u.seq, u.data.message?.content ?? u.data.message_id]),
    [
      ['message.new', 1, 'one'],
      ['message.read', 2, a.body.data.message_id],
      ['message.new', 3, 'two'],
    ],
  )
  assert.equal(bobs.body.data.seq, 3)
  assert.deepEqual({ ...bobs.body.data.updates[0].data.message, is_read: false, read_at: null }, a.body.data)
  const alices = await alice.api.get(`${V2}/updates`, { query: { since: 0 } })
  assert.deepEqual(
    alices.body.data.updates.map((u: any) => [u.type, u.seq]),
    [
      ['message.new', 1],
      ['message.read', 2],
      ['message.new', 3],
    ],
  )
  assert.deepEqual(alices.body.data.updates[1].data, bobs.body.data.updates[1].data)
  assert.equal(alices.body.data.updates[1].data.reader_id, bob.id)
  const rest = await bob.api.get(`${V2}/updates`, { query: { since: 2 } })
  assert.deepEqual(
    rest.body.data.updates.map((u: any) => u.seq),
    [3],
  )
  const limited = await alice.api.get(`${V2}/updates`, { query: { since: 0, limit: 1 } })
  assert.equal(limited.body.data.updates.length, 1)
  assert.equal(limited.body.data.seq, 3)
  // and so alice's message reads as read, in history too
  const one = (await alice.api.get(`${V2}/chat/history`, { query: { chat_id: a.body.data.chat_id } })).body.items.find(
    (m: any) => m.message_id === a.body.data.message_id,
  )
  assert.deepEqual([one.is_read, one.read_at], [true, alices.body.data.updates[1].data.read_at])
  // a second message from bob reads nothing new: no second receipt
  await bob.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'three' })
  const after = await bob.api.get(`${V2}/updates`, { query: { since: 3 } })
  assert.deepEqual(
    after.body.data.updates.map((u: any) => [u.type, u.seq]),
    [['message.new', 4]],
  )
  const stranger = await server.registerUser()
  const none = await stranger.api.get(`${V2}/updates`)
  assert.deepEqual(none.body.data.updates, [])
  assert.equal(none.body.data.seq, 0)
  assert.equal((await server.api.get(`${V2}/updates`)).status, 401)
})

test('a reply by chat_id reads the chat: alice sees message.read, then the reply, and reads her messages as read', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const first = (await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'first' })).body.data
  const second = (await alice.api.post(`${V2}/messages/send`, { chat_id: first.chat_id, content: 'second' })).body.data
  const socket = await TestSocket.connect(server.url, alice.token)
  const reply = await bob.api.post(`${V2}/messages/send`, { chat_id: first.chat_id, content: 'got both' })
  assert.equal(reply.status, 200, reply.text)
  const frames = [await socket.next('message.read'), await socket.next('message.new')]
  assert.deepEqual(
    frames.map((f) => f.seq),
    [frames[0].seq, frames[0].seq! + 1],
    'the receipt first, then the reply',
  )
  assert.deepEqual(frames[0].data, {
    chat_id: first.chat_id,
    reader_id: bob.id,
    message_id: second.message_id,
    read_at: frames[0].data.read_at,
  })
  assert.equal(frames[1].data.message.content, 'got both')
  const history = (await alice.api.get(`${V2}/chat/history`, { query: { chat_id: first.chat_id } })).body.items
  assert.deepEqual(
    history.map((m: any) => [m.content, m.is_read]),
    [
      ['got both', false],
      ['second', true],
      ['first', true],
    ],
  )
  const list = (await alice.api.get(`${V2}/chat_list`)).body.items.find((i: any) => i.chat_id === first.chat_id)
  assert.equal(list.unread_count, 1, 'the reply is unread for alice')
  const bobs = (await bob.api.get(`${V2}/chat_list`)).body.items.find((i: any) => i.chat_id === first.chat_id)
  assert.equal(bobs.unread_count, 0, 'bob read what he replied to')
  await socket.close()
})

test('concurrent sends commit together, yet a failing one fails alone and duplicates collapse', async () => {
  const [alice, bob, carol] = [await server.registerUser(), await server.registerUser(), await server.registerUser()]
  const chatId = (await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'start' })).body.data.chat_id
  const foreign = (await carol.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'elsewhere' })).body.data.message_id
  // Sent at once, so they share commits: valid sends, bad replies and a retried client id, interleaved.
  const results = await Promise.all(
    Array.from({ length: 30 }, (_, i) => {
      if (i % 10 === 3) return alice.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `bad ${i}`, reply_to_id: foreign })
      if (i % 10 === 7) return alice.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'retried', client_message_id: 'same-id' })
      return alice.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `ok ${i}` })
    }),
  )
  const bad = results.filter((_, i) => i % 10 === 3)
  assert.ok(bad.every((r) => r.status === 400 && r.body.error.code === 'validation_error'))
  const retried = results.filter((_, i) => i % 10 === 7)
  assert.ok(retried.every((r) => r.status === 200))
  assert.equal(new Set(retried.map((r) => r.body.data.message_id)).size, 1, 'one message for one client id')
  const history = await alice.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 100 } })
  const contents = history.body.items.map((m: { content: string }) => m.content)
  assert.equal(contents.length, 1 + 24 + 1, 'start, 24 valid sends, one retried message')
  assert.ok(!contents.some((c: string) => c.startsWith('bad')), 'no failed send left anything behind')
  assert.equal(history.body.total, 26, 'seqs stay contiguous: failed sends took none')
})
