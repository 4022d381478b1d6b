/**
 * The Telegram Bot API's methods Tern answers, by name (case-insensitive, as Telegram's). Each
 * reads its parameters, calls the services (a message goes through messages.send, the one write
 * path, with the bot as its sender) and answers the Telegram object.
 */
import type { AppContext } from '../../context.js'
import * as messages from '../messages/index.js'
import { MAX_CONTENT } from '../messages/index.js'
import { badRequest, field, storableText, type Params } from './bot-params.js'
import * as repo from './repo.js'
import { COMMAND_PATTERN } from './schemas.js'
import { listCommands, replaceCommands, type AuthBot } from './service.js'
import { commandEntities, tgUser, unixSeconds, type TgMessage } from './telegram.js'
import { getUpdates, repliedMessage, UPDATE_KINDS } from './updates.js'
import { WEBHOOK_METHODS } from './webhook-methods.js'
import { asBotApiError, botUser, checkExternalId, sendAsBot, targetChat } from './bot-send.js'
import { CHAT_METHODS } from './chat-methods.js'
import { replyMarkup, replyTarget } from './bot-markup.js'
import { isReplyTarget } from '../../policies/chats.js'

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
  return getUpdates(
    ctx,
    bot.bot_id,
    {
      offset: params.int('offset'),
      limit: params.int('limit', { min: 1, max: 100 }) ?? 100,
      timeout: Math.min(params.int('timeout', { min: 0 }) ?? 0, MAX_POLL_SECONDS),
      allowedUpdates: allowed,
    },
    signal,
  )
}

const sendMessage: Method = async ({ ctx, bot, params }) => {
  const chatIdParam = params.int('chat_id', { required: true })
  const text = params.string('text', { required: true })
  if (text.trim().length === 0) throw badRequest('message text is empty')
  if (text.length > MAX_CONTENT) throw badRequest('message is too long')
  const markup = replyMarkup(params)
  const reply = replyTarget(params)
  // a bridge's id for the message in the other messenger (Tern's extension): a retry finds the first
  const externalId = params.has('external_message_id')
    ? checkExternalId(params.string('external_message_id', { required: true }))
    : undefined
  const target = await targetChat(ctx, bot, chatIdParam)
  const { chatId, tgChat } = target
  const sender = await botUser(ctx, bot)

  let replyToId = reply?.messageId
  if (reply) {
    const original = await messages.moderatedMessage(ctx.db, reply.messageId)
    if (!isReplyTarget(original?.row, chatId)) {
      if (!reply.lenient) throw badRequest('message to be replied not found')
      replyToId = undefined
    }
  }
  const { message: sent, repeated } = await sendAsBot(
    ctx,
    sender,
    target,
    { content: text, ...(replyToId !== undefined ? { reply_to_id: replyToId } : {}) },
    externalId,
  ).catch((error: unknown) => {
    throw asBotApiError(error)
  })
  if (markup !== undefined && !repeated) await repo.insertMarkup(ctx.db, sent.message_id!, bot.bot_id, markup)
  const entities = commandEntities(text)
  const replyTo = await repliedMessage(ctx, sent.reply_to_id, chatId, tgChat)
  const result: TgMessage = {
    message_id: sent.message_id!,
    from: tgUser({ id: sender.id, username: sender.username, display_name: sender.display_name, is_bot: 1 }),
    chat: tgChat,
    date: unixSeconds(Date.parse(sent.timestamp)),
    text: sent.content,
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
    if (typeof command !== 'string' || !COMMAND.test(command))
      throw badRequest('BOT_COMMAND_INVALID: a command is 1 to 32 characters of a-z, 0-9 and _')
    if (typeof description !== 'string' || description.length === 0 || description.length > 256)
      throw badRequest('BOT_COMMAND_DESCRIPTION_INVALID')
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
  ...CHAT_METHODS,
])
