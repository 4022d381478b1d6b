/**
 * Bots' send limits, like Telegram's: BOT_RATE_LIMIT messages per window per bot over all chats
 * (default 30/1 s), BOT_CHAT_RATE_LIMIT per personal chat (default 5 per 5 s: about one a second,
 * in bursts) and BOT_GROUP_RATE_LIMIT per group or channel (default 20 per minute). Fixed windows
 * that start at the first send, in-process or in Redis (shared by every instance) with REDIS_URL;
 * the same counting as the per-account sign-in limits (auth/account-limits.ts).
 *
 * A send over a limit is not counted against the others: the chat's window is asked first, then
 * the bot's, and a refusal by the bot's gives the chat's try back.
 */
import type { RateLimit } from '../../config.js'
import type { AppContext } from '../../context.js'

interface Window {
  count: number
  resetAt: number
}

const local = new WeakMap<AppContext, Map<string, Window>>()
const LOCAL_MAX_KEYS = 100_000

const REDIS_COUNT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}`

/** Counts one send under `limit`; null when allowed, else the milliseconds until the window ends. */
async function take(ctx: AppContext, key: string, limit: RateLimit): Promise<number | null> {
  if (ctx.redis) {
    const [count, ttl] = (await ctx.redis.eval(REDIS_COUNT, 1, `${ctx.config.redisPrefix}bot-rate:${key}`, String(limit.windowMs))) as [number, number]
    return count > limit.max ? (ttl > 0 ? ttl : limit.windowMs) : null
  }
  let map = local.get(ctx)
  if (!map) local.set(ctx, (map = new Map()))
  const now = Date.now()
  let window = map.get(key)
  if (!window || window.resetAt <= now) {
    if (map.size >= LOCAL_MAX_KEYS) for (const [k, w] of map) if (w.resetAt <= now) map.delete(k)
    window = { count: 0, resetAt: now + limit.windowMs }
    map.set(key, window)
  }
  window.count++
  return window.count > limit.max ? window.resetAt - now : null
}

async function giveBack(ctx: AppContext, key: string) {
  if (ctx.redis) {
    await ctx.redis.decr(`${ctx.config.redisPrefix}bot-rate:${key}`)
    return
  }
  const window = local.get(ctx)?.get(key)
  if (window && window.count > 0) window.count--
}

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
