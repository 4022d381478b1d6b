/**
 * Push delivery: the work queue's kind `push` (jobs/queue.ts; an item per user and chat, holding
 * the newest message of a burst and how many it stands for; or a ringing call: deliverCall) sends
 * each due item as one notification to the user's live subscriptions. Before sending it looks
 * again: a user who came online, a muted chat (settings `muted_chats`, or `notifications: false`),
 * a message deleted meanwhile or a chat the user left send nothing. A 404/410 from a push service
 * deletes that subscription; other failures retry the item by the queue's back-off (5 s, doubling
 * up to 15 min), up to PUSH_MAX_ATTEMPTS attempts. A message queued onto an item while it was
 * being sent keeps the item for another run.
 */
import type { AppContext } from '../../context.js'
import type { PushKind, PushSubscriptionRow } from '../../db/tables.js'
import { DONE, drain, type Outcome, type QueueItem, type QueueKind } from '../../jobs/queue.js'
import * as calls from '../calls/index.js'
import { presenceOf } from '../presence/index.js'
import { notificationPrefs } from '../settings/index.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'
import { sendTo, type PushSender, type WebPushOptions } from './send.js'
import { nativeSenders } from './senders.js'

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

type Row = repo.QueuedPush & { id: number }

/** The queue's kind for push notifications; `stats` counts what its runs did. */
export function pushKind(ctx: AppContext, stats: DeliveryStats = { sent: 0, failed: 0, dropped: 0 }): QueueKind {
  return {
    kind: repo.PUSH_KIND,
    job: 'push-delivery',
    summary: 'sends a queued push notification (new messages for users with no live socket, collapsed per chat; ringing calls)',
    policy: { firstMs: RETRY_BASE_MS, maxMs: RETRY_MAX_MS, jitter: 0, maxAttempts: ctx.config.pushMaxAttempts, maxAgeMs: null },
    // a push service may take PUSH_TIMEOUT_SECONDS: pushes leave the other kinds room
    maxRunning: 8,
    run: (item) => deliverItem(ctx, item, stats),
  }
}

/** Sends every push notification due now, here (tests and tools; the queue's runner does it by itself). */
export async function deliverQueued(ctx: AppContext, signal: AbortSignal): Promise<DeliveryStats> {
  const stats: DeliveryStats = { sent: 0, failed: 0, dropped: 0 }
  await drain(ctx, pushKind(ctx, stats), signal)
  return stats
}

const FAILED: Outcome = { failed: 'a push service did not take the notification' }

async function deliverItem(ctx: AppContext, item: QueueItem, stats: DeliveryStats): Promise<Outcome> {
  const row: Row = { id: item.id, ...repo.pushOfItem(item) }
  const online = (await presenceOf(ctx).onlineAmong([row.user_id])).has(row.user_id)
  const unconfigured = new Set<PushKind>()
  const outcome = await deliverRow(ctx, row, online, nativeSenders(ctx), unconfigured, stats)
  for (const platform of unconfigured) {
    ctx.log.info({ platform }, `push: no ${platform} sender is configured; native ${platform} tokens are kept and skipped`)
  }
  return outcome
}

async function deliverRow(
  ctx: AppContext,
  row: Row,
  isOnline: boolean,
  senders: ReadonlyMap<PushKind, PushSender>,
  unconfigured: Set<PushKind>,
  stats: DeliveryStats,
): Promise<Outcome> {
  const drop = async () => {
    stats.dropped++
    return DONE
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
  return sendToAll(
    ctx,
    subs,
    payload,
    { topic: `chat-${message.chat_id}`, ttlSeconds: MESSAGE_TTL_SECONDS, urgency: 'high' },
    senders,
    unconfigured,
    stats,
  )
}

/** A ringing call: pushed while it still rings, with a lifetime no longer than the ring. */
async function deliverCall(
  ctx: AppContext,
  row: Row,
  senders: ReadonlyMap<PushKind, PushSender>,
  unconfigured: Set<PushKind>,
  stats: DeliveryStats,
  drop: () => Promise<Outcome>,
): Promise<Outcome> {
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
  return sendToAll(ctx, subs, payload, options, senders, unconfigured, stats)
}

/** Sends one notification to each subscription; a gone one is deleted, a failure retries the item. */
async function sendToAll(
  ctx: AppContext,
  subs: PushSubscriptionRow[],
  payload: string,
  options: WebPushOptions,
  senders: ReadonlyMap<PushKind, PushSender>,
  unconfigured: Set<PushKind>,
  stats: DeliveryStats,
): Promise<Outcome> {
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
  return failed ? FAILED : DONE
}

/** At most `max` characters, cut on a code point boundary, with an ellipsis when cut. */
function truncate(text: string, max: number): string {
  const chars = [...text]
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`
}
