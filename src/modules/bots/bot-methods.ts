/**
 * The Telegram Bot API's methods Tern answers, by name (case-insensitive, as Telegram's). Each
 * reads its parameters, calls the services (a message goes through messages.send, the one write
 * path, with the bot as its sender) and answers the Telegram object.
 */
import type { AppContext } from '../../context.js'
import { AppError } from '../../http/errors.js'
import * as chats from '../chats/service.js'
import * as messages from '../messages/service.js'
import { MAX_CONTENT } from '../messages/schemas.js'
import * as users from '../users/service.js'
import { badRequest, BotApiError, field, storableText, type Params } from './bot-params.js'
import * as repo from './repo.js'
import { COMMAND_PATTERN } from './schemas.js'
import { listCommands, replaceCommands, type AuthBot } from './service.js'
import { chatTarget, commandEntities, tgGroupChat, tgPrivateChat, tgUser, unixSeconds, type TgChat, type TgMessage } from './telegram.js'
import { getUpdates, repliedMessage, UPDATE_KINDS } from './updates.js'
import { WEBHOOK_METHODS } from './webhook-methods.js'

export interface Call {
  ctx: AppContext
  bot: AuthBot
  params: Params
  /** aborted when the client goes away (long polling stops waiting) */
  signal: AbortSignal
}

type Method = (call: Call) => Promise<unknown>

const getMe: Method = async ({ bot }) => ({
  id: bot.bot_id,
  is_bot: true,
  first_name: bot.name,
  username: bot.username,
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
  can_connect_to_business: false,
  has_main_web_app: false,
})

/** Long polling waits at most this long, whatever the bot asks. */
const MAX_POLL_SECONDS = 50

const getUpdatesMethod: Method = async ({ ctx, bot, params, signal }) => {
  const allowed = params.stringArray('allowed_updates', 20)
  const unknown = allowed?.find((kind) => !(UPDATE_KINDS as readonly string[]).includes(kind))
  if (unknown !== undefined) throw badRequest(`allowed_updates: unknown update type "${unknown.slice(0, 64)}"`)
  return getUpdates(ctx, bot.bot_id, {
    offset: params.int('offset'),
    limit: params.int('limit', { min: 1, max: 100 }) ?? 100,
    timeout: Math.min(params.int('timeout', { min: 0 }) ?? 0, MAX_POLL_SECONDS),
    allowedUpdates: allowed,
  }, signal)
}

const MAX_CALLBACK_DATA_BYTES = 64

/** reply_markup: an inline keyboard is checked and kept with the message; the other kinds are accepted. */
function replyMarkup(params: Params): unknown {
  const markup = params.json('reply_markup')
  if (markup === undefined) return undefined
  if (markup === null || typeof markup !== 'object' || Array.isArray(markup)) throw badRequest('reply_markup must be an object')
  const keyboard = field(markup, 'inline_keyboard')
  if (keyboard === undefined) return undefined
  if (!Array.isArray(keyboard) || keyboard.length > 100) throw badRequest('inline_keyboard must be an array of button rows')
  const rows = keyboard.map((row) => {
    if (!Array.isArray(row) || row.length > 8) throw badRequest('each inline_keyboard row must be an array of at most 8 buttons')
    return row.map((button) => {
      const text = field(button, 'text')
      const data = field(button, 'callback_data')
      const url = field(button, 'url')
      if (typeof text !== 'string' || text.length === 0 || text.length > 256) throw badRequest('an inline keyboard button needs a text')
      if (data !== undefined && (typeof data !== 'string' || Buffer.byteLength(data) > MAX_CALLBACK_DATA_BYTES)) throw badRequest('BUTTON_DATA_INVALID')
      if (url !== undefined && (typeof url !== 'string' || !/^(https?|tg):\/\//i.test(url) || url.length > 2048)) throw badRequest('BUTTON_URL_INVALID')
      if (data === undefined && url === undefined) throw badRequest('an inline keyboard button needs callback_data or url')
      storableText(text + (data ?? '') + (url ?? ''), 'an inline keyboard button')
      return { text, ...(data !== undefined ? { callback_data: data } : {}), ...(url !== undefined ? { url } : {}) }
    })
  })
  return { inline_keyboard: rows }
}

/** The message replied to: reply_parameters.message_id, or the older reply_to_message_id. */
function replyTarget(params: Params): { messageId: number; lenient: boolean } | undefined {
  const parameters = params.json('reply_parameters')
  if (parameters !== undefined) {
    const id = field(parameters, 'message_id')
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) throw badRequest('reply_parameters.message_id must be a message id')
    return { messageId: id, lenient: field(parameters, 'allow_sending_without_reply') === true }
  }
  const legacy = params.int('reply_to_message_id', { min: 1 })
  return legacy === undefined ? undefined : { messageId: legacy, lenient: params.bool('allow_sending_without_reply') === true }
}

/** A Tern refusal in Telegram's words. */
function asBotApiError(error: unknown): unknown {
  if (!(error instanceof AppError)) return error
  if (error.code === 'blocked') return new BotApiError(403, 'Forbidden: bot was blocked by the user')
  if (error.code === 'not_found') return badRequest('chat not found')
  if (error.code === 'forbidden') return new BotApiError(403, `Forbidden: ${error.message}`)
  if (error.code === 'rate_limited') {
    const retryAfter = Number(error.headers['retry-after'] ?? 1)
    return new BotApiError(429, `Too Many Requests: retry after ${retryAfter}`, { retry_after: retryAfter })
  }
  return badRequest(error.message)
}

/** The Tern chat a Bot API chat_id names, for this bot, with how the bot sees it. */
async function targetChat(ctx: AppContext, bot: AuthBot, chatIdParam: number) {
  const target = chatTarget(chatIdParam)
  if (!target) throw badRequest('chat not found')
  if ('userId' in target) {
    const user = await users.findById(ctx, target.userId)
    if (!user || user.deleted_at !== null || user.id === bot.bot_id) throw badRequest('chat not found')
    // as in Telegram, a bot speaks only to users who have written to it first
    const chat = await chats.findPersonal(ctx.db, bot.bot_id, user.id)
    if (!chat) throw new BotApiError(403, "Forbidden: bot can't initiate conversation with a user")
    return { chatId: chat.id, tgChat: tgPrivateChat(user) }
  }
  const chat = await chats.findChat(ctx.db, target.chatId)
  if (!chat || chat.chat_type === 'personal') throw badRequest('chat not found')
  return { chatId: chat.id, tgChat: tgGroupChat(chat) as TgChat }
}

const sendMessage: Method = async ({ ctx, bot, params }) => {
  const chatIdParam = params.int('chat_id', { required: true })
  const text = params.string('text', { required: true })
  if (text.trim().length === 0) throw badRequest('message text is empty')
  if (text.length > MAX_CONTENT) throw badRequest('message is too long')
  const markup = replyMarkup(params)
  const reply = replyTarget(params)
  const { chatId, tgChat } = await targetChat(ctx, bot, chatIdParam)
  const sender = await users.findById(ctx, bot.bot_id)
  if (!sender) throw new BotApiError(401, 'Unauthorized')

  let replyToId = reply?.messageId
  if (reply) {
    const original = await messages.moderatedMessage(ctx.db, reply.messageId)
    const usable = original !== null && original.row.chat_id === chatId && original.row.deleted_for_all !== 1
    if (!usable) {
      if (!reply.lenient) throw badRequest('message to be replied not found')
      replyToId = undefined
    }
  }
  const sent = await messages
    .send(ctx, sender, { chat_id: chatId, content: text, ...(replyToId !== undefined ? { reply_to_id: replyToId } : {}) })
    .catch((error: unknown) => {
      throw asBotApiError(error)
    })
  if (markup !== undefined) await repo.insertMarkup(ctx.db, sent.message_id!, bot.bot_id, markup)
  const entities = commandEntities(text)
  const replyTo = await repliedMessage(ctx, sent.reply_to_id, chatId, tgChat)
  const result: TgMessage = {
    message_id: sent.message_id!,
    from: tgUser({ id: sender.id, username: sender.username, display_name: sender.display_name, is_bot: 1 }),
    chat: tgChat,
    date: unixSeconds(Date.parse(sent.timestamp)),
    text,
    ...(entities.length ? { entities } : {}),
    ...(replyTo ? { reply_to_message: replyTo } : {}),
    ...(markup !== undefined ? { reply_markup: markup } : {}),
  }
  return result
}

const COMMAND = new RegExp(COMMAND_PATTERN)

const setMyCommands: Method = async ({ ctx, bot, params }) => {
  const list = params.json('commands')
  if (!Array.isArray(list) || list.length > 100) throw badRequest('commands must be an array of at most 100 BotCommand')
  const commands = list.map((item) => {
    const command = field(item, 'command')
    const description = field(item, 'description')
    if (typeof command !== 'string' || !COMMAND.test(command)) throw badRequest('BOT_COMMAND_INVALID: a command is 1 to 32 characters of a-z, 0-9 and _')
    if (typeof description !== 'string' || description.length === 0 || description.length > 256) throw badRequest('BOT_COMMAND_DESCRIPTION_INVALID')
    return { command, description: storableText(description, 'a command description') }
  })
  if (new Set(commands.map((c) => c.command)).size !== commands.length) throw badRequest('BOT_COMMANDS_TOO_MUCH: a command is listed twice')
  await replaceCommands(ctx, bot.bot_id, commands)
  return true
}

const getMyCommands: Method = async ({ ctx, bot }) =>
  (await listCommands(ctx, bot.bot_id)).map((c) => ({ command: c.command, description: c.description }))

/** By lower-cased name: Telegram's method names are case-insensitive. */
export const METHODS = new Map<string, Method>([
  ['getme', getMe],
  ['getupdates', getUpdatesMethod],
  ['sendmessage', sendMessage],
  ['setmycommands', setMyCommands],
  ['getmycommands', getMyCommands],
  ...WEBHOOK_METHODS,
])
