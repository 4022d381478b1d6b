/**
 * What every way a bot writes shares (Bot API methods, the shared receive endpoint): which Tern
 * chat a Bot API chat_id names for this bot, the send itself (through messages.send, the one write
 * path, with the bot as sender) under the bots' rate limits, bridged messages' external ids, and
 * Tern's refusals in Telegram's words.
 */
import type { AppContext } from '../../context.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { UserRow } from '../../db/tables.js'
import { AppError, rateLimited } from '../../http/errors.js'
import * as chats from '../chats/index.js'
import type { MessageView, SendMessageBody } from '../messages/index.js'
import * as messages from '../messages/index.js'
import * as users from '../users/index.js'
import { badRequest, BotApiError } from './bot-params.js'
import { takeSend } from './rate-limits.js'
import * as repo from './repo.js'
import type { AuthBot } from './service.js'
import { chatTarget, tgGroupChat, tgPrivateChat, type TgChat } from './telegram.js'

/** A Tern refusal in Telegram's words. */
export function asBotApiError(error: unknown): unknown {
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

export interface BotChat {
  chatId: number
  tgChat: TgChat
  /** a group or channel (the group rate limit), not a personal chat */
  group: boolean
}

/**
 * The Tern chat a Bot API chat_id names, for this bot, with how the bot sees it: a user it has a
 * personal chat with (a user who never wrote to it is 403, as in Telegram), or a group or channel
 * it is a member of (any other is 400 `chat not found`, whether it exists or not).
 */
export async function targetChat(ctx: AppContext, bot: AuthBot, chatIdParam: number): Promise<BotChat> {
  const target = chatTarget(chatIdParam)
  if (!target) throw badRequest('chat not found')
  if ('userId' in target) {
    const user = await users.findById(ctx, target.userId)
    if (!user || user.deleted_at !== null || user.id === bot.bot_id) throw badRequest('chat not found')
    // as in Telegram, a bot speaks only to users who have written to it first
    const chat = await chats.findPersonal(ctx.db, bot.bot_id, user.id)
    if (!chat) throw new BotApiError(403, "Forbidden: bot can't initiate conversation with a user")
    return { chatId: chat.id, tgChat: tgPrivateChat(user), group: false }
  }
  const chat = await chats.findChat(ctx.db, target.chatId)
  if (!chat || chat.chat_type === 'personal' || !(await repo.isMember(ctx.db, chat.id, bot.bot_id))) throw badRequest('chat not found')
  return { chatId: chat.id, tgChat: tgGroupChat(chat), group: true }
}

/** The bot's own account (the sender of what it writes). */
export async function botUser(ctx: AppContext, bot: AuthBot): Promise<UserRow> {
  const user = await users.findById(ctx, bot.bot_id)
  if (!user || user.deleted_at !== null) throw new BotApiError(401, 'Unauthorized')
  return user
}

/** An external message id a bridge names its message by: 1–128 printable characters. */
export function checkExternalId(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (value.length === 0 || value.length > 128 || /[\u0000-\u001f\u007f]/.test(value))
    throw badRequest('external_message_id must be 1 to 128 printable characters')
  return value
}

/**
 * Sends as the bot into its chat, under the bots' rate limits (429 `rate_limited` with
 * Retry-After, an AppError: callers put it in their envelope). With `externalId` (a bridge), a
 * message this bot already relayed into this chat under that id is answered instead of a second
 * one (`repeated`), without counting against the limits.
 */
export async function sendAsBot(
  ctx: AppContext,
  sender: UserRow,
  chat: Pick<BotChat, 'chatId' | 'group'>,
  input: Omit<SendMessageBody, 'chat_id' | 'receiver_id'>,
  externalId?: string,
): Promise<{ message: MessageView; repeated: boolean }> {
  const first = async () => {
    const row = externalId === undefined ? undefined : await repo.findExternal(ctx.db, chat.chatId, sender.id, externalId)
    return row ? { message: await messages.presentOne(ctx.db, row, sender), repeated: true } : null
  }
  const earlier = await first()
  if (earlier) return earlier
  const wait = await takeSend(ctx, sender.id, chat.chatId, chat.group)
  if (wait !== null) throw rateLimited(wait)
  try {
    const message = await messages.send(
      ctx,
      sender,
      { ...input, chat_id: chat.chatId },
      externalId === undefined ? {} : { bridge: { externalMessageId: externalId } },
    )
    return { message, repeated: false }
  } catch (error) {
    // the same external id raced in twice: the unique index kept the first
    const raced = externalId !== undefined && isUniqueViolation(error) ? await first() : null
    if (raced) return raced
    throw error
  }
}
