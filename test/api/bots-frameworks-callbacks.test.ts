/**
 * Real bot frameworks answering a button press: a grammY bot and a Telegraf bot on long
 * polling, unchanged except their API root, send an inline keyboard on /start; a Tern user presses
 * a button (POST messages/{id}/callback); the bot answers the callback query (answerCallbackQuery)
 * and edits its message (editMessageText). The user gets the answer as the bot.callback_answer
 * event and sees the edit in the chat.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Bot, InlineKeyboard } from 'grammy'
import { Markup, Telegraf } from 'telegraf'
import { history, send, updates, V2 } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'
import { waitFor } from '../harness/wait.js'

const server = await startTestServer()

async function registerBot(owner: TestUser, name: string) {
  const res = await owner.api.post('/api/bots/register', {
    name,
    username: `${uniqueName('c').slice(0, 24)}_bot`,
    allowed_commands: ['start'],
  })
  assert.equal(res.status, 200, res.text)
  return res.body.data as { bot_id: number; token: string; username: string }
}

/** The user's side: /start, press the keyboard's "yes" button, see the bot's answer and its edit. */
async function pressAndSee(user: TestUser, botId: number) {
  const sent = await send(user, { id: botId } as TestUser, '/start')
  const question = await waitFor(
    async () => {
      const [newest] = await history(user, sent.chat_id)
      return newest && newest.sender_id === botId ? newest : undefined
    },
    { timeoutMs: 10_000, intervalMs: 100, message: 'the bot asks' },
  )
  assert.equal(question.content, 'Pizza?')
  const buttons = await user.api.get(`${V2}/messages/${question.message_id}/buttons`)
  assert.deepEqual(buttons.body.data.inline_keyboard, [
    [
      { text: 'Yes', callback_data: 'pizza:yes' },
      { text: 'No', callback_data: 'pizza:no' },
    ],
  ])

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

test('a grammY bot on long polling answers a button press: answerCallbackQuery and editMessageText', { timeout: 60_000 }, async () => {
  const [owner, user] = [await server.registerUser(), await server.registerUser()]
  const info = await registerBot(owner, 'Pizza grammY')
  const bot = new Bot(info.token, { client: { apiRoot: server.url } })
  bot.command('start', (ctx) => ctx.reply('Pizza?', { reply_markup: new InlineKeyboard().text('Yes', 'pizza:yes').text('No', 'pizza:no') }))
  bot.callbackQuery(/^pizza:(.+)$/, async (ctx) => {
    await ctx.answerCallbackQuery({ text: `You chose ${ctx.match[1]}` })
    await ctx.editMessageText(`Pizza? ${ctx.match[1]}`)
  })
  await new Promise<void>((resolve) => void bot.start({ onStart: () => resolve() }))
  try {
    await pressAndSee(user, info.bot_id)
  } finally {
    await bot.stop()
  }
})

test('a Telegraf bot on long polling answers a button press: answerCbQuery and editMessageText', { timeout: 60_000 }, async () => {
  const [owner, user] = [await server.registerUser(), await server.registerUser()]
  const info = await registerBot(owner, 'Pizza Telegraf')
  const bot = new Telegraf(info.token, { telegram: { apiRoot: server.url } })
  bot.start((ctx) =>
    ctx.reply('Pizza?', Markup.inlineKeyboard([Markup.button.callback('Yes', 'pizza:yes'), Markup.button.callback('No', 'pizza:no')])),
  )
  bot.action(/^pizza:(.+)$/, async (ctx) => {
    await ctx.answerCbQuery(`You chose ${ctx.match[1]}`)
    await ctx.editMessageText(`Pizza? ${ctx.match[1]}`)
  })
  await new Promise<void>((resolve, reject) => {
    bot.launch({ dropPendingUpdates: false }, () => resolve()).catch(reject)
  })
  try {
    await pressAndSee(user, info.bot_id)
  } finally {
    bot.stop('test over')
  }
})
