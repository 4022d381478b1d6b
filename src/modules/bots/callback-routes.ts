/**
 * A Tern user and a bot's inline keyboard (V2, Tern's envelope, the user's session):
 * `GET messages/{id}/buttons` shows the keyboard a bot sent with a message, and
 * `POST messages/{id}/callback {data}` presses one of its callback buttons. The press becomes a
 * `callback_query` update for the bot and is answered at once with its `callback_query_id`; the
 * bot's answer (answerCallbackQuery: text, show_alert, url) reaches the user later as the
 * `bot.callback_answer` event, on every device of theirs.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import type { AppContext } from '../../context.js'
import { fromJson } from '../../db/json.js'
import { requireUser } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import { notFound, validationError } from '../../http/errors.js'
import { IdParams, Nullable } from '../../http/schemas.js'
import type { UserRow } from '../../db/tables.js'
import * as chats from '../chats/index.js'
import { visibleMessage } from '../messages/index.js'
import { field } from './bot-params.js'
import { CALLBACK_ANSWER_MS } from './chat-methods.js'
import * as repo from './repo.js'
import { tgUser } from './telegram.js'
import { factsOfRow, tgChatOf, tgMessage } from './tg-messages.js'
import { recordUpdate } from './updates.js'

const secured = { tags: ['bots'], security: [{ bearer: [] }] }

const CallbackBody = Type.Object(
  { data: Type.String({ minLength: 1, maxLength: 64, description: "the button's callback_data" }) },
  { additionalProperties: false },
)
const CallbackResult = Type.Object({ callback_query_id: Type.String(), bot_id: Type.Integer(), message_id: Type.Integer() })
const ButtonsResult = Type.Object({
  message_id: Type.Integer(),
  bot_id: Nullable(Type.Integer()),
  /** Telegram's InlineKeyboardMarkup: rows of {text, callback_data?, url?}; null when the message has none */
  inline_keyboard: Nullable(
    Type.Array(
      Type.Array(Type.Object({ text: Type.String(), callback_data: Type.Optional(Type.String()), url: Type.Optional(Type.String()) })),
    ),
  ),
})

/** The callback_data of every button of a stored keyboard. */
function callbackData(markup: unknown): Set<string> {
  const data = new Set<string>()
  const rows = field(markup, 'inline_keyboard')
  if (!Array.isArray(rows)) return data
  for (const row of rows) {
    if (!Array.isArray(row)) continue
    for (const button of row) {
      const value = field(button, 'callback_data')
      if (typeof value === 'string') data.add(value)
    }
  }
  return data
}

/** Telegram's chat_instance: the same for one bot and one chat, telling nothing about either. */
const chatInstance = (ctx: AppContext, botId: number, chatId: number) =>
  BigInt.asIntN(
    64,
    BigInt(`0x${createHash('sha256').update(`${ctx.config.secretKey}:chat-instance:${botId}:${chatId}`).digest('hex').slice(0, 16)}`),
  ).toString()

/** A press of a callback button on a message I can see: a callback_query update for the bot that sent it. */
export async function pressButton(ctx: AppContext, me: UserRow, messageId: number, data: string) {
  const { row, chat } = await visibleMessage(ctx, me, messageId)
  const markup = await repo.findMarkup(ctx.db, row.id)
  if (!markup || markup.bot_id !== row.sender_id || !callbackData(fromJson<unknown>(markup.reply_markup)).has(data)) {
    throw validationError('This message has no button with this callback data')
  }
  const botId = markup.bot_id
  const full = await chats.findChat(ctx.db, chat.id)
  const tgChat = full ? await tgChatOf(ctx, full, botId) : null
  const message = tgChat ? await tgMessage(ctx, factsOfRow(row), tgChat, { markup: true }) : null
  if (!message) throw notFound('Message not found')
  const id = BigInt(`0x${randomBytes(8).toString('hex')}`).toString()
  const now = ctx.clock.now()
  const payload = { callback_query: { id, from: tgUser(me), message, chat_instance: chatInstance(ctx, botId, chat.id), data } }
  await recordUpdate(ctx, botId, 'callback_query', null, payload, async (trx) => {
    await repo.insertCallbackQuery(trx, { id, bot_id: botId, user_id: me.id, message_id: row.id, chat_id: chat.id, data, created_at: now })
    // presses nobody answered in time are of no more use
    await repo.deleteCallbackQueriesBefore(trx, now - CALLBACK_ANSWER_MS)
  })
  return { callback_query_id: id, bot_id: botId, message_id: row.id }
}

export const botCallbackRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.get(
    '/messages/:id/buttons',
    {
      schema: {
        summary: 'The inline keyboard a bot sent with this message (null: none)',
        ...secured,
        params: IdParams,
        response: { 200: okSchema(ButtonsResult) },
      },
    },
    async (request) => {
      const { row } = await visibleMessage(ctx, request.user, request.params.id)
      const markup = await repo.findMarkup(ctx.db, row.id)
      const keyboard = markup ? field(fromJson<unknown>(markup.reply_markup), 'inline_keyboard') : undefined
      return ok({
        message_id: row.id,
        bot_id: markup?.bot_id ?? null,
        inline_keyboard: Array.isArray(keyboard) ? (keyboard as Static<typeof ButtonsResult>['inline_keyboard']) : null,
      })
    },
  )

  app.post(
    '/messages/:id/callback',
    {
      schema: {
        summary: "Press a callback button of a bot's message; the bot's answer comes as the bot.callback_answer event",
        ...secured,
        params: IdParams,
        body: CallbackBody,
        response: { 200: okSchema(CallbackResult) },
      },
    },
    async (request) => ok(await pressButton(ctx, request.user, request.params.id, request.body.data)),
  )
}
