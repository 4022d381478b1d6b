/**
 * Real bot frameworks in webhook mode: a grammY bot (webhookCallback) and a
 * Telegraf bot (webhookCallback, which answers with a webhook reply by default) behind local HTTP
 * servers, their webhooks set through Tern's Bot API with a secret_token, answer /start and a
 * button press from a Tern user. WEBHOOK_ALLOW_PRIVATE=true lets Tern post to loopback.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, test } from 'node:test'
import { Bot, InlineKeyboard, webhookCallback } from 'grammy'
import { Markup, Telegraf } from 'telegraf'
import { history, send, updates, V2 } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'
import { waitFor } from '../harness/wait.js'

const server = await startTestServer({
  env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_DELIVERY_INTERVAL_MS: '20', WEBHOOK_RETRY_BASE_MS: '50' },
})

async function registerBot(owner: TestUser, name: string) {
  const res = await owner.api.post('/api/bots/register', {
    name,
    username: `${uniqueName('h').slice(0, 24)}_bot`,
    allowed_commands: ['start'],
  })
  assert.equal(res.status, 200, res.text)
  return res.body.data as { bot_id: number; token: string; username: string }
}

/** A local HTTP server for the bot's webhook handler; counts the requests and what they were answered. */
async function listen(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: { secret: string | undefined; status?: number }[] = []
  const listener = http.createServer((req, res) => {
    const entry: { secret: string | undefined; status?: number } = {
      secret: req.headers['x-telegram-bot-api-secret-token'] as string | undefined,
    }
    seen.push(entry)
    res.on('finish', () => (entry.status = res.statusCode))
    handler(req, res)
  })
  listener.listen(0, '127.0.0.1')
  await once(listener, 'listening')
  after(
    () =>
      new Promise<void>((resolve) => {
        listener.closeAllConnections()
        listener.close(() => resolve())
      }),
  )
  return { url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}`, seen }
}

async function replyFrom(user: TestUser, chatId: number, botId: number, afterId: number) {
  return waitFor(
    async () => {
      const [newest] = await history(user, chatId)
      return newest && newest.sender_id === botId && newest.message_id > afterId ? newest : undefined
    },
    { timeoutMs: 10_000, intervalMs: 100, message: 'the bot answers' },
  )
}

async function webhookInfo(token: string) {
  const res = await fetch(`${server.url}/bot${token}/getWebhookInfo`)
  return ((await res.json()) as any).result
}

test('a grammY bot in webhook mode with secret_token answers /start', { timeout: 60_000 }, async () => {
  const [owner, user] = [await server.registerUser(), await server.registerUser({ display_name: 'Gia' })]
  const info = await registerBot(owner, 'Grammy hook')

  const bot = new Bot(info.token, { client: { apiRoot: server.url } })
  bot.command('start', (ctx) => ctx.reply(`Hello ${ctx.from?.first_name}, from a webhook`))
  await bot.init()
  const hook = await listen(webhookCallback(bot, 'http', { secretToken: 'grammy_secret-1' }))
  await bot.api.setWebhook(`${hook.url}/grammy`, { secret_token: 'grammy_secret-1' })
  assert.equal((await webhookInfo(info.token)).url, `${hook.url}/grammy`)
  // while the webhook is set, long polling is refused as Telegram refuses it
  await assert.rejects(bot.api.getUpdates(), (err: any) => err.error_code === 409)

  const sent = await send(user, { id: info.bot_id } as TestUser, '/start')
  const reply = await replyFrom(user, sent.chat_id, info.bot_id, sent.message_id)
  assert.equal(reply.content, 'Hello Gia, from a webhook')
  assert.deepEqual(
    hook.seen.map((s) => s.secret),
    ['grammy_secret-1'],
  )
  assert.equal(hook.seen[0].status, 200)

  // negative control: grammY refuses a request without the right secret token (401), so the header mattered
  const forged = await fetch(`${hook.url}/grammy`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': 'wrong' },
    body: '{"update_id":1}',
  })
  assert.equal(forged.status, 401)
  await bot.api.deleteWebhook()
  assert.equal((await webhookInfo(info.token)).url, '')
})

test('a Telegraf bot in webhook mode with secret_token answers /start (through a webhook reply)', { timeout: 60_000 }, async () => {
  const [owner, user] = [await server.registerUser(), await server.registerUser({ display_name: 'Tim' })]
  const info = await registerBot(owner, 'Telegraf hook')

  const bot = new Telegraf(info.token, { telegram: { apiRoot: server.url } })
  bot.start((ctx) => ctx.reply(`Hi ${ctx.from.first_name}, Telegraf on a webhook`))
  const hook = await listen(
    bot.webhookCallback('/telegraf', { secretToken: 'telegraf-secret' }) as (req: http.IncomingMessage, res: http.ServerResponse) => void,
  )
  await bot.telegram.setWebhook(`${hook.url}/telegraf`, { secret_token: 'telegraf-secret' })

  const sent = await send(user, { id: info.bot_id } as TestUser, '/start')
  const reply = await replyFrom(user, sent.chat_id, info.bot_id, sent.message_id)
  assert.equal(reply.content, 'Hi Tim, Telegraf on a webhook')
  assert.deepEqual(
    hook.seen.map((s) => s.secret),
    ['telegraf-secret'],
  )

  // negative control: Telegraf ignores a request without the secret token (its filter answers 403)
  const forged = await fetch(`${hook.url}/telegraf`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"update_id":1}',
  })
  assert.notEqual(forged.status, 200)
  await bot.telegram.deleteWebhook()
})

/** The user's side of a button press: /start, press "yes", see the bot's answer and its edit. */
async function pressAndSee(user: TestUser, botId: number) {
  const sent = await send(user, { id: botId } as TestUser, '/start')
  const question = await replyFrom(user, sent.chat_id, botId, sent.message_id)
  assert.equal(question.content, 'Pizza?')
  const pressed = await user.api.post(`${V2}/messages/${question.message_id}/callback`, { data: 'pizza:yes' })
  assert.equal(pressed.status, 200, pressed.text)
  const answer = await waitFor(async () => (await updates(user)).items.find((u) => u.type === 'bot.callback_answer'), {
    timeoutMs: 10_000,
    intervalMs: 100,
    message: 'the bot answers the press',
  })
  assert.equal(answer.data.callback_query_id, pressed.body.data.callback_query_id)
  assert.equal(answer.data.text, 'You chose yes')
  const edited = await waitFor(
    async () => {
      const found = (await history(user, sent.chat_id)).find((m) => m.message_id === question.message_id)
      return found?.edited_at ? found : undefined
    },
    { timeoutMs: 10_000, intervalMs: 100, message: 'the bot edits its question' },
  )
  assert.equal(edited.content, 'Pizza? yes')
}

test('a grammY bot in webhook mode answers a button press (answerCallbackQuery, editMessageText)', { timeout: 60_000 }, async () => {
  const [owner, user] = [await server.registerUser(), await server.registerUser()]
  const info = await registerBot(owner, 'Pizza grammY hook')
  const bot = new Bot(info.token, { client: { apiRoot: server.url } })
  bot.command('start', (ctx) => ctx.reply('Pizza?', { reply_markup: new InlineKeyboard().text('Yes', 'pizza:yes').text('No', 'pizza:no') }))
  bot.callbackQuery(/^pizza:(.+)$/, async (ctx) => {
    await ctx.answerCallbackQuery({ text: `You chose ${ctx.match[1]}` })
    await ctx.editMessageText(`Pizza? ${ctx.match[1]}`)
  })
  await bot.init()
  const hook = await listen(webhookCallback(bot, 'http', { secretToken: 'pizza-secret' }))
  await bot.api.setWebhook(`${hook.url}/`, { secret_token: 'pizza-secret' })
  await pressAndSee(user, info.bot_id)
  assert.equal(hook.seen.length, 2, 'the /start message and the callback query, once each')
})

test('a Telegraf bot in webhook mode answers a button press (answerCbQuery by webhook reply, editMessageText)', {
  timeout: 60_000,
}, async () => {
  const [owner, user] = [await server.registerUser(), await server.registerUser()]
  const info = await registerBot(owner, 'Pizza Telegraf hook')
  const bot = new Telegraf(info.token, { telegram: { apiRoot: server.url } })
  bot.start((ctx) =>
    ctx.reply('Pizza?', Markup.inlineKeyboard([Markup.button.callback('Yes', 'pizza:yes'), Markup.button.callback('No', 'pizza:no')])),
  )
  bot.action(/^pizza:(.+)$/, async (ctx) => {
    await ctx.answerCbQuery(`You chose ${ctx.match[1]}`)
    await ctx.editMessageText(`Pizza? ${ctx.match[1]}`)
  })
  const hook = await listen(
    bot.webhookCallback('/', { secretToken: 'pizza-secret' }) as (req: http.IncomingMessage, res: http.ServerResponse) => void,
  )
  await bot.telegram.setWebhook(`${hook.url}/`, { secret_token: 'pizza-secret' })
  await pressAndSee(user, info.bot_id)
  assert.equal(hook.seen.length, 2, 'the /start message and the callback query, once each')
})
