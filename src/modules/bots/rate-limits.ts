/**
 * Bots' send limits, like Telegram's: BOT_RATE_LIMIT messages per window per bot over all chats
 * (default 30/1 s), BOT_CHAT_RATE_LIMIT per personal chat (default 5 per 5 s: about one a second,
 * in bursts) and BOT_GROUP_RATE_LIMIT per group or channel (default 20 per minute). Fixed windows
 * that start at the first send, in-process or in Redis (shared by every instance) with REDIS_URL
 * (lib/window-counts.ts, as the per-account sign-in limits).
 *
 * A send over a limit is not counted against the others: the chat's window is asked first, then
 * the bot's, and a refusal by the bot's gives the chat's try back.
 */
import type { RateLimit } from '../../config.js'
import type { AppContext } from '../../context.js'
import { windowCounts } from '../../lib/window-counts.js'

const take = (ctx: AppContext, key: string, limit: RateLimit) => windowCounts(ctx, 'bot-rate').take(key, limit)
const giveBack = (ctx: AppContext, key: string) => windowCounts(ctx, 'bot-rate').giveBack(key)

/**
 * Counts a bot's send into a chat (`group`: a group or channel). Answers null when it may go, or
 * the whole seconds to wait (Telegram's retry_after).
 */
export async function takeSend(ctx: AppContext, botId: number, chatId: number, group: boolean): Promise<number | null> {
  const chatKey = `${botId}:chat:${chatId}`
  const chatWait = await take(ctx, chatKey, group ? ctx.config.botGroupRateLimit : ctx.config.botChatRateLimit)
  if (chatWait !== null) {
    await giveBack(ctx, chatKey)
    return Math.max(1, Math.ceil(chatWait / 1000))
  }
  const botKey = `${botId}:all`
  const botWait = await take(ctx, botKey, ctx.config.botRateLimit)
  if (botWait === null) return null
  await giveBack(ctx, botKey)
  await giveBack(ctx, chatKey)
  return Math.max(1, Math.ceil(botWait / 1000))
}
