/**
 * The push-delivery job (a cluster job: one instance at a time): takes due rows of the push queue
 * (messages, and ringing calls: deliverCall)
 * in batches and sends each as one notification to the user's live subscriptions. Before sending
 * it looks again: a user who came online, a muted chat (settings `muted_chats`, or
 * `notifications: false`), a message deleted meanwhile or a chat the user left send nothing. A
 * 404/410 from a push service deletes that subscription; other failures retry the row with
 * exponential backoff, up to PUSH_MAX_ATTEMPTS attempts. A message queued onto a row while it was
 * being sent keeps the row for the next run.
 */
import type { AppContext } from '../../context.js'
import type { PushKind, PushQueueRow, PushSubscriptionRow } from '../../db/tables.js'
import * as calls from '../calls/index.js'
import { presenceOf } from '../presence/index.js'
import { notificationPrefs } from '../settings/index.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'
import { sendTo, type PushSender, type WebPushOptions } from './send.js'
import { nativeSenders } from './senders.js'

const BATCH = 100
/** batches per run at most; the rest waits for the next run */
const MAX_BATCHES = 20
/** rows sent at once */
const CONCURRENCY = 8
/** the first retry waits this long, doubling per attempt up to RETRY_MAX_MS */
const RETRY_BASE_MS = 5000
const RETRY_MAX_MS = 15 * 60_000
/** how long a push service keeps a message notification for an offline device */
const MESSAGE_TTL_SECONDS = 24 * 3600
/** the body shown for a message, at most */
const BODY_CHARS = 200

export interface DeliveryStats {
  sent: number
  failed: number
  dropped: number
}

export async function deliverQueued(ctx: AppContext, signal: AbortSignal): Promise<DeliveryStats> {
  const stats: DeliveryStats = { sent: 0, failed: 0, dropped: 0 }
  const senders = nativeSenders(ctx)
  const unconfigured = new Set<PushKind>()
  for (let batch = 0; batch < MAX_BATCHES && !signal.aborted; batch++) {
    const now = ctx.clock.now()
    const rows = await repo.due(ctx.db, now, BATCH)
    if (rows.length === 0) break
    const online = await presenceOf(ctx).onlineAmong([...new Set(rows.map((r) => r.user_id))])
    for (let i = 0; i < rows.length; i += CONCURRENCY) {
      await Promise.all(rows.slice(i, i + CONCURRENCY).map((row) =>
        deliverRow(ctx, row, online.has(row.user_id), senders, unconfigured, stats).catch((err) => {
          // one bad row must not stop the rest: it is retried like a failed send
          ctx.log.warn({ err, queueId: row.id }, 'push delivery of a queued row failed')
          return retry(ctx, row)
        }),
      ))
    }
    if (rows.length < BATCH) break
  }
  for (const platform of unconfigured) {
    ctx.log.info({ platform }, `push: no ${platform} sender is configured; native ${platform} tokens are kept and skipped`)
  }
  return stats
}

async function retry(ctx: AppContext, row: PushQueueRow) {
  const attempts = row.attempts + 1
  if (attempts >= ctx.config.pushMaxAttempts) {
    ctx.log.info({ queueId: row.id, userId: row.user_id, attempts }, 'push notification given up')
    await repo.dequeue(ctx.db, row.id, row.message_id, row.count)
    return
  }
  const delay = Math.min(RETRY_BASE_MS * 2 ** (attempts - 1), RETRY_MAX_MS)
  await repo.retryLater(ctx.db, row.id, row.message_id, attempts, ctx.clock.now() + delay)
}

async function deliverRow(
  ctx: AppContext,
  row: PushQueueRow,
  isOnline: boolean,
  senders: ReadonlyMap<PushKind, PushSender>,
  unconfigured: Set<PushKind>,
  stats: DeliveryStats,
) {
  const drop = async () => {
    stats.dropped++
    await repo.dequeue(ctx.db, row.id, row.message_id, row.count)
  }
  if (isOnline) return drop()
  const prefs = await notificationPrefs(ctx, row.user_id)
  if (!prefs.enabled || prefs.mutedChats.has(row.chat_id)) return drop()
  if (row.kind === 'call') return deliverCall(ctx, row, senders, unconfigured, stats, drop)
  const message = await repo.messageForPush(ctx.db, row.message_id)
  if (!message || message.deleted_for_all === 1 || !(await repo.isMember(ctx.db, row.chat_id, row.user_id))) return drop()
  const subs = await repo.liveOfUser(ctx.db, row.user_id, ctx.clock.now() - ctx.config.sessionTtlDays * 86_400_000)
  if (subs.length === 0) return drop()

  const body = message.is_encrypted === 1 || message.content === '' ? undefined : truncate(message.content, BODY_CHARS)
  const payload = JSON.stringify({
    type: row.kind,
    chat_id: message.chat_id,
    message_id: message.id,
    sender: { user_id: message.sender_id, username: message.sender_username, display_name: message.sender_display_name },
    ...(message.chat_type === 'group' && message.chat_title ? { chat_title: message.chat_title } : {}),
    ...(body === undefined ? {} : { body }),
    count: row.count,
  })
  await sendToAll(ctx, row, subs, payload, { topic: `chat-${message.chat_id}`, ttlSeconds: MESSAGE_TTL_SECONDS, urgency: 'high' }, senders, unconfigured, stats)
}

/** A ringing call: pushed while it still rings, with a lifetime no longer than the ring. */
async function deliverCall(
  ctx: AppContext,
  row: PushQueueRow,
  senders: ReadonlyMap<PushKind, PushSender>,
  unconfigured: Set<PushKind>,
  stats: DeliveryStats,
  drop: () => Promise<void>,
) {
  const callee = await users.findById(ctx, row.user_id)
  const call = callee ? await calls.get(ctx, callee, row.message_id).catch(() => null) : null
  if (call?.status !== 'ringing') return drop()
  const subs = await repo.liveOfUser(ctx.db, row.user_id, ctx.clock.now() - ctx.config.sessionTtlDays * 86_400_000)
  if (subs.length === 0) return drop()
  const payload = JSON.stringify({
    type: 'call',
    call_id: call.call_id,
    call_type: call.call_type,
    sender: { user_id: call.caller.user_id, username: call.caller.username, display_name: call.caller.display_name },
  })
  const options = { topic: `call-${call.call_id}`, ttlSeconds: ctx.config.callRingTimeoutSeconds, urgency: 'high' as const }
  await sendToAll(ctx, row, subs, payload, options, senders, unconfigured, stats)
}

/** Sends one notification to each subscription; a gone one is deleted, a failure retries the row. */
async function sendToAll(
  ctx: AppContext,
  row: PushQueueRow,
  subs: PushSubscriptionRow[],
  payload: string,
  options: WebPushOptions,
  senders: ReadonlyMap<PushKind, PushSender>,
  unconfigured: Set<PushKind>,
  stats: DeliveryStats,
) {
  const outcomes = await Promise.all(subs.map((sub) => sendTo(ctx, sub, payload, options, senders)))
  let failed = false
  for (const [i, outcome] of outcomes.entries()) {
    if (outcome === 'sent') stats.sent++
    else if (outcome === 'gone') await repo.deleteById(ctx.db, subs[i].id)
    else if (outcome === 'skipped') unconfigured.add(subs[i].kind)
    else {
      stats.failed++
      failed = true
    }
  }
  if (failed) await retry(ctx, row)
  else await repo.dequeue(ctx.db, row.id, row.message_id, row.count)
}

/** At most `max` characters, cut on a code point boundary, with an ellipsis when cut. */
function truncate(text: string, max: number): string {
  const chars = [...text]
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`
}
