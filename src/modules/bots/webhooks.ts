/**
 * Outgoing bot webhooks (docs/bots.md).
 *
 * A bot has at most one webhook: a URL, a Standard Webhooks signing secret (`whsec_<base64>`) and
 * optionally Telegram's secret_token. What goes to it is a row of `bot_webhook_deliveries`, the
 * delivery log its owner reads. The work is in the work queue (jobs/queue.ts): a
 * `webhook-updates` item for a bot with updates to move (written with the updates) moves the bot's
 * pending updates (the same queue and update ids getUpdates reads) into the log, and a `webhook`
 * item per lane — a bot and chat — posts that chat's deliveries one after another in id order
 * (one item per lane, held by one instance at a time: the order holds across instances). A failed
 * attempt (no 2xx in 5 s, a refused address, a 3xx: redirects are not followed) is retried by the
 * queue's back-off (WEBHOOK_RETRY_BASE_MS doubling up to an hour, ±25 %) until
 * WEBHOOK_RETRY_FOR_SECONDS (24 h) after the delivery was made; then it is `failed`, and the next
 * of its chat goes. A row is marked only after its answer, so a crash mid-post sends that row again
 * after the restart (at least once at a crash, once otherwise).
 */
import { createHmac, randomBytes } from 'node:crypto'
import type { AppContext } from '../../context.js'
import { fromJson } from '../../db/json.js'
import type { BotWebhookDeliveryRow, BotWebhookRow, UserRow } from '../../db/tables.js'
import { conflict, notFound, validationError } from '../../http/errors.js'
import { keptAliveAgents, outboundRequest, RefusedDestination, refuseUrl, type OutboundPolicy } from '../../lib/outbound-http.js'
import { iso } from '../../lib/time.js'
import { DONE, enqueue, enqueueIn, queueWake, type Outcome, type QueueItem, type QueueKind } from '../../jobs/queue.js'
import { ownBot } from './service.js'
import { NOT_BY_DEFAULT, UPDATE_KINDS } from './updates.js'
import { Params } from './bot-params.js'
import * as botsRepo from './repo.js'
import * as repo from './webhook-repo.js'
import { offsetOf } from '../../db/page.js'
import { isUsable } from '../../policies/accounts.js'

/** how long one attempt may take, connection to answer */
export const DELIVERY_TIMEOUT_MS = 5000
/** the longest wait between two attempts */
const MAX_RETRY_DELAY_MS = 3600_000
/** deliveries of one chat sent one after another in a run before its lane yields */
const LANE_RUN = 200
/** updates per bot moved into the log by one transaction */
const MOVE_UPDATES = 500
const MAX_URL = 2048
const MAX_ERROR = 500

// ---- the webhook

/** A new signing secret: 32 random bytes, `whsec_`-prefixed base64 (the Standard Webhooks form). */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`

/** Why a given secret cannot be used, or null: `whsec_` + base64 of 24 to 64 bytes. */
export function refuseSecret(secret: string): string | null {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret)
  if (!match) return 'secret must be whsec_ followed by base64'
  const bytes = Buffer.from(match[1], 'base64').length
  if (bytes < 24 || bytes > 64) return 'secret must be whsec_ followed by the base64 of 24 to 64 random bytes'
  return null
}

/**
 * Why a webhook URL is refused, or null: an http(s) URL without credentials (https only when
 * WEBHOOK_REQUIRE_HTTPS, on by default with NODE_ENV=production) whose host resolves, and only to
 * public addresses unless WEBHOOK_ALLOW_PRIVATE. Checked again at each attempt on the address the
 * connection uses.
 */
export async function refuseWebhookUrl(ctx: AppContext, raw: string): Promise<string | null> {
  if (raw.length > MAX_URL) return `the URL is longer than ${MAX_URL} characters`
  const refused = await refuseUrl(raw, webhookPolicy(ctx))
  return refused ? `the URL ${refused}` : null
}

const webhookPolicy = (ctx: AppContext): OutboundPolicy => ({
  allowPrivate: ctx.config.webhookAllowPrivate,
  requireHttps: ctx.config.webhookRequireHttps,
})

export interface WebhookInput {
  url: string
  secret?: string
  is_active?: boolean
}

export const presentWebhook = (row: BotWebhookRow) => ({
  bot_id: row.bot_id,
  url: row.url,
  secret: row.secret,
  is_active: row.is_active === 1,
  verified_at: row.verified_at === null ? null : iso(row.verified_at),
})

/**
 * Sets my bot's webhook. Without a secret the webhook keeps the one it has (a new one for a new
 * webhook), so pausing and resuming does not change the key receivers verify with.
 */
export async function setWebhook(ctx: AppContext, me: UserRow, botId: number, input: WebhookInput) {
  await ownBot(ctx, me, botId)
  const refusedUrl = await refuseWebhookUrl(ctx, input.url)
  if (refusedUrl) throw validationError(refusedUrl)
  if (input.secret !== undefined) {
    const refusedSecret = refuseSecret(input.secret)
    if (refusedSecret) throw validationError(refusedSecret)
  }
  const existing = await repo.findWebhook(ctx.db, botId)
  const now = ctx.clock.now()
  const row = await repo.upsertWebhook(ctx.db, {
    bot_id: botId,
    url: input.url,
    secret: input.secret ?? existing?.secret ?? newSecret(),
    secret_token: existing?.secret_token ?? null,
    is_active: input.is_active === false ? 0 : 1,
    verified_at: existing && existing.url === input.url ? existing.verified_at : null,
    last_error_at: existing?.last_error_at ?? null,
    last_error_message: existing?.last_error_message ?? null,
    created_at: now,
    updated_at: now,
  })
  if (row.is_active === 1) await queueBotWork(ctx, botId)
  return presentWebhook(row)
}

/** A webhook set or resumed: the bot's waiting updates and its pending deliveries are queued to go. */
async function queueBotWork(ctx: AppContext, botId: number) {
  const now = ctx.clock.now()
  await ctx.db.transaction().execute(async (trx) => {
    await enqueueIn(trx, { kind: repo.WEBHOOK_UPDATES_KIND, key: String(botId), dueAt: now }, now)
    for (const chatKey of await repo.pendingLanes(trx, botId))
      await enqueueIn(trx, { kind: repo.WEBHOOK_LANE_KIND, key: repo.laneKey(botId, chatKey), dueAt: now }, now)
  })
  queueWake(ctx, now)
}

/** A delivery was added to a chat's lane: the lane's item goes (one already waiting keeps its time). */
const queueLane = (ctx: AppContext, botId: number, chatKey: string) =>
  enqueue(ctx, { kind: repo.WEBHOOK_LANE_KIND, key: repo.laneKey(botId, chatKey), dueAt: ctx.clock.now() })

// ---- deliveries

/** The ordering key of an update: its chat (Telegram's Update objects name it in different places). */
export function chatKeyOfUpdate(payload: unknown): string {
  if (payload === null || typeof payload !== 'object') return 'bot'
  for (const kind of UPDATE_KINDS) {
    if (!Object.hasOwn(payload, kind)) continue
    const inner = (payload as Record<string, unknown>)[kind] as {
      chat?: { id?: unknown }
      message?: { chat?: { id?: unknown } }
      from?: { id?: unknown }
    } | null
    const chatId = inner?.chat?.id ?? inner?.message?.chat?.id ?? inner?.from?.id
    if (typeof chatId === 'number' || typeof chatId === 'string') return `chat:${chatId}`
  }
  return 'bot'
}

/** A custom delivery's ordering key: `data.chat_id` when it names one (then it queues with that chat's updates). */
function chatKeyOfData(data: unknown): string {
  if (data === null || typeof data !== 'object' || Array.isArray(data) || !Object.hasOwn(data, 'chat_id')) return 'custom'
  const chatId = (data as Record<string, unknown>).chat_id
  if (typeof chatId === 'number' && Number.isSafeInteger(chatId)) return `chat:${chatId}`
  if (typeof chatId === 'string' && /^-?[0-9]{1,20}$/.test(chatId)) return `chat:${chatId}`
  return 'custom'
}

const MAX_CUSTOM_BYTES = 256 * 1024

/** webhook/send: queues `{type: "custom", data}` for my bot's webhook (sent while it is active); answers the delivery id. */
export async function sendCustom(ctx: AppContext, me: UserRow, botId: number, data: unknown) {
  await ownBot(ctx, me, botId)
  const webhook = await repo.findWebhook(ctx.db, botId)
  // a paused webhook (is_active false) keeps what is sent meanwhile until it is active again
  if (!webhook) throw conflict('This bot has no webhook: set one with POST /api/bots/{id}/webhook first')
  const body = JSON.stringify({ type: 'custom', data })
  if (Buffer.byteLength(body) > MAX_CUSTOM_BYTES) throw validationError(`data must be at most ${MAX_CUSTOM_BYTES} bytes of JSON`)
  const now = ctx.clock.now()
  const chatKey = chatKeyOfData(data)
  const { id } = await repo.insertDelivery(ctx.db, {
    bot_id: botId,
    chat_key: chatKey,
    kind: 'custom',
    update_id: null,
    payload: body,
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    last_status_code: null,
    last_error: null,
    created_at: now,
    delivered_at: null,
  })
  await queueLane(ctx, botId, chatKey)
  return { delivery_id: Number(id) }
}

export const presentDelivery = (row: BotWebhookDeliveryRow) => ({
  id: Number(row.id),
  kind: row.kind,
  update_id: row.update_id === null ? null : Number(row.update_id),
  status: row.status,
  attempts: row.attempts,
  last_status_code: row.last_status_code,
  last_error: row.last_error,
  next_attempt_at: row.status === 'pending' ? iso(Number(row.next_attempt_at)) : null,
  created_at: iso(Number(row.created_at)),
  delivered_at: row.delivered_at === null ? null : iso(Number(row.delivered_at)),
})

export async function listDeliveries(ctx: AppContext, me: UserRow, botId: number, page: number, perPage: number) {
  await ownBot(ctx, me, botId)
  const { items, total } = await repo.pageOfDeliveries(ctx.db, botId, offsetOf(page, perPage), perPage)
  return { items: items.map(presentDelivery), total }
}

/**
 * Redelivers a delivered or failed delivery: a copy of it (same body, so the same update_id for
 * an update) is queued as a new delivery, last in its chat; the original keeps its history.
 */
export async function redeliver(ctx: AppContext, me: UserRow, botId: number, deliveryId: number) {
  await ownBot(ctx, me, botId)
  const original = await repo.findDelivery(ctx.db, botId, deliveryId)
  if (!original) throw notFound('Delivery not found')
  if (original.status === 'pending') throw conflict('This delivery is still pending: it is being tried')
  if (!(await repo.findWebhook(ctx.db, botId))) throw conflict('This bot has no webhook')
  const now = ctx.clock.now()
  const { id } = await repo.insertDelivery(ctx.db, {
    bot_id: botId,
    chat_key: original.chat_key,
    kind: original.kind,
    update_id: null,
    payload: bodyOf(original),
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    last_status_code: null,
    last_error: null,
    created_at: now,
    delivered_at: null,
  })
  await queueLane(ctx, botId, original.chat_key)
  return { delivery_id: Number(id) }
}

/** The JSON text a delivery posts (jsonb hands PostgreSQL's rows back parsed). */
const bodyOf = (row: Pick<BotWebhookDeliveryRow, 'payload'>): string =>
  typeof row.payload === 'string' ? row.payload : JSON.stringify(row.payload)

// ---- signing and posting

/** The Standard Webhooks signature header value of one message. */
export function sign(secret: string, msgId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64')
  return `v1,${createHmac('sha256', key).update(`${msgId}.${timestamp}.${body}`).digest('base64')}`
}

interface Attempt {
  statusCode: number | null
  error: string | null
  /** a 2xx JSON answer's body: a Bot API call the bot makes by answering (Telegram's webhook reply) */
  reply?: string
}

/** the most of a receiver's answer that is read (a longer one is no webhook reply) */
const MAX_REPLY_BYTES = 256 * 1024

const agents = new WeakMap<AppContext, ReturnType<typeof keptAliveAgents>>()
function agentsOf(ctx: AppContext) {
  let found = agents.get(ctx)
  // kept-alive connections: a busy webhook is not a new TCP (and TLS) handshake per delivery
  if (!found) agents.set(ctx, (found = keptAliveAgents(32)))
  return found
}

/** Posts one delivery; never throws. 2xx is success; a redirect is not followed (a failed attempt). */
async function post(ctx: AppContext, delivery: repo.DueDelivery): Promise<Attempt> {
  const body = bodyOf(delivery)
  const msgId = `msg_${delivery.id}`
  const timestamp = Math.floor(ctx.clock.now() / 1000)
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'user-agent': 'Tern-Webhooks/1',
    'webhook-id': msgId,
    'webhook-timestamp': timestamp,
    'webhook-signature': sign(delivery.secret, msgId, timestamp, body),
  }
  if (delivery.secret_token) headers['x-telegram-bot-api-secret-token'] = delivery.secret_token
  try {
    const response = await outboundRequest(delivery.url, webhookPolicy(ctx), {
      method: 'POST',
      headers,
      body,
      timeoutMs: DELIVERY_TIMEOUT_MS,
      maxResponseBytes: MAX_REPLY_BYTES,
      agents: agentsOf(ctx),
    })
    const status = response.status
    if (status >= 300 && status < 400) return { statusCode: status, error: `redirect (${status}) not followed: set the final URL` }
    if (status < 200 || status >= 300) return { statusCode: status, error: `the receiver answered ${status}` }
    const json = /^application\/json\b/i.test(response.headers['content-type'] ?? '')
    return {
      statusCode: status,
      error: null,
      ...(json && !response.truncated && response.body.length > 0 ? { reply: response.body.toString('utf8') } : {}),
    }
  } catch (err) {
    return { statusCode: null, error: errorText(err as Error & { code?: string }) }
  }
}

function errorText(err: Error & { code?: string }): string {
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`
  if (err instanceof RefusedDestination) return `refused: ${err.message}`
  return (err.code ? `${err.code}: ${err.message}` : err.message).slice(0, MAX_ERROR)
}

// ---- the queue's kinds

/** The default update kinds (getUpdates' own: allowed_updates unset). */
const DEFAULT_KINDS = UPDATE_KINDS.filter((kind) => !NOT_BY_DEFAULT.has(kind))

/** The kind of a Telegram update payload (its one field beside update_id). */
export const updateKindOf = (payload: unknown): string =>
  (payload && typeof payload === 'object' ? Object.keys(payload).find((k) => k !== 'update_id') : undefined) ?? 'message'

/**
 * Moves the bot's pending updates into its delivery log, if its webhook is active, in one
 * transaction per MOVE_UPDATES (inserted there, deleted from the update queue, their lanes queued
 * to go): each update once. Updates of kinds the bot did not ask for (allowed_updates) are
 * dropped, as Telegram drops them.
 */
async function moveUpdates(ctx: AppContext, botId: number, signal: AbortSignal): Promise<void> {
  const bot = await repo.activeWebhookOf(ctx.db, botId)
  if (!bot) return
  const chosen = fromJson<string[]>(bot.allowed_updates ?? null)
  const kinds = new Set<string>(chosen && chosen.length > 0 ? chosen : DEFAULT_KINDS)
  for (let taken = MOVE_UPDATES; taken === MOVE_UPDATES && !signal.aborted; ) {
    const now = ctx.clock.now()
    taken = await ctx.db.transaction().execute(async (trx) => {
      const updates = await trx
        .selectFrom('bot_updates')
        .selectAll()
        .where('bot_id', '=', botId)
        .orderBy('update_id')
        .limit(MOVE_UPDATES)
        .execute()
      if (updates.length === 0) return 0
      const rows = updates
        .filter((u) => kinds.has(u.kind))
        .map((u) => {
          const payload = fromJson<Record<string, unknown>>(u.payload) ?? {}
          return {
            bot_id: botId,
            chat_key: chatKeyOfUpdate(payload),
            kind: 'update' as const,
            update_id: Number(u.update_id),
            payload: JSON.stringify({ update_id: Number(u.update_id), ...payload }),
            status: 'pending' as const,
            attempts: 0,
            next_attempt_at: now,
            last_status_code: null,
            last_error: null,
            created_at: now,
            delivered_at: null,
          }
        })
      await repo.insertUpdateDeliveries(trx, rows)
      await trx
        .deleteFrom('bot_updates')
        .where('bot_id', '=', botId)
        .where('update_id', '<=', updates[updates.length - 1].update_id)
        .execute()
      for (const chatKey of new Set(rows.map((row) => row.chat_key))) {
        await enqueueIn(trx, { kind: repo.WEBHOOK_LANE_KIND, key: repo.laneKey(botId, chatKey), dueAt: now }, now)
      }
      return updates.length
    })
    queueWake(ctx, now)
  }
}

/** What a failed attempt leaves for the queue's hooks: which delivery, and the receiver's status. */
interface FailedAttempt {
  delivery: repo.DueDelivery
  statusCode: number | null
}

/** One attempt at a lane's head; the delivered one is marked, and its reply run. */
async function attempt(ctx: AppContext, delivery: repo.DueDelivery, methods: BotMethods): Promise<Attempt> {
  const result = await post(ctx, delivery)
  if (result.error !== null) return result
  const now = ctx.clock.now()
  await repo.markDelivered(ctx.db, delivery.id, result.statusCode ?? 200, now)
  if (delivery.verified_at === null) {
    await repo.markVerified(ctx.db, delivery.bot_id, now)
    delivery.verified_at = now
  }
  if (result.reply !== undefined) await webhookReply(ctx, delivery.bot_id, result.reply, methods)
  return result
}

/**
 * Telegram's webhook reply: a receiver may answer an update with a Bot API call as JSON
 * (`{"method": "sendMessage", "chat_id": …, "text": …}`, what Telegraf does by default); it is run
 * as the bot, before the chat's next delivery. Its result goes nowhere (as in Telegram); a bad call
 * is logged and dropped.
 */
async function webhookReply(ctx: AppContext, botId: number, text: string, methods: BotMethods) {
  let call: unknown
  try {
    call = JSON.parse(text)
  } catch {
    return
  }
  if (call === null || typeof call !== 'object' || Array.isArray(call) || !Object.hasOwn(call, 'method')) return
  const name = (call as Record<string, unknown>).method
  if (typeof name !== 'string' || name.toLowerCase() === 'getupdates') return
  const method = methods.get(name.toLowerCase())
  const bot = method ? await botsRepo.findAppWithUser(ctx.db, botId) : undefined
  // a bot deactivated or deleted meanwhile calls nothing
  if (!method || !bot || !isUsable(bot)) return
  const params = Params.from(new Map(Object.entries(call as Record<string, unknown>).filter(([key]) => key !== 'method')))
  try {
    await method({ ctx, bot, params, signal: new AbortController().signal })
  } catch (err) {
    ctx.log.info({ err, botId, method: name.slice(0, 64) }, 'a webhook reply failed')
  }
}

/** The lane an item stands for: its bot and chat key (`bot:chat_key`, the key may hold colons). */
function laneOf(item: QueueItem): { botId: number; chatKey: string } {
  const at = item.item_key.indexOf(':')
  return { botId: Number(item.item_key.slice(0, at)), chatKey: item.item_key.slice(at + 1) }
}

/** What the lane does after its head: the next delivery, as new work, or nothing left. */
async function afterHead(ctx: AppContext, botId: number, chatKey: string): Promise<Outcome> {
  const next = await repo.laneHead(ctx.db, botId, chatKey)
  return next
    ? { again: Math.max(ctx.clock.now(), Number(next.next_attempt_at)), fresh: { since: Number(next.created_at), ref: Number(next.id) } }
    : DONE
}

/**
 * Sends a lane's deliveries one after another, from its head: up to LANE_RUN, then the lane goes
 * on as new work (others get their turn). No head (nothing pending, or the webhook is paused or
 * gone): done; setting or resuming the webhook queues its lanes again.
 */
async function runLane(ctx: AppContext, item: QueueItem, methods: BotMethods, signal: AbortSignal): Promise<Outcome> {
  const { botId, chatKey } = laneOf(item)
  for (let sent = 0; sent < LANE_RUN && !signal.aborted; sent++) {
    const head = await repo.laneHead(ctx.db, botId, chatKey)
    if (!head) return DONE
    // a head carried over from before the queue may wait for its retry
    if (Number(head.next_attempt_at) > ctx.clock.now()) return { again: Number(head.next_attempt_at) }
    const result = await attempt(ctx, head, methods)
    if (result.error !== null)
      return { failed: result.error, detail: { delivery: head, statusCode: result.statusCode } satisfies FailedAttempt }
  }
  return afterHead(ctx, botId, chatKey)
}

/**
 * The Bot API's methods by lower-cased name, for webhook replies: given by the wiring
 * (webhook-job.ts), since the methods themselves include this module's setWebhook side.
 */
export type BotMethods = ReadonlyMap<
  string,
  (call: {
    ctx: AppContext
    bot: NonNullable<Awaited<ReturnType<typeof botsRepo.findAppWithUser>>>
    params: Params
    signal: AbortSignal
  }) => Promise<unknown>
>

/** The queue's kinds of webhooks: moving a bot's updates into its log, and posting a lane's deliveries. */
export function webhookKinds(ctx: AppContext, methods: BotMethods): QueueKind[] {
  const recordFailure = async ({ delivery, statusCode }: FailedAttempt, error: string, nextAt: number | null) => {
    await repo.markAttemptFailed(ctx.db, delivery.id, statusCode, error, nextAt)
    await repo.recordWebhookError(ctx.db, delivery.bot_id, ctx.clock.now(), error)
  }
  return [
    {
      kind: repo.WEBHOOK_UPDATES_KIND,
      job: 'webhook-delivery',
      summary: "moves a bot's new updates into its webhook's delivery log",
      policy: { firstMs: 1000, maxMs: 60_000, jitter: 0, maxAttempts: null, maxAgeMs: null },
      async run(item, signal) {
        await moveUpdates(ctx, Number(item.item_key), signal)
        return DONE
      },
    },
    {
      kind: repo.WEBHOOK_LANE_KIND,
      job: 'webhook-delivery',
      summary: "posts a bot's deliveries of one chat to its webhook, signed, in order",
      policy: {
        firstMs: ctx.config.webhookRetryBaseMs,
        maxMs: MAX_RETRY_DELAY_MS,
        jitter: 0.25,
        maxAttempts: null,
        maxAgeMs: ctx.config.webhookRetryForSeconds * 1000,
      },
      // an attempt may wait 5 s for a slow receiver: lanes leave the other kinds room
      maxRunning: 16,
      run: (item, signal) => runLane(ctx, item, methods, signal),
      async retrying(_item, info) {
        await recordFailure(info.detail as FailedAttempt, info.error, info.retryAt)
      },
      async gaveUp(item, info) {
        const failed = info.detail as FailedAttempt | undefined
        if (!failed) return DONE
        await recordFailure(failed, info.error, null)
        ctx.log.info(
          { botId: failed.delivery.bot_id, deliveryId: failed.delivery.id, attempts: info.attempts },
          'bot webhook delivery given up',
        )
        const { botId, chatKey } = laneOf(item)
        return afterHead(ctx, botId, chatKey)
      },
    },
  ]
}

// ---- the Bot API's side

/** Telegram's setWebhook: the webhook (url, secret_token) for the bot itself; a new one gets a signing secret. */
export async function setWebhookForBot(ctx: AppContext, botId: number, input: { url: string; secretToken: string | null }) {
  const existing = await repo.findWebhook(ctx.db, botId)
  const now = ctx.clock.now()
  await repo.upsertWebhook(ctx.db, {
    bot_id: botId,
    url: input.url,
    secret: existing?.secret ?? newSecret(),
    secret_token: input.secretToken,
    is_active: 1,
    verified_at: existing && existing.url === input.url ? existing.verified_at : null,
    last_error_at: existing?.last_error_at ?? null,
    last_error_message: existing?.last_error_message ?? null,
    created_at: now,
    updated_at: now,
  })
  await queueBotWork(ctx, botId)
}

/**
 * Telegram's deleteWebhook: the webhook is removed and its undelivered updates go back to the
 * update queue for getUpdates (with their update ids), or are dropped with drop_pending_updates.
 */
export async function removeWebhookForBot(ctx: AppContext, botId: number, dropPending: boolean) {
  await ctx.db.transaction().execute(async (trx) => {
    await repo.deleteWebhook(trx, botId)
    if (dropPending) {
      await trx.deleteFrom('bot_updates').where('bot_id', '=', botId).execute()
    } else {
      const pending = await repo.pendingUpdateDeliveries(trx, botId)
      for (const row of pending) {
        if (row.update_id === null) continue
        const { update_id: _id, ...payload } = fromJson<Record<string, unknown>>(row.payload) ?? {}
        await trx
          .insertInto('bot_updates')
          .values({
            bot_id: botId,
            update_id: Number(row.update_id),
            kind: updateKindOf(payload),
            message_id: null,
            payload: JSON.stringify(payload),
            created_at: Number(row.created_at),
          })
          .onConflict((oc) => oc.columns(['bot_id', 'update_id']).doNothing())
          .execute()
      }
    }
    await repo.deletePendingUpdateDeliveries(trx, botId)
  })
}
