/**
 * The rest of the bot platform: bots in groups, inline keyboard callbacks
 * (POST messages/{id}/callback, answerCallbackQuery), editMessageText, deleteMessage,
 * sendChatAction, sendPhoto/sendDocument, getChat, getFile and downloads, bridged messages
 * (external_message_id), the shared receive endpoint POST /api/bots/webhook, and bad input.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { history, send, updates, V2 } from '../harness/messaging.js'
import { png } from '../harness/media.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'
import { TestSocket, assertDelivered } from '../harness/socket.js'

const server = await startTestServer()

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
  return res.body.data
}

async function call(token: string, method: string, params?: unknown, body?: BodyInit) {
  const res = await fetch(`${server.url}/bot${token}/${method}`, {
    method: 'POST',
    headers: body !== undefined ? {} : { 'content-type': 'application/json' },
    body: body ?? (params === undefined ? undefined : JSON.stringify(params)),
  })
  return { status: res.status, body: JSON.parse(await res.text()) }
}

async function ok(token: string, method: string, params?: unknown, body?: BodyInit) {
  const res = await call(token, method, params, body)
  assert.equal(res.status, 200, `${method}: ${JSON.stringify(res.body)}`)
  assert.equal(res.body.ok, true)
  return res.body.result
}

async function refused(token: string, method: string, params: unknown, status: number, description?: RegExp, body?: BodyInit) {
  const res = await call(token, method, params, body)
  assert.equal(res.status, status, `${method} ${JSON.stringify(params)?.slice(0, 120)}: ${JSON.stringify(res.body)}`)
  assert.equal(res.body.ok, false)
  assert.equal(res.body.error_code, status)
  if (description) assert.match(res.body.description, description)
  return res.body
}

/** The pending updates once there are at least `count`, acknowledging none. */
async function pending(token: string, count: number) {
  const deadline = Date.now() + 5000
  for (;;) {
    const got = await ok(token, 'getUpdates', { timeout: 1 })
    if (got.length >= count || Date.now() > deadline) return got
  }
}

/** Acknowledges everything pending. */
async function drain(token: string) {
  const got = await ok(token, 'getUpdates', {})
  if (got.length) await ok(token, 'getUpdates', { offset: got[got.length - 1].update_id + 1 })
}

async function conversation(fields: Record<string, unknown> = {}) {
  const [owner, user] = [await server.registerUser(), await server.registerUser({ display_name: 'Ann' })]
  const bot = await registerBot(owner, fields)
  const first = await send(user, { id: bot.bot_id } as TestUser, 'hi')
  await pending(bot.token, 1)
  await drain(bot.token)
  return { owner, user, bot, chatId: first.chat_id as number }
}

async function groupWith(user: TestUser, bot: Bot, title = 'Team') {
  const group = (await user.api.post(`${V2}/groups/create`, { title })).body.data
  const added = await user.api.post(`${V2}/groups/add-member`, { chat_id: group.group_id, user_id: bot.bot_id })
  assert.equal(added.status, 200, added.text)
  return group.group_id as number
}

const groupSend = async (user: TestUser, chatId: number, content: string, extra: Record<string, unknown> = {}) => {
  const res = await user.api.post(`${V2}/messages/send`, { chat_id: chatId, content, ...extra })
  assert.equal(res.status, 200, res.text)
  return res.body.data
}

test('groups: a bot member gets its commands (/help, /help@it) and replies to its messages; other text and unknown commands are ignored', async () => {
  const { owner, user, bot } = await conversation()
  await owner.api.post(`/api/bots/${bot.bot_id}/command`, { command: 'help', description: 'Help' })
  const other = await registerBot(owner)
  const groupId = await groupWith(user, bot, 'Bots and people')
  await user.api.post(`${V2}/groups/add-member`, { chat_id: groupId, user_id: other.bot_id })
  const botPost = await ok(bot.token, 'sendMessage', { chat_id: -groupId, text: 'I am here' })

  await groupSend(user, groupId, 'plain chatter')
  await groupSend(user, groupId, '/unknown')
  await groupSend(user, groupId, `/help@${other.username}`)
  await groupSend(user, groupId, '/help')
  await groupSend(user, groupId, `/help@${bot.username} now`)
  await groupSend(user, groupId, 'answering you', { reply_to_id: botPost.message_id })
  const got = await pending(bot.token, 3)
  assert.deepEqual(
    got.map((u: any) => u.message.text),
    ['/help', `/help@${bot.username} now`, 'answering you'],
  )
  assert.deepEqual(got[0].message.chat, { id: -groupId, type: 'group', title: 'Bots and people' })
  assert.equal(got[0].message.from.id, user.id)
  assert.equal(got[2].message.reply_to_message.message_id, botPost.message_id)
  // the other bot defines no /help: it gets nothing, though addressed by name
  assert.deepEqual(await ok(other.token, 'getUpdates', {}), [])
  // the ignored ones are still ordinary messages of the group
  assert.ok((await history(user, groupId)).some((m) => m.content === '/unknown'))
})

test('callback queries: a user presses a button, the bot gets callback_query, answers, and the answer reaches the user', async () => {
  const { user, bot, chatId } = await conversation()
  const keyboard = {
    inline_keyboard: [
      [
        { text: 'Yes', callback_data: 'vote:yes' },
        { text: 'Site', url: 'https://example.org' },
      ],
    ],
  }
  const sent = await ok(bot.token, 'sendMessage', { chat_id: user.id, text: 'Vote?', reply_markup: keyboard })
  const shown = await user.api.get(`${V2}/messages/${sent.message_id}/buttons`)
  assert.equal(shown.status, 200, shown.text)
  assert.deepEqual(shown.body.data, { message_id: sent.message_id, bot_id: bot.bot_id, ...keyboard })

  // a button that is not there, and a stranger, are refused; nothing reaches the bot
  const wrong = await user.api.post(`${V2}/messages/${sent.message_id}/callback`, { data: 'vote:no' })
  assert.equal(wrong.status, 400, wrong.text)
  const stranger = await server.registerUser()
  assert.equal((await stranger.api.post(`${V2}/messages/${sent.message_id}/callback`, { data: 'vote:yes' })).status, 404)
  assert.deepEqual(await ok(bot.token, 'getUpdates', {}), [])

  const pressed = await user.api.post(`${V2}/messages/${sent.message_id}/callback`, { data: 'vote:yes' })
  assert.equal(pressed.status, 200, pressed.text)
  const [update] = await pending(bot.token, 1)
  const query = update.callback_query
  assert.equal(query.id, pressed.body.data.callback_query_id)
  assert.equal(query.data, 'vote:yes')
  assert.deepEqual(query.from, { id: user.id, is_bot: false, first_name: 'Ann', username: user.username })
  assert.equal(query.message.message_id, sent.message_id)
  assert.deepEqual(query.message.chat, { id: user.id, type: 'private', first_name: 'Ann', username: user.username })
  assert.deepEqual(query.message.reply_markup, keyboard)
  assert.equal(typeof query.chat_instance, 'string')

  assert.equal(await ok(bot.token, 'answerCallbackQuery', { callback_query_id: query.id, text: 'Counted!', show_alert: true }), true)
  const answer = (await updates(user)).items.find((u) => u.type === 'bot.callback_answer')
  assert.deepEqual(answer?.data, {
    callback_query_id: query.id,
    bot_id: bot.bot_id,
    chat_id: chatId,
    message_id: sent.message_id,
    text: 'Counted!',
    show_alert: true,
    url: null,
  })
  // once only; an unknown id, or another bot's, is refused alike
  await refused(bot.token, 'answerCallbackQuery', { callback_query_id: query.id }, 400, /query ID is invalid/)
  await refused(bot.token, 'answerCallbackQuery', { callback_query_id: '12345' }, 400, /query ID is invalid/)
  await refused(bot.token, 'answerCallbackQuery', {}, 400, /callback_query_id is required/)
})

test("editMessageText edits the bot's own message (and its keyboard); others' messages and no-op edits are refused", async () => {
  const { user, bot, chatId } = await conversation()
  const keyboard = { inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] }
  const sent = await ok(bot.token, 'sendMessage', { chat_id: user.id, text: 'draft', reply_markup: keyboard })
  const edited = await ok(bot.token, 'editMessageText', {
    chat_id: user.id,
    message_id: sent.message_id,
    text: 'final',
    reply_markup: keyboard,
  })
  assert.equal(edited.text, 'final')
  assert.equal(typeof edited.edit_date, 'number')
  assert.deepEqual(edited.reply_markup, keyboard)
  const mine = (await history(user, chatId)).find((m) => m.message_id === sent.message_id)
  assert.equal(mine.content, 'final')
  assert.notEqual(mine.edited_at, null)
  await refused(
    bot.token,
    'editMessageText',
    { chat_id: user.id, message_id: sent.message_id, text: 'final', reply_markup: keyboard },
    400,
    /not modified/,
  )
  // the same text without the keyboard takes the keyboard away
  const bare = await ok(bot.token, 'editMessageText', { chat_id: user.id, message_id: sent.message_id, text: 'final' })
  assert.equal(bare.reply_markup, undefined)
  assert.equal((await user.api.get(`${V2}/messages/${sent.message_id}/buttons`)).body.data.inline_keyboard, null)

  const theirs = (await history(user, chatId)).find((m) => m.sender_id === user.id)
  await refused(bot.token, 'editMessageText', { chat_id: user.id, message_id: theirs.message_id, text: 'hijack' }, 400, /can't be edited/)
  await refused(bot.token, 'editMessageText', { chat_id: user.id, message_id: 99_999_999, text: 'x' }, 400, /not found/)
  await refused(bot.token, 'editMessageText', { chat_id: user.id, message_id: sent.message_id, text: 'z'.repeat(4097) }, 400, /too long/)
  await refused(bot.token, 'editMessageText', { chat_id: user.id, message_id: 'one', text: 'x' }, 400, /message_id must be an integer/)
  assert.equal((await history(user, chatId)).find((m) => m.message_id === theirs.message_id).content, 'hi')
})

test("deleteMessage deletes the bot's own message for everyone; a user's message in a personal chat cannot be", async () => {
  const { user, bot, chatId } = await conversation()
  const sent = await ok(bot.token, 'sendMessage', { chat_id: user.id, text: 'oops' })
  const theirs = (await history(user, chatId)).find((m) => m.sender_id === user.id)
  await refused(bot.token, 'deleteMessage', { chat_id: user.id, message_id: theirs.message_id }, 400, /can't be deleted/)
  assert.equal(await ok(bot.token, 'deleteMessage', { chat_id: user.id, message_id: sent.message_id }), true)
  const left = await history(user, chatId)
  assert.ok(!left.some((m) => m.message_id === sent.message_id))
  assert.ok(left.some((m) => m.message_id === theirs.message_id))
  await refused(bot.token, 'deleteMessage', { chat_id: user.id, message_id: sent.message_id }, 400, /not found/)
  await refused(bot.token, 'deleteMessage', { chat_id: user.id }, 400, /message_id is required/)
})

test('sendChatAction shows the bot typing in the chat', async () => {
  const { user, bot, chatId } = await conversation()
  const socket = await TestSocket.connect(server.url, user.token)
  const [frame] = await assertDelivered(socket, 'typing', () => ok(bot.token, 'sendChatAction', { chat_id: user.id, action: 'typing' }))
  assert.equal(frame.data.chat_id, chatId)
  assert.equal(frame.data.user_id, bot.bot_id)
  assert.equal(frame.data.is_typing, true)
  await refused(bot.token, 'sendChatAction', { chat_id: user.id, action: 'dancing' }, 400, /action/)
  await refused(bot.token, 'sendChatAction', { chat_id: user.id }, 400, /action is required/)
  socket.ws.close()
})

test('sendPhoto and sendDocument: multipart upload or a file_id, through the files module; getFile and the download', async () => {
  const { user, bot, chatId } = await conversation()
  const image = await png(200, 120, 7)
  const form = new FormData()
  form.append('chat_id', String(user.id))
  form.append('caption', 'a picture')
  form.append('photo', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'pic.png')
  const photo = await ok(bot.token, 'sendPhoto', undefined, form)
  assert.equal(photo.caption, 'a picture')
  assert.equal(photo.text, undefined)
  assert.equal(photo.photo.length, 1)
  assert.equal(photo.photo[0].width, 200)
  assert.equal(photo.photo[0].height, 120)
  assert.equal(photo.photo[0].file_size, image.length)
  const seen = (await history(user, chatId)).find((m) => m.message_id === photo.message_id)
  assert.equal(seen.file_type, 'image')
  assert.equal(seen.content, 'a picture')

  // grammY's way: the field names another part (attach://)
  const attached = new FormData()
  attached.append('chat_id', String(user.id))
  attached.append('document', 'attach://f1')
  attached.append('f1', new Blob([new TextEncoder().encode('hello, file')], { type: 'text/plain' }), 'notes.txt')
  const doc = await ok(bot.token, 'sendDocument', undefined, attached)
  assert.equal(doc.document.file_name, 'notes.txt')
  assert.equal(doc.document.file_size, 11)

  // again by file_id (no upload)
  const again = await ok(bot.token, 'sendDocument', { chat_id: user.id, document: doc.document.file_id })
  assert.equal(again.document.file_unique_id, doc.document.file_unique_id)
  // a document is not a photo; an unknown id and a URL are refused
  await refused(bot.token, 'sendPhoto', { chat_id: user.id, photo: doc.document.file_id }, 400, /IMAGE_PROCESS_FAILED/)
  await refused(bot.token, 'sendDocument', { chat_id: user.id, document: 'AAAAAAAAAAAAAAAAAAAAAA.txt' }, 400, /wrong file identifier/)
  await refused(bot.token, 'sendDocument', { chat_id: user.id, document: 'https://example.org/x.pdf' }, 400, /URL/)
  await refused(bot.token, 'sendPhoto', { chat_id: user.id }, 400, /no photo/)

  const file = await ok(bot.token, 'getFile', { file_id: doc.document.file_id })
  assert.equal(file.file_size, 11)
  const download = await fetch(`${server.url}/file/bot${bot.token}/${file.file_path}`)
  assert.equal(download.status, 200)
  assert.equal(await download.text(), 'hello, file')
  assert.equal((await fetch(`${server.url}/file/bot${bot.token}/AAAAAAAAAAAAAAAAAAAAAA.txt`)).status, 404)
  assert.equal((await fetch(`${server.url}/file/bot1:${'x'.repeat(43)}/${file.file_path}`)).status, 401)
  await refused(bot.token, 'getFile', { file_id: 'nope' }, 400, /wrong file_id/)

  // a user's photo reaches the bot as a photo it can fetch and send on
  const userFile = await (async () => {
    const f = new FormData()
    f.append('file', new Blob([new Uint8Array(await png(50, 40, 3))], { type: 'image/png' }), 'me.png')
    const res = await fetch(`${server.url}/files/upload`, { method: 'POST', body: f, headers: { authorization: `Bearer ${user.token}` } })
    return (await res.json()).data
  })()
  await send(user, { id: bot.bot_id } as TestUser, 'look', { file_path: userFile.path })
  const [update] = await pending(bot.token, 1)
  assert.equal(update.message.caption, 'look')
  assert.equal(update.message.photo[0].width, 50)
  const theirs = await ok(bot.token, 'getFile', { file_id: update.message.photo[0].file_id })
  assert.equal((await fetch(`${server.url}/file/bot${bot.token}/${theirs.file_path}`)).status, 200)
  const forwarded = await ok(bot.token, 'sendPhoto', { chat_id: user.id, photo: update.message.photo[0].file_id })
  assert.equal(forwarded.photo[0].width, 50)
  // a stranger's upload the bot never saw is not a file_id it may use
  const stranger = await server.registerUser()
  const hidden = await (async () => {
    const f = new FormData()
    f.append('file', new Blob([new TextEncoder().encode('secret')], { type: 'text/plain' }), 's.txt')
    const res = await fetch(`${server.url}/files/upload`, {
      method: 'POST',
      body: f,
      headers: { authorization: `Bearer ${stranger.token}` },
    })
    return (await res.json()).data
  })()
  await refused(bot.token, 'getFile', { file_id: hidden.path }, 400, /wrong file_id/)
  assert.equal((await fetch(`${server.url}/file/bot${bot.token}/${hidden.path}`)).status, 404)
})

test('getChat: a user the bot talks with, a group it is in; any other chat is not found', async () => {
  const { user, bot } = await conversation()
  const privateChat = await ok(bot.token, 'getChat', { chat_id: user.id })
  assert.equal(privateChat.id, user.id)
  assert.equal(privateChat.type, 'private')
  assert.equal(privateChat.first_name, 'Ann')
  const groupId = await groupWith(user, bot, 'Lab')
  const group = await ok(bot.token, 'getChat', { chat_id: -groupId })
  assert.equal(group.id, -groupId)
  assert.equal(group.title, 'Lab')
  const elsewhere = (await user.api.post(`${V2}/groups/create`, { title: 'No bots' })).body.data
  await refused(bot.token, 'getChat', { chat_id: -elsewhere.group_id }, 400, /chat not found/)
  await refused(bot.token, 'getChat', { chat_id: (await server.registerUser()).id }, 403, /can't initiate/)
  await refused(bot.token, 'getChat', {}, 400, /chat_id is required/)
})

test('bridges: external_message_id marks a message relayed, and a retry answers the first message instead of a second', async () => {
  const { user, bot, chatId } = await conversation()
  const first = await ok(bot.token, 'sendMessage', { chat_id: user.id, text: 'from Slack', external_message_id: 'slack:1' })
  const retry = await ok(bot.token, 'sendMessage', { chat_id: user.id, text: 'from Slack', external_message_id: 'slack:1' })
  assert.equal(retry.message_id, first.message_id)
  const plain = await ok(bot.token, 'sendMessage', { chat_id: user.id, text: 'own words' })
  const items = await history(user, chatId)
  assert.equal(items.filter((m) => m.content === 'from Slack').length, 1)
  const bridged = items.find((m) => m.message_id === first.message_id)
  assert.equal(bridged.is_from_external, true)
  assert.equal(bridged.external_message_id, 'slack:1')
  const own = items.find((m) => m.message_id === plain.message_id)
  assert.equal(own.is_from_external, false)
  assert.equal(own.external_message_id, null)
  // the same id in another chat is another message
  const groupId = await groupWith(user, bot)
  const elsewhere = await ok(bot.token, 'sendMessage', { chat_id: -groupId, text: 'from Slack', external_message_id: 'slack:1' })
  assert.notEqual(elsewhere.message_id, first.message_id)
  // racing retries still make one message
  const raced = await Promise.all(
    Array.from({ length: 5 }, () => ok(bot.token, 'sendMessage', { chat_id: user.id, text: 'race', external_message_id: 'slack:2' })),
  )
  assert.equal(new Set(raced.map((m: any) => m.message_id)).size, 1)
  // people cannot set it: the field is not part of a person's send (dropped as unknown)
  const byUser = await user.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'x', external_message_id: 'fake' })
  assert.equal(byUser.status, 200, byUser.text)
  assert.equal(byUser.body.data.is_from_external, false)
  assert.equal(byUser.body.data.external_message_id, null)
  await refused(bot.token, 'sendMessage', { chat_id: user.id, text: 'x', external_message_id: '' }, 400, /external_message_id/)
})

test('shared receive: POST /api/bots/webhook with the bot token sends as the bot; unknown commands are ignored; others are refused', async () => {
  const { owner, user, bot, chatId } = await conversation({ allowed_commands: ['deploy'] })
  const receive = (auth: string | null, body: unknown) =>
    fetch(`${server.url}/api/bots/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
      body: JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, body: await res.json() }))

  const sent = await receive(bot.token, { chat_id: chatId, text: 'build passed' })
  assert.equal(sent.status, 200, JSON.stringify(sent.body))
  assert.equal(sent.body.data.ignored, false)
  assert.equal(sent.body.data.message.sender_id, bot.bot_id)
  assert.equal(sent.body.data.message.content, 'build passed')

  const command = await receive(bot.token, { chat_id: chatId, command: 'deploy', args: ['prod', 'now'] })
  assert.equal(command.body.data.message.content, '/deploy prod now')
  const unknown = await receive(bot.token, { chat_id: chatId, command: 'reboot' })
  assert.deepEqual(unknown.body, { success: true, data: { ignored: true } })

  const bridged = await receive(bot.token, { chat_id: chatId, text: 'from IRC', external_message_id: 'irc:9' })
  const again = await receive(bot.token, { chat_id: chatId, text: 'from IRC', external_message_id: 'irc:9' })
  assert.equal(again.body.data.message.message_id, bridged.body.data.message.message_id)
  assert.equal(again.body.data.repeated, true)
  assert.equal(bridged.body.data.message.is_from_external, true)

  assert.equal((await receive(user.token, { chat_id: chatId, text: 'x' })).status, 401)
  assert.equal((await receive(owner.token, { chat_id: chatId, text: 'x' })).status, 401)
  assert.equal((await receive(null, { chat_id: chatId, text: 'x' })).status, 401)
  const notIn = (await user.api.post(`${V2}/groups/create`, { title: 'Private' })).body.data
  const outside = await receive(bot.token, { chat_id: notIn.group_id, text: 'x' })
  assert.equal(outside.status, 403, JSON.stringify(outside.body))
  assert.equal(outside.body.success, false)
  assert.equal((await receive(bot.token, { chat_id: chatId })).status, 400)
  assert.equal((await receive(bot.token, { chat_id: chatId, text: 'a', command: 'deploy' })).status, 400)
  assert.equal((await receive(bot.token, { chat_id: chatId, text: 'y'.repeat(4097) })).status, 400)

  const contents = (await history(user, chatId)).map((m) => m.content)
  assert.deepEqual(contents.slice(0, 3), ['from IRC', '/deploy prod now', 'build passed'])
  assert.ok(!contents.includes('x') && !contents.some((c) => c.startsWith('/reboot')))
})

test("bad input: a deleted bot's token, missing and wrong-typed parameters, a chat the bot is not in, an oversized text; nothing changes", async () => {
  const { owner, user, bot, chatId } = await conversation()
  const cases: [string, unknown, number, RegExp][] = [
    ['sendMessage', { text: 'no chat' }, 400, /chat_id is required/],
    ['sendMessage', { chat_id: 'abc', text: 'x' }, 400, /chat_id must be an integer/],
    ['sendMessage', { chat_id: user.id, text: { a: 1 } }, 400, /text must be a string/],
    ['sendMessage', { chat_id: user.id, text: 'y'.repeat(4097) }, 400, /too long/],
    ['sendMessage', { chat_id: -99_999_999, text: 'x' }, 400, /chat not found/],
    ['sendPhoto', { chat_id: user.id, photo: 'AAAAAAAAAAAAAAAAAAAAAA.png', caption: 'c'.repeat(1025) }, 400, /caption is too long/],
    ['sendPhoto', { chat_id: user.id, photo: 5 }, 400, /photo must be a file or a file_id/],
    ['editMessageText', { chat_id: user.id, text: 'x' }, 400, /message_id is required/],
    ['deleteMessage', { chat_id: [1], message_id: 1 }, 400, /chat_id must be an integer/],
    ['answerCallbackQuery', { callback_query_id: 'x', show_alert: 'maybe' }, 400, /show_alert must be a boolean/],
  ]
  for (const [method, params, status, description] of cases) await refused(bot.token, method, params, status, description)
  assert.deepEqual(
    (await history(user, chatId)).map((m) => m.content),
    ['hi'],
  )

  await server.ctx.db.updateTable('users').set({ deleted_at: Date.now() }).where('id', '=', bot.bot_id).execute()
  await refused(bot.token, 'getMe', {}, 401, /Unauthorized/)
  await refused(bot.token, 'sendMessage', { chat_id: user.id, text: 'after deletion' }, 401, /Unauthorized/)
  const receive = await fetch(`${server.url}/api/bots/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bot.token}` },
    body: JSON.stringify({ chat_id: chatId, text: 'x' }),
  })
  assert.equal(receive.status, 401)
  assert.deepEqual(
    (await history(user, chatId)).map((m) => m.content),
    ['hi'],
  )
  // positive control: a live bot of the same owner still works
  const live = await registerBot(owner)
  assert.equal((await ok(live.token, 'getMe')).id, live.bot_id)
})
