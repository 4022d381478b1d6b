/**
 * The Telegram-compatible Bot API: a user's message to a bot becomes an
 * update (commands only when allowed or defined), getUpdates with offsets and long polling,
 * sendMessage through the one write path, commands and webhook info, in Telegram's envelope.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { testRedisUrl } from '../harness/database.js'
import { captureLog } from '../harness/log-capture.js'
import { history, send, V2 } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'
import { sleep } from '../harness/wait.js'

const log = captureLog('info')
const server = await startTestServer({ log: log.logger })
const tokens: string[] = []

interface Bot {
  bot_id: number
  token: string
  username: string
}

async function registerBot(owner: TestUser, fields: Record<string, unknown> = {}): Promise<Bot> {
  const res = await owner.api.post('/api/bots/register', {
    name: 'Helper',
    username: `${uniqueName('b').slice(0, 24)}_bot`,
    allowed_commands: ['start'],
    ...fields,
  })
  assert.equal(res.status, 200, res.text)
  tokens.push(res.body.data.token)
  return res.body.data
}

async function call(
  token: string,
  method: string,
  params?: unknown,
  init: { headers?: Record<string, string>; raw?: BodyInit; http?: string } = {},
) {
  const res = await fetch(`${server.url}/bot${token}/${method}`, {
    method: init.http ?? 'POST',
    headers: init.raw !== undefined ? init.headers : { 'content-type': 'application/json', ...init.headers },
    body: init.raw ?? (params === undefined ? undefined : JSON.stringify(params)),
  })
  const text = await res.text()
  return { status: res.status, body: JSON.parse(text), type: res.headers.get('content-type') ?? '' }
}

async function ok(token: string, method: string, params?: unknown) {
  const res = await call(token, method, params)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.ok, true)
  return res.body.result
}

async function refused(token: string, method: string, params: unknown, status: number, description?: RegExp) {
  const res = await call(token, method, params)
  assert.equal(res.status, status, `${method} ${JSON.stringify(params)?.slice(0, 100)}: ${JSON.stringify(res.body)}`)
  assert.equal(res.body.ok, false)
  assert.equal(res.body.error_code, status)
  assert.equal(typeof res.body.description, 'string')
  if (description) assert.match(res.body.description, description)
  return res.body
}

/**
 * The pending updates once there are at least `count` (an update is recorded just after the send
 * is answered, so tests wait for it by long polling, as a bot does).
 */
async function pending(token: string, count: number, params: Record<string, unknown> = {}) {
  const deadline = Date.now() + 5000
  for (;;) {
    const updates = await ok(token, 'getUpdates', { ...params, timeout: 1 })
    if (updates.length >= count || Date.now() > deadline) return updates
  }
}

/** A user, a bot, and the user's first message to it (so the bot may answer). */
async function conversation(fields: Record<string, unknown> = {}) {
  const [owner, user] = [await server.registerUser(), await server.registerUser({ display_name: 'Ann' })]
  const bot = await registerBot(owner, fields)
  return { owner, user, bot }
}

const sendTo = (user: TestUser, bot: Bot, content: string) => send(user, { id: bot.bot_id } as TestUser, content)

test("a message a user sends the bot becomes an update in Telegram's shape; offset acknowledges it", async () => {
  const { user, bot } = await conversation()
  const message = await sendTo(user, bot, 'hello bot')
  const [update] = await pending(bot.token, 1)
  assert.equal(typeof update.update_id, 'number')
  assert.deepEqual(update.message, {
    message_id: message.message_id,
    from: { id: user.id, is_bot: false, first_name: 'Ann', username: user.username },
    chat: { id: user.id, type: 'private', first_name: 'Ann', username: user.username },
    date: Math.floor(Date.parse(message.timestamp) / 1000),
    text: 'hello bot',
  })
  // not acknowledged yet: still there
  assert.equal((await ok(bot.token, 'getUpdates', {})).length, 1)
  await sendTo(user, bot, 'second')
  const both = await pending(bot.token, 2, { offset: update.update_id })
  assert.deepEqual(
    both.map((u: any) => u.message.text),
    ['hello bot', 'second'],
  )
  assert.equal(both[1].update_id, update.update_id + 1)
  const rest = await ok(bot.token, 'getUpdates', { offset: both[1].update_id })
  assert.deepEqual(
    rest.map((u: any) => u.message.text),
    ['second'],
  )
  assert.deepEqual(await ok(bot.token, 'getUpdates', { offset: both[1].update_id + 1 }), [])
  // acknowledged updates are gone for good
  assert.deepEqual(await ok(bot.token, 'getUpdates', {}), [])
  const stored = await server.ctx.db.selectFrom('bot_updates').select('update_id').where('bot_id', '=', bot.bot_id).execute()
  assert.deepEqual(stored, [])
})

test('update ids grow per bot, each message makes exactly one update, and limit bounds an answer', async () => {
  const { user, bot } = await conversation()
  const other = await registerBot(await server.registerUser())
  await Promise.all(Array.from({ length: 12 }, (_, i) => sendTo(user, bot, `m${i}`)))
  await sendTo(user, other, 'to the other bot')
  const updates = await pending(bot.token, 12, { limit: 100 })
  assert.equal(updates.length, 12)
  const ids = updates.map((u: any) => u.update_id)
  assert.deepEqual(
    ids,
    Array.from({ length: 12 }, (_, i) => ids[0] + i),
  )
  assert.equal(new Set(updates.map((u: any) => u.message.message_id)).size, 12)
  assert.equal((await ok(bot.token, 'getUpdates', { limit: 5 })).length, 5)
  const theirs = await pending(other.token, 1)
  assert.deepEqual(
    theirs.map((u: any) => u.message.text),
    ['to the other bot'],
  )
  // a negative offset answers the newest ones
  assert.deepEqual((await ok(bot.token, 'getUpdates', { offset: -2 })).map((u: any) => u.message.text).length, 2)
})

test('commands: an allowed or defined one becomes an update with a bot_command entity; others are ignored', async () => {
  const { owner, user, bot } = await conversation({ allowed_commands: ['start'] })
  await owner.api.post(`/api/bots/${bot.bot_id}/command`, { command: 'help', description: 'Help' })
  await sendTo(user, bot, '/start')
  await sendTo(user, bot, '/unknown')
  await sendTo(user, bot, `/help@${bot.username.toUpperCase()} me`)
  await sendTo(user, bot, '/help@some_other_bot')
  await sendTo(user, bot, '/weather')
  await sendTo(user, bot, 'plain text after the ignored ones')
  const updates = await pending(bot.token, 3)
  assert.deepEqual(
    updates.map((u: any) => u.message.text),
    ['/start', `/help@${bot.username.toUpperCase()} me`, 'plain text after the ignored ones'],
  )
  assert.deepEqual(updates[0].message.entities, [{ type: 'bot_command', offset: 0, length: 6 }])
  assert.deepEqual(updates[1].message.entities, [{ type: 'bot_command', offset: 0, length: 6 + bot.username.length }])
  assert.equal(updates[2].message.entities, undefined)

  // the ignored command is still an ordinary message in the chat: only the bot does not get it
  const chatId = updates[0].message.message_id && (await send(user, { id: bot.bot_id } as TestUser, 'x')).chat_id
  assert.ok((await history(user, chatId)).some((m) => m.content === '/unknown'))

  // setMyCommands defines /weather: from now on it is an update
  await ok(bot.token, 'setMyCommands', { commands: [{ command: 'weather', description: 'Weather' }] })
  await sendTo(user, bot, '/weather')
  const next = await pending(bot.token, 2, { offset: updates[2].update_id + 1 })
  assert.deepEqual(
    next.map((u: any) => u.message.text),
    ['x', '/weather'],
  )
})

test('no update for messages that are not to a bot, nor for what the bot sends', async () => {
  const { user, bot } = await conversation()
  const friend = await server.registerUser()
  await send(user, friend, 'not for the bot')
  await sendTo(user, bot, 'for the bot')
  const [update] = await pending(bot.token, 1)
  await ok(bot.token, 'sendMessage', { chat_id: user.id, text: 'the bot speaks' })
  await sendTo(user, bot, 'control')
  const all = await pending(bot.token, 2)
  assert.deepEqual(
    all.map((u: any) => u.message.text),
    ['for the bot', 'control'],
  )
  assert.equal(all[0].update_id, update.update_id)
})

test('long polling answers at once when an update arrives, and after the timeout with none', async () => {
  const { user, bot } = await conversation()
  const started = Date.now()
  const polling = ok(bot.token, 'getUpdates', { timeout: 20 })
  await sleep(300)
  await sendTo(user, bot, 'wake up')
  const updates = await polling
  const took = Date.now() - started
  assert.deepEqual(
    updates.map((u: any) => u.message.text),
    ['wake up'],
  )
  assert.ok(took < 1500, `answered after ${took} ms`)

  const quiet = Date.now()
  assert.deepEqual(await ok(bot.token, 'getUpdates', { offset: updates[0].update_id + 1, timeout: 1 }), [])
  const waited = Date.now() - quiet
  assert.ok(waited >= 900 && waited < 3000, `waited ${waited} ms`)
})

test("a second getUpdates ends a waiting one with 409 Conflict, as Telegram's does", async () => {
  const { user, bot } = await conversation()
  const first = call(bot.token, 'getUpdates', { timeout: 20 })
  await sleep(300)
  const started = Date.now()
  assert.deepEqual(await ok(bot.token, 'getUpdates', { timeout: 0 }), [])
  const ended = await first
  assert.ok(Date.now() - started < 1500)
  assert.equal(ended.status, 409)
  assert.deepEqual(ended.body, {
    ok: false,
    error_code: 409,
    description: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
  })
  // control: the newer poll is the one that gets the update
  const second = ok(bot.token, 'getUpdates', { timeout: 20 })
  await sleep(200)
  await sendTo(user, bot, 'to the newer poll')
  assert.deepEqual(
    (await second).map((u: any) => u.message.text),
    ['to the newer poll'],
  )
})

test('a long poll on another instance is answered when the update is recorded (fan-out, or the recheck without Redis)', async () => {
  const second = await startTestServer({ database: server.database, env: { REDIS_PREFIX: server.ctx.config.redisPrefix } })
  try {
    const { user, bot } = await conversation()
    const started = Date.now()
    const polling = fetch(`${second.url}/bot${bot.token}/getUpdates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout: 20 }),
    }).then((res) => res.json())
    await sleep(300)
    await sendTo(user, bot, 'across instances')
    const answer = await polling
    const took = Date.now() - started
    assert.deepEqual(
      answer.result.map((u: any) => u.message.text),
      ['across instances'],
    )
    // with Redis the fan-out wakes it at once; without, the once-a-second recheck finds it
    const bound = testRedisUrl ? 1200 : 2500
    assert.ok(took < bound, `answered after ${took} ms (bound ${bound} ms)`)
  } finally {
    await second.close()
  }
})

test('a getUpdates on another instance ends the waiting one with 409 too (the fan-out tells it)', {
  skip: testRedisUrl ? false : 'needs Redis (TEST_REDIS_URL): without it instances share no fan-out',
}, async () => {
  const second = await startTestServer({ database: server.database, env: { REDIS_PREFIX: server.ctx.config.redisPrefix } })
  try {
    const { user, bot } = await conversation()
    const first = call(bot.token, 'getUpdates', { timeout: 20 })
    await sleep(300)
    const started = Date.now()
    const other = await fetch(`${second.url}/bot${bot.token}/getUpdates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout: 0 }),
    })
    assert.deepEqual((await other.json()).result, [])
    const ended = await first
    assert.ok(Date.now() - started < 1500, `ended after ${Date.now() - started} ms`)
    assert.equal(ended.status, 409)
    assert.match(ended.body.description, /terminated by other getUpdates request/)
    // control: the newer poll, on the second instance, keeps waiting and gets the update; a poll
    // started before it on the first instance does not end it
    const newer = fetch(`${second.url}/bot${bot.token}/getUpdates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout: 20 }),
    }).then((res) => res.json())
    await sleep(300)
    await sendTo(user, bot, 'to the newer poll, elsewhere')
    const answer = await newer
    assert.equal(answer.ok, true)
    assert.deepEqual(
      answer.result.map((u: any) => u.message.text),
      ['to the newer poll, elsewhere'],
    )
  } finally {
    await second.close()
  }
})

test('sendMessage writes through the one path: the user sees it from the bot, by history and the WebSocket', async () => {
  const { user, bot } = await conversation()
  const first = await sendTo(user, bot, 'hi')
  const socket = await (await import('../harness/socket.js')).TestSocket.connect(server.url, user.token)
  const sent = await ok(bot.token, 'sendMessage', { chat_id: user.id, text: 'Hello /start there' })
  assert.equal(sent.from.id, bot.bot_id)
  assert.equal(sent.from.is_bot, true)
  assert.equal(sent.from.username, bot.username)
  assert.deepEqual(sent.chat, { id: user.id, type: 'private', first_name: 'Ann', username: user.username })
  assert.equal(sent.text, 'Hello /start there')
  assert.deepEqual(sent.entities, [{ type: 'bot_command', offset: 6, length: 6 }])
  assert.equal(typeof sent.date, 'number')
  const frame = await socket.next('message.new')
  assert.equal(frame.data.message.message_id, sent.message_id)
  assert.equal(frame.data.message.sender_id, bot.bot_id)
  socket.close()
  const items = await history(user, first.chat_id)
  assert.equal(items[0].message_id, sent.message_id)
  assert.equal(items[0].content, 'Hello /start there')
  assert.equal(items[0].sender_id, bot.bot_id)
})

test('sendMessage: reply_parameters and reply_to_message_id reply; an inline keyboard is kept with the message', async () => {
  const { user, bot } = await conversation()
  const question = await sendTo(user, bot, 'what now?')
  const keyboard = {
    inline_keyboard: [
      [
        { text: 'Yes', callback_data: 'yes' },
        { text: 'Site', url: 'https://example.com' },
      ],
    ],
  }
  const sent = await ok(bot.token, 'sendMessage', {
    chat_id: user.id,
    text: 'Choose',
    reply_parameters: { message_id: question.message_id },
    reply_markup: keyboard,
  })
  assert.deepEqual(sent.reply_markup, keyboard)
  const stored = await server.ctx.db
    .selectFrom('bot_message_markup')
    .selectAll()
    .where('message_id', '=', sent.message_id)
    .executeTakeFirstOrThrow()
  assert.deepEqual(typeof stored.reply_markup === 'string' ? JSON.parse(stored.reply_markup) : stored.reply_markup, keyboard)
  assert.equal(sent.reply_to_message.message_id, question.message_id)
  assert.equal(sent.reply_to_message.text, 'what now?')
  assert.equal(sent.reply_to_message.from.id, user.id)
  assert.equal(sent.reply_to_message.chat.id, user.id)
  // the user answers the bot's message: the update names what it replies to
  await pending(bot.token, 1)
  const answer = await send(user, { id: bot.bot_id } as TestUser, 'yes', { reply_to_id: sent.message_id })
  const updates = await pending(bot.token, 2)
  assert.equal(updates[1].message.message_id, answer.message_id)
  assert.deepEqual(
    [updates[1].message.reply_to_message.message_id, updates[1].message.reply_to_message.text, updates[1].message.reply_to_message.from.id],
    [sent.message_id, 'Choose', bot.bot_id],
  )
  assert.equal(updates[0].message.reply_to_message, undefined)
  const legacy = await ok(bot.token, 'sendMessage', { chat_id: user.id, text: 'Again', reply_to_message_id: question.message_id })
  const items = await history(user, question.chat_id)
  assert.equal(items.find((m) => m.message_id === sent.message_id).reply_to_id, question.message_id)
  assert.equal(items.find((m) => m.message_id === legacy.message_id).reply_to_id, question.message_id)

  // a reply to a message of another chat is refused, unless allowed to send without it
  const elsewhere = await send(user, await server.registerUser(), 'elsewhere')
  await refused(
    bot.token,
    'sendMessage',
    { chat_id: user.id, text: 'x', reply_parameters: { message_id: elsewhere.message_id } },
    400,
    /message to be replied not found/,
  )
  const lenient = await ok(bot.token, 'sendMessage', {
    chat_id: user.id,
    text: 'anyway',
    reply_parameters: { message_id: elsewhere.message_id, allow_sending_without_reply: true },
  })
  assert.equal((await history(user, question.chat_id)).find((m) => m.message_id === lenient.message_id).reply_to_id, null)
})

test("sendMessage refuses bad input in Telegram's envelope and writes nothing", async () => {
  const { user, bot } = await conversation()
  const first = await sendTo(user, bot, 'hi')
  const stranger = await server.registerUser()
  const cases: [unknown, number, RegExp][] = [
    [{ text: 'no chat' }, 400, /chat_id is required/],
    [{ chat_id: user.id }, 400, /text is required/],
    [{ chat_id: user.id, text: '' }, 400, /message text is empty/],
    [{ chat_id: user.id, text: '   ' }, 400, /message text is empty/],
    [{ chat_id: user.id, text: 'x'.repeat(4097) }, 400, /message is too long/],
    [{ chat_id: user.id, text: { a: 1 } }, 400, /text must be a string/],
    [{ chat_id: 'abc', text: 'x' }, 400, /chat_id must be an integer/],
    [{ chat_id: 1.5, text: 'x' }, 400, /chat_id/],
    [{ chat_id: 0, text: 'x' }, 400, /chat not found/],
    [{ chat_id: 99_999_999, text: 'x' }, 400, /chat not found/],
    [{ chat_id: -99_999_999, text: 'x' }, 400, /chat not found/],
    [{ chat_id: bot.bot_id, text: 'x' }, 400, /chat not found/],
    [{ chat_id: stranger.id, text: 'x' }, 403, /can't initiate conversation/],
    [{ chat_id: user.id, text: 'x', reply_markup: '{bad json' }, 400, /reply_markup/],
    [
      { chat_id: user.id, text: 'x', reply_markup: { inline_keyboard: [[{ text: 'a', callback_data: 'x'.repeat(65) }]] } },
      400,
      /BUTTON_DATA_INVALID/,
    ],
    [
      { chat_id: user.id, text: 'x', reply_markup: { inline_keyboard: [[{ text: 'a', url: 'javascript:alert(1)' }]] } },
      400,
      /BUTTON_URL_INVALID/,
    ],
    [{ chat_id: user.id, text: 'x', reply_markup: { inline_keyboard: 'no' } }, 400, /inline_keyboard/],
    [{ chat_id: user.id, text: 'x', reply_markup: { inline_keyboard: [[{ callback_data: 'a' }]] } }, 400, /needs a text/],
    [{ chat_id: user.id, text: 'x', reply_parameters: { message_id: 'one' } }, 400, /reply_parameters/],
    [{ chat_id: user.id, text: 'x', reply_to_message_id: 99_999_999 }, 400, /replied not found/],
    [{ chat_id: user.id, text: 'a\u0000b' }, 400, /NUL/],
    [{ chat_id: user.id, text: 'a\ud800b' }, 400, /invalid Unicode/],
    [{ chat_id: user.id, text: 'x', reply_markup: { inline_keyboard: [[{ text: 'a\u0000', callback_data: 'a' }]] } }, 400, /NUL/],
  ]
  for (const [params, status, description] of cases) await refused(bot.token, 'sendMessage', params, status, description)
  const items = await history(user, first.chat_id)
  assert.deepEqual(
    items.map((m) => m.content),
    ['hi'],
  )
  // a group the bot is not in
  const group = (await user.api.post(`${V2}/groups/create`, { title: 'No bots here' })).body.data
  await refused(bot.token, 'sendMessage', { chat_id: -group.group_id, text: 'x' }, 400, /chat not found/)
  // the longest text is fine (positive control)
  await ok(bot.token, 'sendMessage', { chat_id: user.id, text: 'y'.repeat(4096) })
})

test('a bot added to a group posts there at chat_id = -group_id; the group is named as Telegram names one', async () => {
  const { user, bot } = await conversation()
  const group = (await user.api.post(`${V2}/groups/create`, { title: 'Bot friends' })).body.data
  await refused(bot.token, 'sendMessage', { chat_id: -group.group_id, text: 'not yet a member' }, 400, /chat not found/)
  const added = await user.api.post(`${V2}/groups/add-member`, { chat_id: group.group_id, user_id: bot.bot_id })
  assert.equal(added.status, 200, added.text)
  const sent = await ok(bot.token, 'sendMessage', { chat_id: -group.group_id, text: 'hello group' })
  assert.deepEqual(sent.chat, { id: -group.group_id, type: 'group', title: 'Bot friends' })
  const items = await history(user, group.group_id)
  assert.equal(items[0].message_id, sent.message_id)
  assert.equal(items[0].sender_id, bot.bot_id)
})

test('a user who blocked the bot gets nothing from it: 403 "bot was blocked by the user"', async () => {
  const { user, bot } = await conversation()
  await sendTo(user, bot, 'hi')
  await ok(bot.token, 'sendMessage', { chat_id: user.id, text: 'before' })
  assert.equal((await user.api.post(`${V2}/block`, { user_id: bot.bot_id })).status, 200)
  await refused(bot.token, 'sendMessage', { chat_id: user.id, text: 'after' }, 403, /blocked by the user/)
})

test('the envelope: a bad token is 401 Unauthorized, an unknown method 404 Not Found; method names ignore case', async () => {
  const { bot } = await conversation()
  const [id] = bot.token.split(':')
  for (const token of [
    '',
    'junk',
    `${id}:`,
    `${id}:${'A'.repeat(43)}`,
    `99999999:${bot.token.split(':')[1]}`,
    `${id}:${bot.token.split(':')[1]}x`,
    `0${bot.token}`,
    '__proto__',
  ]) {
    const res = await call(token, 'getMe', {})
    assert.ok([401, 404].includes(res.status), `${token}: ${res.status}`)
    assert.equal(res.body.ok, false)
    if (res.status === 401) assert.deepEqual(res.body, { ok: false, error_code: 401, description: 'Unauthorized' })
  }
  for (const method of ['getNothing', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'getme.', 'x'.repeat(300)]) {
    const res = await call(bot.token, method, {})
    assert.equal(res.status, 404, method)
    assert.deepEqual(res.body, { ok: false, error_code: 404, description: 'Not Found' })
  }
  for (const path of [`/bot${bot.token}`, `/bot${bot.token}/`, `/bot${bot.token}/getMe/extra`]) {
    const res = await fetch(`${server.url}${path}`, { method: 'POST' })
    assert.equal(res.status, 404, path)
    assert.equal((await res.json()).ok, false)
  }
  // what fails before the Bot API's routes (another HTTP method, a bad escape) is Telegram's envelope too
  const put = await call(bot.token, 'getMe', {}, { http: 'PUT' })
  assert.deepEqual([put.status, put.body], [404, { ok: false, error_code: 404, description: 'Not Found' }])
  const badEscape = await call(bot.token, '%ED%A0%80', {})
  assert.equal(badEscape.status, 400)
  assert.deepEqual([badEscape.body.ok, badEscape.body.error_code], [false, 400])
  assert.equal((await ok(bot.token, 'GETME', {})).id, bot.bot_id)
  assert.equal((await ok(bot.token, 'getme')).id, bot.bot_id)
  const viaGet = await call(bot.token, 'getMe', undefined, { http: 'GET', raw: undefined })
  assert.equal(viaGet.body.result.id, bot.bot_id)
  assert.match(viaGet.type, /application\/json/)
})

test('parameters come as JSON, urlencoded, multipart or the query string; malformed bodies are 400', async () => {
  const { user, bot } = await conversation()
  await sendTo(user, bot, 'hi')
  const form = await call(bot.token, 'sendMessage', undefined, {
    raw: new URLSearchParams({
      chat_id: String(user.id),
      text: 'by form',
      reply_markup: JSON.stringify({ inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] }),
    }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
  assert.equal(form.status, 200, JSON.stringify(form.body))
  assert.equal(form.body.result.text, 'by form')
  assert.deepEqual(form.body.result.reply_markup, { inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] })

  const multipart = new FormData()
  multipart.set('chat_id', String(user.id))
  multipart.set('text', 'by multipart')
  const mp = await call(bot.token, 'sendMessage', undefined, { raw: multipart })
  assert.equal(mp.status, 200, JSON.stringify(mp.body))
  assert.equal(mp.body.result.text, 'by multipart')

  const query = await fetch(`${server.url}/bot${bot.token}/sendMessage?chat_id=${user.id}&text=by%20query`)
  assert.equal((await query.json()).result.text, 'by query')

  const empty = await call(bot.token, 'getMe', undefined, { raw: '', headers: { 'content-type': 'application/json' } })
  assert.equal(empty.status, 200)
  for (const [raw, type] of [
    ['{', 'application/json'],
    ['[1,2]', 'application/json'],
    ['"text"', 'application/json'],
    ['<x/>', 'application/xml'],
    ['--x\r\nbroken', 'multipart/form-data; boundary=x'],
  ]) {
    const res = await call(bot.token, 'sendMessage', undefined, { raw, headers: { 'content-type': type } })
    assert.equal(res.status, 400, `${raw}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.ok, false)
    assert.match(res.body.description, /^Bad Request: /)
  }
  // a prototype name as a parameter is only a (missing) parameter
  const proto = await call(bot.token, 'sendMessage', undefined, {
    raw: '{"__proto__": {"text": "x"}, "chat_id": 1}',
    headers: { 'content-type': 'application/json' },
  })
  assert.equal(proto.status, 400)
  assert.match(proto.body.description, /text is required|chat not found/)
})

test('getUpdates refuses a bad limit, timeout or allowed_updates; allowed_updates filters the kinds', async () => {
  const { user, bot } = await conversation()
  await sendTo(user, bot, 'hi')
  await refused(bot.token, 'getUpdates', { limit: 0 }, 400, /limit/)
  await refused(bot.token, 'getUpdates', { limit: 101 }, 400, /limit/)
  await refused(bot.token, 'getUpdates', { limit: 'many' }, 400, /limit/)
  await refused(bot.token, 'getUpdates', { timeout: -1 }, 400, /timeout/)
  await refused(bot.token, 'getUpdates', { offset: 'x' }, 400, /offset/)
  await refused(bot.token, 'getUpdates', { allowed_updates: ['message', 'nonsense'] }, 400, /allowed_updates/)
  await refused(bot.token, 'getUpdates', { allowed_updates: 'message' }, 400, /allowed_updates/)
  assert.deepEqual(await ok(bot.token, 'getUpdates', { allowed_updates: ['callback_query'] }), [])
  // the choice is remembered, as Telegram's is
  assert.deepEqual(await ok(bot.token, 'getUpdates', {}), [])
  assert.equal((await pending(bot.token, 1, { allowed_updates: JSON.stringify(['message']) })).length, 1)
  assert.equal((await ok(bot.token, 'getUpdates', { allowed_updates: [] })).length, 1)
})

test('setMyCommands, getMyCommands, getWebhookInfo and deleteWebhook', async () => {
  const { user, bot } = await conversation()
  assert.deepEqual(await ok(bot.token, 'getMyCommands', {}), [])
  const commands = [
    { command: 'start', description: 'Start' },
    { command: 'help', description: 'Help' },
  ]
  assert.equal(await ok(bot.token, 'setMyCommands', { commands }), true)
  assert.deepEqual(await ok(bot.token, 'getMyCommands', {}), commands)
  assert.equal(await ok(bot.token, 'setMyCommands', { commands: JSON.stringify([commands[1]]) }), true)
  assert.deepEqual(await ok(bot.token, 'getMyCommands', {}), [commands[1]])
  for (const bad of [
    undefined,
    'x',
    [{ command: 'Bad', description: 'x' }],
    [{ command: 'ok', description: '' }],
    [{ command: 'a'.repeat(33), description: 'x' }],
    [commands[0], commands[0]],
    [null],
    [{ command: 'nul', description: 'a\u0000' }],
  ]) {
    await refused(bot.token, 'setMyCommands', bad === undefined ? {} : { commands: bad }, 400)
  }
  assert.deepEqual(await ok(bot.token, 'getMyCommands', {}), [commands[1]], 'refusals changed nothing')

  await sendTo(user, bot, 'pending')
  await pending(bot.token, 1)
  assert.deepEqual(await ok(bot.token, 'getWebhookInfo', {}), { url: '', has_custom_certificate: false, pending_update_count: 1 })
  assert.equal(await ok(bot.token, 'deleteWebhook', {}), true)
  assert.equal((await ok(bot.token, 'getWebhookInfo', {})).pending_update_count, 1)
  assert.equal(await ok(bot.token, 'deleteWebhook', { drop_pending_updates: true }), true)
  assert.equal((await ok(bot.token, 'getWebhookInfo', {})).pending_update_count, 0)
})

test('a bot whose account was deactivated is Unauthorized', async () => {
  const { bot } = await conversation()
  assert.equal((await call(bot.token, 'getMe', {})).status, 200)
  await server.ctx.db.updateTable('users').set({ is_active: 0 }).where('id', '=', bot.bot_id).execute()
  assert.equal((await call(bot.token, 'getMe', {})).status, 401)
})

test('no token reaches the log', async () => {
  const { user, bot } = await conversation()
  await sendTo(user, bot, 'hi')
  await call(bot.token, 'getUpdates', { timeout: 0 })
  await call(bot.token, 'nope', {})
  await fetch(`${server.url}/bot${bot.token}/sendMessage?chat_id=${user.id}&text=q`)
  const text = log.text()
  assert.ok(text.includes('/bot[redacted]/getUpdates'), 'the requests were logged')
  for (const token of tokens) assert.ok(!text.includes(token.split(':')[1]), 'a token secret is in the log')
})
