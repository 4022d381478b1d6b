/**
 * Real bot frameworks against Tern, unchanged except their API root: a grammY
 * bot and a Telegraf bot in long-polling mode answer /start from a Tern user who sends it over
 * Tern's API, and the user gets the answer in the chat's history and over the WebSocket.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Bot } from 'grammy'
import { Telegraf } from 'telegraf'
import { history, send } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'
import { waitFor } from '../harness/wait.js'

const server = await startTestServer()

async function registerBot(owner: TestUser, name: string) {
  const res = await owner.api.post('/api/bots/register', {
    name,
    username: `${uniqueName('f').slice(0, 24)}_bot`,
    allowed_commands: ['start'],
  })
  assert.equal(res.status, 200, res.text)
  return res.body.data as { bot_id: number; token: string; username: string }
}

/** Waits until the chat's newest message is from the bot, and returns it. */
async function replyFrom(user: TestUser, chatId: number, botId: number, afterId: number) {
  return waitFor(
    async () => {
      const [newest] = await history(user, chatId)
      return newest && newest.sender_id === botId && newest.message_id > afterId ? newest : undefined
    },
    { timeoutMs: 10_000, intervalMs: 100, message: 'the bot answers' },
  )
}

test('a grammY bot on long polling answers /start and echoes text, with apiRoot pointed at Tern', { timeout: 60_000 }, async () => {
  const [owner, user] = [await server.registerUser(), await server.registerUser({ display_name: 'Ann' })]
  const info = await registerBot(owner, 'Greeter')

  const bot = new Bot(info.token, { client: { apiRoot: server.url } })
  bot.command('start', (ctx) => ctx.reply(`Welcome, ${ctx.from?.first_name}! I am @${ctx.me.username}.`))
  bot.on('message:text', (ctx) => ctx.reply(`You said: ${ctx.message.text}`, { reply_parameters: { message_id: ctx.message.message_id } }))
  const started = new Promise<void>((resolve) => void bot.start({ onStart: () => resolve() }))
  await started
  try {
    const socket = await TestSocket.connect(server.url, user.token)
    const sent = await send(user, { id: info.bot_id } as TestUser, '/start')
    const welcome = await replyFrom(user, sent.chat_id, info.bot_id, sent.message_id)
    assert.equal(welcome.content, `Welcome, Ann! I am @${info.username}.`)
    // the same message arrived live
    assert.equal((await socket.next('message.new')).data.message.content, '/start')
    assert.equal((await socket.next('message.new')).data.message.content, welcome.content)
    socket.close()

    const question = await send(user, { id: info.bot_id } as TestUser, 'hello there')
    const echo = await replyFrom(user, sent.chat_id, info.bot_id, question.message_id)
    assert.equal(echo.content, 'You said: hello there')
    assert.equal(echo.reply_to_id, question.message_id)
  } finally {
    await bot.stop()
  }
  // everything the bot handled was acknowledged
  const left = await server.ctx.db.selectFrom('bot_updates').select('update_id').where('bot_id', '=', info.bot_id).execute()
  assert.deepEqual(left, [])
})

test('a Telegraf bot on long polling answers /start, with telegram.apiRoot pointed at Tern', { timeout: 60_000 }, async () => {
  const [owner, user] = [await server.registerUser(), await server.registerUser({ display_name: 'Bo' })]
  const info = await registerBot(owner, 'Telegraf helper')

  const bot = new Telegraf(info.token, { telegram: { apiRoot: server.url } })
  bot.start((ctx) => ctx.reply(`Hi ${ctx.from.first_name}, this is Telegraf`))
  const stopped = new Promise<void>((resolve, reject) => {
    bot.launch({ dropPendingUpdates: false }, () => resolve()).catch(reject)
  })
  await stopped
  try {
    const sent = await send(user, { id: info.bot_id } as TestUser, '/start')
    const reply = await replyFrom(user, sent.chat_id, info.bot_id, sent.message_id)
    assert.equal(reply.content, 'Hi Bo, this is Telegraf')
  } finally {
    bot.stop('test over')
  }
})
