/**
 * Updates for bots: a message a user sends a bot in their personal chat becomes an update with the
 * bot's next update id, written by a listener of committed `message.new` events (events/bus.ts),
 * and long polling (getUpdates) reads them.
 *
 * Why a listener after the commit and not the send's own transaction: the send path (and its
 * SQLite fast path, messages/posting-sqlite.ts) stays exactly as fast for the messages that are
 * not to bots, which is nearly all of them; the listener asks "is the receiver a bot?" of an
 * in-memory answer per user (an account never becomes or stops being a bot). The price: a crash
 * between the commit and the listener loses that update (at most once). The unique
 * (bot_id, message_id) index makes a second attempt for the same message a no-op. The update is
 * recorded just after the send is answered (a few ms): long polling is woken by it.
 */
import { randomUUID } from 'node:crypto'
import type { AppContext } from '../../context.js'
import { isUniqueViolation } from '../../db/errors.js'
import { fromJson } from '../../db/json.js'
import type { Db } from '../../db/database.js'
import type { BotUpdateRow, ChatRow } from '../../db/tables.js'
import * as chats from '../chats/index.js'
import type { MessageView } from '../messages/index.js'
import * as messages from '../messages/index.js'
import * as users from '../users/index.js'
import { BotApiError } from './bot-params.js'
import * as repo from './repo.js'
import { allowedCommandsOf } from './service.js'
import { hasActiveWebhook, WEBHOOK_UPDATES_KIND } from './webhook-repo.js'
import { enqueueIn, queueWake } from '../../jobs/queue.js'
import { leadingCommand, tgGroupChat, tgPrivateChat } from './telegram.js'
import { repliedMessage, tgMessage } from './tg-messages.js'

/** Update kinds a bot gets when it names none (Telegram's default leaves these three out). */
export const NOT_BY_DEFAULT = new Set(['chat_member', 'message_reaction', 'message_reaction_count'])
export const UPDATE_KINDS = [
  'message',
  'edited_message',
  'callback_query',
  'chat_member',
  'my_chat_member',
  'message_reaction',
  'message_reaction_count',
] as const

interface BotState {
  /** user id → whether it is a bot (never changes for an account) */
  isBot: Map<number, boolean>
  /** bot id → long polls waiting for its next update */
  waiters: Map<number, Set<() => void>>
  /** user ids asked about in this event-loop turn, answered by one query (see isBot) */
  asking: Map<number, { resolve(bot: boolean): void; reject(error: unknown): void }[]>
  /** bot id → its running getUpdates on this instance (a newer one, on any instance, supersedes it) */
  polls: Map<number, Poll>
  /** bot id → messages waiting for its next write: written together, in one transaction (enqueue) */
  batches: Map<number, Queued[]>
  /** bot id → the chain of its update writes in progress (inTurn) */
  queues: Map<number, Promise<void>>
  closing: boolean
}
/** A running getUpdates: `started` and `id` order it against polls on other instances. */
interface Poll {
  id: string
  started: number
  controller: AbortController
}
const states = new WeakMap<AppContext, BotState>()
const stateOf = (ctx: AppContext): BotState => {
  let state = states.get(ctx)
  if (!state)
    states.set(
      ctx,
      (state = {
        isBot: new Map(),
        asking: new Map(),
        waiters: new Map(),
        polls: new Map(),
        queues: new Map(),
        batches: new Map(),
        closing: false,
      }),
    )
  return state
}

const IS_BOT_CACHE_SIZE = 100_000

/**
 * Whether a user is a bot, from memory; the users not known yet that are asked about in one
 * event-loop turn are looked up by one query (a broadcast reaches thousands of new users at once).
 */
function isBot(ctx: AppContext, userId: number): Promise<boolean> {
  const state = stateOf(ctx)
  const cached = state.isBot.get(userId)
  if (cached !== undefined) return Promise.resolve(cached)
  return new Promise((resolve, reject) => {
    const waiting = state.asking.get(userId)
    if (waiting) return void waiting.push({ resolve, reject })
    if (state.asking.size === 0) setImmediate(() => void lookUpBots(ctx))
    state.asking.set(userId, [{ resolve, reject }])
  })
}

async function lookUpBots(ctx: AppContext) {
  const state = stateOf(ctx)
  const asking = state.asking
  state.asking = new Map()
  try {
    const bots = await repo.botIdsAmong(ctx.db, [...asking.keys()])
    if (state.isBot.size + asking.size >= IS_BOT_CACHE_SIZE) state.isBot.clear()
    for (const [userId, waiters] of asking) {
      state.isBot.set(userId, bots.has(userId))
      for (const waiter of waiters) waiter.resolve(bots.has(userId))
    }
  } catch (error) {
    for (const waiters of asking.values()) for (const waiter of waiters) waiter.reject(error)
  }
}

/**
 * Ends this instance's poll for the bot if the one that started elsewhere is newer (ties: the
 * larger id). The control channel's `bot.poll` calls it on every instance (wired at start-up).
 */
export function supersedePoll(ctx: AppContext, poll: { botId: number; id: string; started: number }) {
  const current = stateOf(ctx).polls.get(poll.botId)
  if (!current || current.id === poll.id) return
  if (poll.started > current.started || (poll.started === current.started && poll.id > current.id)) current.controller.abort()
}

/**
 * Turns a committed `message.new` into updates for the bots it is addressed to (in a personal
 * chat with a bot, or a command or reply in a group with bot members). A listener of the event
 * bus, registered at start-up (events/reactions.ts).
 */
export async function onMessageForBots(ctx: AppContext, message: MessageView) {
  if (message.receiver_id === null && message.message_id !== null) return groupMessage(ctx, message)
  if (message.receiver_id === null || message.message_id === null || message.receiver_id === message.sender_id) return
  const botId = message.receiver_id
  // the common case, a message to a person, is answered from memory without waiting
  if (stateOf(ctx).isBot.get(botId) === false) return
  await enqueue(ctx, botId, { message, group: null })
}

interface Queued {
  message: MessageView
  /** the group it was posted in; null: the bot's personal chat with the sender */
  group: ChatRow | null
}

/**
 * Queues a message for the bot's next write. The messages that arrive while a write is running
 * are written by the next one together (one transaction, one lookup of the bot), so a bot that
 * hears hundreds of messages a second costs a few queries per batch rather than per message.
 */
function enqueue(ctx: AppContext, botId: number, item: Queued): Promise<void> {
  const state = stateOf(ctx)
  const open = state.batches.get(botId)
  if (open) {
    open.push(item)
    return Promise.resolve()
  }
  const batch = [item]
  state.batches.set(botId, batch)
  return inTurn(ctx, botId, async () => {
    // from here on, new messages start the next batch
    if (state.batches.get(botId) === batch) state.batches.delete(botId)
    if (await isBot(ctx, botId)) await recordMessageUpdates(ctx, botId, batch)
  })
}

/**
 * Runs a bot's update writes one after another, in the order their messages were committed here,
 * so update ids follow the messages (on PostgreSQL two writes on two connections could swap).
 */
function inTurn(ctx: AppContext, botId: number, work: () => Promise<void>): Promise<void> {
  const { queues } = stateOf(ctx)
  const previous = queues.get(botId) ?? Promise.resolve()
  const next = previous.then(work, work)
  const settled = next.catch(() => {})
  queues.set(botId, settled)
  void settled.then(() => {
    if (queues.get(botId) === settled) queues.delete(botId)
  })
  return next
}

/** Whether the bot takes this text: anything but a command neither allowed nor defined (or meant for another bot). */
async function wanted(ctx: AppContext, botId: number, botUsername: string, allowed: string[], text: string): Promise<boolean> {
  const command = leadingCommand(text)
  if (!command) return true
  if (command.botUsername !== null && command.botUsername.toLowerCase() !== botUsername.toLowerCase()) return false
  if (allowed.includes(command.command)) return true
  return (await repo.findCommand(ctx.db, botId, command.command)) !== undefined
}

/** (in tg-messages.ts, with the rest of the Message mapping) */
export { repliedMessage }

/**
 * Messages to the bot (its personal chats), or in groups it is in, as `message` updates, except
 * those the bot does not take (see wanted), in one transaction.
 */
async function recordMessageUpdates(ctx: AppContext, botId: number, batch: Queued[]) {
  const [app, bot] = await Promise.all([repo.findApp(ctx.db, botId), users.findById(ctx, botId)])
  // a bot removed meanwhile hears nothing
  if (!app || !bot) return
  const allowed = allowedCommandsOf(app)
  const senders = new Map<number, Awaited<ReturnType<typeof users.findById>>>()
  const updates: { messageId: number; payload: unknown }[] = []
  for (const { message, group } of batch) {
    if (!senders.has(message.sender_id)) senders.set(message.sender_id, await users.findById(ctx, message.sender_id))
    const sender = senders.get(message.sender_id)
    // bots do not hear each other (as in Telegram)
    if (!sender || sender.is_bot === 1) continue
    if (!(await wanted(ctx, botId, bot.username, allowed, message.content))) continue
    const chat = group ? tgGroupChat(group) : tgPrivateChat(sender)
    const facts = { ...message, id: message.message_id!, created_at: Date.parse(message.timestamp), edited_at: null }
    const tg = await tgMessage(ctx, facts, chat, { sender })
    if (tg) updates.push({ messageId: message.message_id!, payload: { message: tg } })
  }
  if (updates.length === 0) return
  const now = ctx.clock.now()
  const toWebhook = await ctx.db.transaction().execute(async (trx) => {
    const last = await repo.nextUpdateId(trx, botId, updates.length)
    // a message that already made its update (a second attempt) is skipped: its id is left unused
    await repo.insertUpdates(
      trx,
      updates.map((u, i) => ({
        bot_id: botId,
        update_id: last - updates.length + 1 + i,
        kind: 'message',
        message_id: u.messageId,
        payload: u.payload,
        now,
      })),
    )
    return queueForWebhook(trx, botId, now)
  })
  announceUpdate(ctx, botId, toWebhook, now)
}

/**
 * Records an update for the bot with its next update id (with `alongside` in the same
 * transaction), and wakes its long polls here and, through the control channel, on every instance.
 * `messageId`: one update per bot and message (a second attempt is a no-op).
 */
export async function recordUpdate(
  ctx: AppContext,
  botId: number,
  kind: string,
  messageId: number | null,
  payload: unknown,
  alongside?: (trx: Db) => Promise<void>,
) {
  const now = ctx.clock.now()
  let toWebhook: boolean
  try {
    toWebhook = await ctx.db.transaction().execute(async (trx) => {
      const updateId = await repo.nextUpdateId(trx, botId)
      await repo.insertUpdate(trx, { bot_id: botId, update_id: updateId, kind, message_id: messageId, payload, now })
      if (alongside) await alongside(trx)
      return queueForWebhook(trx, botId, now)
    })
  } catch (error) {
    if (messageId !== null && isUniqueViolation(error)) return // this message already made its update
    throw error
  }
  announceUpdate(ctx, botId, toWebhook, now)
}

/**
 * A bot with an active webhook gets its new updates moved into the webhook's delivery log by the
 * work queue: the item is written with the updates (bots/webhooks.ts). Whether it was.
 */
async function queueForWebhook(trx: Db, botId: number, now: number): Promise<boolean> {
  if (!(await hasActiveWebhook(trx, botId))) return false
  await enqueueIn(trx, { kind: WEBHOOK_UPDATES_KIND, key: String(botId), dueAt: now }, now)
  return true
}

/** After the commit: long polls anywhere read again; a webhook's move runs. */
function announceUpdate(ctx: AppContext, botId: number, toWebhook: boolean, now: number) {
  ctx.control.publish('bot.update', { botId })
  if (toWebhook) queueWake(ctx, now)
}

/**
 * A message in a group: a command (`/help@mybot`, or `/help` that a bot member takes) or a reply
 * to a bot's message becomes an update for that bot member, as Telegram's bots in privacy mode
 * hear groups; anything else is not for bots. Only commands and replies cost a lookup of the
 * group's bots. Channels are left out (their posts are not addressed to bots).
 */
async function groupMessage(ctx: AppContext, message: MessageView) {
  const command = leadingCommand(message.content)
  if (!command && message.reply_to_id === null) return
  const botIds = (await repo.botMembersOf(ctx.db, message.chat_id)).filter((id) => id !== message.sender_id)
  if (botIds.length === 0) return
  const chat = await chats.findChat(ctx.db, message.chat_id)
  if (chat?.chat_type !== 'group') return
  const repliedTo = !command && message.reply_to_id !== null ? await messages.messageRow(ctx, message.reply_to_id) : undefined
  for (const botId of botIds) {
    if (!command && repliedTo?.sender_id !== botId) continue
    stateOf(ctx).isBot.set(botId, true)
    void enqueue(ctx, botId, { message, group: chat }).catch((err: unknown) => ctx.log.warn({ err, botId }, 'bot group update failed'))
  }
}

/** Wakes this instance's long polls of the bot. The control channel's `bot.update` calls it on every instance (wired at start-up). */
export function wakePolls(ctx: AppContext, botId: number) {
  const waiting = stateOf(ctx).waiters.get(botId)
  if (waiting) for (const resolve of [...waiting]) resolve()
}

/** Ends every long poll at once (the server is closing). */
export function stopPolling(ctx: AppContext) {
  const state = stateOf(ctx)
  state.closing = true
  for (const botId of state.waiters.keys()) wakePolls(ctx, botId)
}

/** Resolves when an update for the bot is recorded on this instance, after `ms`, or when `signal` aborts. */
function nextWake(ctx: AppContext, botId: number, ms: number, signal: AbortSignal): { promise: Promise<void>; cancel: () => void } {
  const { waiters } = stateOf(ctx)
  let done: () => void = () => {}
  const promise = new Promise<void>((resolve) => {
    const set = waiters.get(botId) ?? new Set()
    waiters.set(botId, set)
    const timer = setTimeout(() => done(), ms)
    done = () => {
      clearTimeout(timer)
      set.delete(done)
      if (set.size === 0 && waiters.get(botId) === set) waiters.delete(botId)
      signal.removeEventListener('abort', done)
      resolve()
    }
    set.add(done)
    signal.addEventListener('abort', done, { once: true })
  })
  return { promise, cancel: () => done() }
}

export interface GetUpdatesInput {
  offset?: number
  limit: number
  /** seconds */
  timeout: number
  allowedUpdates?: string[]
}

/**
 * A poll re-reads at this interval: the control channel wakes it at once for updates recorded
 * anywhere, and this covers a nudge lost on the way (pub/sub is only a nudge).
 */
const RECHECK_MS = 1000

/**
 * getUpdates: acknowledges (deletes) the updates below `offset`, then answers the pending ones,
 * waiting up to `timeout` seconds for one when there are none.
 */
export async function getUpdates(ctx: AppContext, botId: number, input: GetUpdatesInput, signal: AbortSignal) {
  // updates go to the webhook while one is set (bots/webhooks.ts), as in Telegram
  if (await hasActiveWebhook(ctx.db, botId)) {
    throw new BotApiError(
      409,
      "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
    )
  }
  if (input.allowedUpdates !== undefined) await repo.setAllowedUpdates(ctx.db, botId, input.allowedUpdates, ctx.clock.now())
  const app = await repo.findApp(ctx.db, botId)
  const chosen = fromJson<string[]>(app?.allowed_updates ?? null)
  const kinds = chosen && chosen.length > 0 ? chosen : UPDATE_KINDS.filter((k) => !NOT_BY_DEFAULT.has(k))

  const offset = input.offset ?? 0
  if (offset > 0) await repo.deleteUpdatesBefore(ctx.db, botId, offset)
  const read = async (): Promise<BotUpdateRow[]> => {
    if (offset >= 0) return repo.listUpdates(ctx.db, botId, offset, input.limit, kinds)
    const rows = await repo.listLastUpdates(ctx.db, botId, Math.min(-offset, input.limit), kinds)
    // a negative offset forgets everything before the updates it answers
    if (rows.length) await repo.deleteUpdatesBefore(ctx.db, botId, rows[0].update_id)
    return rows
  }
  const deadline = Date.now() + input.timeout * 1000
  const state = stateOf(ctx)
  // One poll per bot at a time, as Telegram's: a newer one ends the older with 409, here at once
  // and on the other instances through the control channel.
  const superseded = new AbortController()
  const poll: Poll = { id: randomUUID(), started: Date.now(), controller: superseded }
  state.polls.get(botId)?.controller.abort()
  state.polls.set(botId, poll)
  ctx.control.publish('bot.poll', { botId, id: poll.id, started: poll.started })
  const stop = AbortSignal.any([signal, superseded.signal])
  try {
    for (;;) {
      const left = deadline - Date.now()
      // listen before reading, so an update recorded between the read and the wait still wakes it
      const wait = left > 0 && !state.closing && !stop.aborted ? nextWake(ctx, botId, Math.min(RECHECK_MS, left), stop) : null
      const rows = await read()
      if (superseded.signal.aborted) {
        wait?.cancel()
        throw new BotApiError(409, 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running')
      }
      if (rows.length > 0 || !wait) {
        wait?.cancel()
        return rows.map(presentUpdate)
      }
      await wait.promise
    }
  } finally {
    if (state.polls.get(botId) === poll) state.polls.delete(botId)
  }
}

export const presentUpdate = (row: BotUpdateRow) => ({
  update_id: row.update_id,
  ...(fromJson<Record<string, unknown>>(row.payload) ?? {}),
})

export const pendingUpdateCount = (ctx: AppContext, botId: number) => repo.countUpdates(ctx.db, botId)
export const dropPendingUpdates = (ctx: AppContext, botId: number) => repo.deleteAllUpdates(ctx.db, botId)
