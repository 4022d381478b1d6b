/**
 * Message and chat-list fields, value by value: the emoji fields of a send (returned message,
 * history, message.new and the update log; emoji_file must be a sticker of a pack), the
 * key sets of chat_list's personal and Saved Messages items and their Peer, and the richer
 * history shape's reply_to_content cut at 50 characters as a reader counts them (never half an
 * emoji).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { history, ISO, registerUsers, send, updates, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'
import { bytesOf, upload } from '../harness/files.js'

const server = await startTestServer()
const connect = (user: TestUser) => TestSocket.connect(server.url, user.token)
const users = (n: number, fields: { display_name?: string }[] = []) => registerUsers(server, n, fields)
const sorted = (object: object) => Object.keys(object).sort()

// ---------------------------------------------------------------- emoji fields

const EMOJI_FIELDS = ['emoji', 'emoji_file', 'emoji_url', 'emoji_size', 'emoji_count'] as const
const emojiOf = (message: any) => Object.fromEntries(EMOJI_FIELDS.map((k) => [k, message[k]]))

test('emoji fields round-trip exactly: send answer, history, message.new on both sides, update log', async () => {
  const [alice, bob] = await users(2)
  const [aliceSocket, bobSocket] = [await connect(alice), await connect(bob)]
  // two stickers of the free pack
  const fireFile = 'stickers/basics/grin.svg'
  const heartFile = 'stickers/basics/love.svg'
  const fire = { emoji: '🔥', emoji_file: fireFile, emoji_size: 128, emoji_count: 3 }
  const heart = { emoji: '❤️', emoji_file: heartFile, emoji_size: 1, emoji_count: 100 }

  // the first send opens the chat (general path), the second goes by chat_id (the SQLite hot path)
  const sentFire = await send(alice, bob, '', fire)
  const chatId = sentFire.chat_id as number
  const res = await alice.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'with text', ...heart })
  assert.equal(res.status, 200, res.text)
  const sentHeart = res.body.data
  const plain = await send(alice, bob, 'no emoji')

  const expected = new Map<number, Record<string, unknown>>([
    [sentFire.message_id, { ...fire, emoji_url: `/${fireFile}`, content: '' }],
    [sentHeart.message_id, { ...heart, emoji_url: `/${heartFile}`, content: 'with text' }],
    [plain.message_id, { emoji: null, emoji_file: null, emoji_url: null, emoji_size: null, emoji_count: null, content: 'no emoji' }],
  ])
  const check = (message: any, where: string) => {
    const want = expected.get(message.message_id)
    assert.ok(want, `${where}: unexpected message ${message.message_id}`)
    assert.deepEqual({ ...emojiOf(message), content: message.content }, want, `${where}: message ${message.message_id}`)
    assert.equal(message.chat_id, chatId, where)
  }

  for (const m of [sentFire, sentHeart, plain]) check(m, 'send answer')
  for (const user of [alice, bob]) {
    const items = await history(user, chatId)
    assert.deepEqual(
      items.map((m) => m.message_id),
      [plain.message_id, sentHeart.message_id, sentFire.message_id],
    )
    for (const m of items) check(m, `history of ${user === alice ? 'alice' : 'bob'}`)
    const rich = await history(user, chatId, { format: 'rich' })
    for (const m of rich) check({ ...m, message_id: m.id }, 'rich history')
  }
  for (const socket of [aliceSocket, bobSocket]) {
    const frames = [await socket.next('message.new'), await socket.next('message.new'), await socket.next('message.new')]
    assert.deepEqual(
      frames.map((f) => f.data.message.message_id),
      [sentFire.message_id, sentHeart.message_id, plain.message_id],
    )
    for (const f of frames) check(f.data.message, 'message.new')
  }
  for (const user of [alice, bob]) {
    const logged = (await updates(user)).items.filter((u) => u.type === 'message.new')
    assert.equal(logged.length, 3)
    for (const u of logged) check(u.data.message, 'update log')
  }
  // the returned message equals what history holds, emoji and all (delivered_at aside)
  const [, heartInHistory] = await history(bob, chatId)
  assert.deepEqual({ ...heartInHistory, delivered_at: null }, { ...sentHeart, delivered_at: null })
  assert.match(sentHeart.timestamp, ISO)
})

test('invalid emoji fields are 400 validation_error and nothing is sent', async () => {
  const [alice, bob] = await users(2)
  const baseline = await send(alice, bob, 'baseline')
  const chatId = baseline.chat_id as number
  const bobSocket = await connect(bob)
  const sticker = 'stickers/basics/wink.svg'
  const uploaded = (await upload(server, alice, bytesOf(500, 'sticker'), 'sticker.webp')).path as string
  const cases: [string, Record<string, unknown>][] = [
    ['empty emoji', { content: 'x', emoji: '' }],
    ['emoji over 64 characters', { content: 'x', emoji: 'e'.repeat(65) }],
    ['emoji not a string', { content: 'x', emoji: 5 }],
    ['emoji null', { content: 'x', emoji: null }],
    ['emoji_file over 255 characters', { emoji: '🔥', emoji_file: 'f'.repeat(256) }],
    ['emoji_file not a string', { emoji: '🔥', emoji_file: 7 }],
    ['emoji_size 0', { emoji: '🔥', emoji_size: 0 }],
    ['emoji_size 1025', { emoji: '🔥', emoji_size: 1025 }],
    ['emoji_size fractional', { emoji: '🔥', emoji_size: 1.5 }],
    ['emoji_size a numeric string (bodies are not coerced)', { emoji: '🔥', emoji_size: '64' }],
    ['emoji_count 0', { emoji: '🔥', emoji_count: 0 }],
    ['emoji_count 101', { emoji: '🔥', emoji_count: 101 }],
    ['emoji_count negative', { emoji: '🔥', emoji_count: -1 }],
    ['only emoji_file: nothing to send', { emoji_file: sticker }],
    ['only emoji_size and emoji_count: nothing to send', { emoji_size: 64, emoji_count: 2 }],
  ]
  for (const [what, fields] of cases) {
    const res = await alice.api.post(`${V2}/messages/send`, { chat_id: chatId, ...fields })
    assertError(res, 400, 'validation_error', what)
  }
  // anything but a sticker of a pack is invalid_file: an upload too (it would bypass the packs' premium gate)
  for (const emojiFile of [
    'stickers/fire.webp',
    'stickers/basics/nope.svg',
    'stickers/../basics/wink.svg',
    uploaded,
    'AAAAAAAAAAAAAAAAAAAAAA.webp',
    '../../etc/passwd',
    '',
    'f'.repeat(255),
  ]) {
    const res = await alice.api.post(`${V2}/messages/send`, { chat_id: chatId, emoji: '🔥', emoji_file: emojiFile })
    assertError(res, 400, 'invalid_file', `emoji_file ${JSON.stringify(emojiFile.slice(0, 30))}`)
  }
  // the limits themselves are accepted (so the refusals above are about the values)
  const edge = await send(alice, bob, '', { emoji: 'e'.repeat(64), emoji_file: sticker, emoji_size: 1024, emoji_count: 1 })
  assert.deepEqual(emojiOf(edge), {
    emoji: 'e'.repeat(64),
    emoji_file: sticker,
    emoji_url: `/${sticker}`,
    emoji_size: 1024,
    emoji_count: 1,
  })
  const frames = await bobSocket.drain('message.new', 300)
  assert.deepEqual(
    frames.map((f) => f.data.message.message_id),
    [edge.message_id],
    'only the valid send reached bob',
  )
  assert.deepEqual(
    (await history(bob, chatId)).map((m) => m.message_id),
    [edge.message_id, baseline.message_id],
  )
})

// ---------------------------------------------------------------- chat_list shapes

const PEER_KEYS = [
  'avatar_url',
  'bot_webapp_url',
  'display_name',
  'is_bot',
  'is_online',
  'is_premium',
  'last_seen',
  'status_emoji',
  'user_id',
  'username',
]

test('chat_list: personal and Saved Messages items have exactly the documented keys, and their Peer the Peer keys', async () => {
  const [alice, bob] = await users(2, [{ display_name: 'Alice Shape' }, { display_name: 'Bob Shape' }])
  const m = await send(alice, bob, 'shape check')
  const res = await alice.api.get(`${V2}/chat_list`, { query: { per_page: 100 } })
  assert.equal(res.status, 200, res.text)
  const items = res.body.items as any[]
  assert.equal(items.length, 2, 'the chat with bob and Saved Messages')

  const personal = items.find((i) => i.chat_id === m.chat_id)
  assert.ok(personal, 'the personal chat is listed')
  assert.deepEqual(sorted(personal), ['chat_id', 'chat_type', 'is_saved', 'last_message', 'peer', 'unread_count'])
  assert.deepEqual(sorted(personal.peer), PEER_KEYS)
  assert.deepEqual(sorted(personal.last_message), ['content', 'is_read', 'message_id', 'sender_id', 'timestamp'])
  assert.equal(personal.chat_type, 'personal')
  assert.equal(personal.is_saved, false)
  assert.equal(personal.unread_count, 0, 'my own message is not unread for me')
  assert.deepEqual(
    { user_id: personal.peer.user_id, username: personal.peer.username, display_name: personal.peer.display_name },
    { user_id: bob.id, username: bob.username, display_name: 'Bob Shape' },
  )
  assert.deepEqual(
    {
      avatar_url: personal.peer.avatar_url,
      is_bot: personal.peer.is_bot,
      is_premium: personal.peer.is_premium,
      bot_webapp_url: personal.peer.bot_webapp_url,
      status_emoji: personal.peer.status_emoji,
    },
    { avatar_url: null, is_bot: false, is_premium: false, bot_webapp_url: null, status_emoji: '' },
  )
  assert.deepEqual(personal.last_message, {
    message_id: m.message_id,
    content: 'shape check',
    sender_id: alice.id,
    timestamp: m.timestamp,
    is_read: false,
  })

  // bob's item names alice
  const bobs = (await bob.api.get(`${V2}/chat_list`, { query: { per_page: 100 } })).body.items.find((i: any) => i.chat_id === m.chat_id)
  assert.deepEqual(
    { user_id: bobs.peer.user_id, username: bobs.peer.username, display_name: bobs.peer.display_name },
    { user_id: alice.id, username: alice.username, display_name: 'Alice Shape' },
  )
  assert.equal(bobs.unread_count, 1)

  const saved = items.find((i) => i.is_saved === true)
  assert.ok(saved, 'Saved Messages is listed')
  assert.deepEqual(sorted(saved), ['chat_id', 'chat_type', 'is_saved', 'last_message', 'peer', 'unread_count'])
  assert.deepEqual(sorted(saved.peer), PEER_KEYS)
  assert.equal(saved.chat_type, 'personal')
  assert.equal(saved.unread_count, 0)
  assert.equal(saved.last_message, null)
  assert.deepEqual(
    {
      user_id: saved.peer.user_id,
      username: saved.peer.username,
      display_name: saved.peer.display_name,
      is_online: saved.peer.is_online,
      last_seen: saved.peer.last_seen,
    },
    { user_id: alice.id, username: 'saved_messages', display_name: 'Saved Messages', is_online: false, last_seen: null },
  )
})

// ---------------------------------------------------------------- rich reply_to_content

test('rich history: reply_to_content is the first 50 characters (code points) of the original, never half a surrogate pair', async () => {
  const [alice, bob] = await users(2)
  const astral = `${'a'.repeat(49)}😀😀😀`
  const allEmoji = '😀'.repeat(60)
  const ascii = 'b'.repeat(60)
  const o1 = await send(alice, bob, astral)
  const o2 = await send(alice, bob, allEmoji)
  const o3 = await send(alice, bob, ascii)
  const r1 = await send(bob, alice, 'r1', { reply_to_id: o1.message_id })
  const r2 = await send(bob, alice, 'r2', { reply_to_id: o2.message_id })
  const r3 = await send(bob, alice, 'r3', { reply_to_id: o3.message_id })

  const res = await bob.api.get(`${V2}/chat/history`, { query: { chat_id: o1.chat_id, format: 'rich' } })
  assert.equal(res.status, 200, res.text)
  const byId = new Map((res.body.items as any[]).map((m) => [m.id, m]))
  assert.deepEqual(
    [r1, r2, r3].map((r) => byId.get(r.message_id).reply_to_content),
    [`${'a'.repeat(49)}😀`, '😀'.repeat(50), 'b'.repeat(50)],
  )
  // no lone surrogate on the wire either
  assert.equal(/\\ud83d(?!\\ude00)/i.test(res.text), false, 'the raw JSON holds no lone high surrogate')
  assert.equal(res.text.includes('\uFFFD'), false, 'nor a replacement character where one was mangled')
  assert.equal(byId.get(o1.message_id).reply_to_content, null)
})
