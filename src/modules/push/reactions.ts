/**
 * What push hears: a call ringing for an offline callee (queueForCall); after a new message has committed, each member of the chat (not the sender)
 * who has a push subscription and no live socket anywhere gets an item in the work queue — one per
 * user and chat, due PUSH_DELIVERY_INTERVAL_MS later, so a burst collapses into it — which the
 * queue's runner sends (delivery.ts). Channel
 * posts push nothing (a post is one write whatever the subscriber count; subscribers
 * read it when they come online). Its listeners are registered at start-up (events/reactions.ts).
 */
import type { AppContext } from '../../context.js'
import type { PushNotificationKind } from '../../db/tables.js'
import type { CallView } from '../calls/index.js'
import type { MessageView } from '../messages/index.js'
import { presenceOf } from '../presence/index.js'
import * as repo from './repo.js'
import { nativeSenders } from './senders.js'
import { unsubscribed, type Unsubscribed } from './unsubscribed.js'
import { vapidOf } from './vapid.js'
import { queueWake } from '../../jobs/queue.js'

/** Reads (or makes) the VAPID key and builds the native senders at start, so the key exists before the first subscriber asks for it and a bad configuration fails the start. */
export function preparePush(ctx: AppContext) {
  vapidOf(ctx.config)
  nativeSenders(ctx)
}

/** A committed new message: its chat's offline members with a subscription get a queued push (looked up with the other messages of the turn). */
export const queueForNewMessage = (ctx: AppContext, message: MessageView, now: number) => lookups(ctx).add(message, now)

/**
 * A call that starts ringing for a callee with no live socket: one queue row of its own (chat_id
 * is minus the call id, so it never collapses with a chat's messages), sent while it still rings.
 */
export async function queueForCall(ctx: AppContext, call: CallView, now: number) {
  if (call.status !== 'ringing') return
  const callee = call.receiver_id
  if ((await repo.countOfUser(ctx.db, callee)) === 0) return
  if ((await presenceOf(ctx).onlineAmong([callee])).has(callee)) return
  // a ringing call is due at once: it rings only so long
  await repo.enqueue(ctx.db, [{ user_id: callee, chat_id: -call.call_id, message_id: call.call_id, kind: 'call' }], now, now)
  queueWake(ctx, now)
}

/** `@username` as a word in the text (case-insensitive). */
function mentions(content: string, username: string): boolean {
  const text = content.toLowerCase()
  const needle = `@${username.toLowerCase()}`
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
    const before = at === 0 ? '' : text[at - 1]
    const after = text[at + needle.length] ?? ''
    if (!/[a-z0-9_]/.test(before) && !/[a-z0-9_]/.test(after)) return true
  }
  return false
}

/**
 * The new messages of one event-loop turn, looked up together: under load sends commit in groups
 * (db/sqlite-hot.ts), and one query for a group's chats costs what one per message did, which took
 * a third of the send path's throughput.
 */
class Lookups {
  private pending: { message: MessageView; now: number }[] = []
  /** receivers known to have no subscription (unsubscribed.ts); null with several instances */
  private readonly known: Unsubscribed | null

  constructor(private readonly ctx: AppContext) {
    this.known = unsubscribed(ctx)
  }

  add(message: MessageView, now: number): Promise<void> {
    if (message.message_id === null) return Promise.resolve()
    // A personal chat's only possible recipient is its receiver (none in Saved Messages): a
    // receiver known to have no subscription costs nothing more.
    const receiver = message.receiver_id
    if (receiver !== null && (receiver === message.sender_id || this.known?.has(receiver))) return Promise.resolve()
    this.pending.push({ message, now })
    if (this.pending.length > 1) return Promise.resolve()
    return new Promise((resolve, reject) => setImmediate(() => this.flush().then(resolve, reject)))
  }

  private async flush() {
    let batch = this.pending
    this.pending = []
    const known = this.known
    if (known) {
      // receivers not known yet: one read of who among them has a subscription
      const unknown = [
        ...new Set(
          batch.flatMap(({ message }) => (message.receiver_id === null || known.has(message.receiver_id) ? [] : [message.receiver_id])),
        ),
      ]
      if (unknown.length > 0) await known.learn(unknown, (ids) => repo.subscribedAmong(this.ctx.db, ids))
      batch = batch.filter(({ message }) => message.receiver_id === null || !known.has(message.receiver_id))
      if (batch.length === 0) return
    }
    const members = await repo.subscribedMembers(this.ctx.db, [...new Set(batch.map((b) => b.message.chat_id))])
    if (members.length === 0) return
    const byChat = new Map<number, { id: number; username: string }[]>()
    for (const m of members) {
      const list = byChat.get(m.chat_id)
      if (list) list.push(m)
      else byChat.set(m.chat_id, [m])
    }
    for (const { message, now } of batch) {
      const recipients = (byChat.get(message.chat_id) ?? []).filter((m) => m.id !== message.sender_id)
      if (recipients.length === 0) continue
      // one message's failure does not cost the others theirs
      await queueForMessage(this.ctx, message, recipients, now).catch((err) =>
        this.ctx.log.warn({ err, messageId: message.message_id }, 'could not queue a push for a new message'),
      )
    }
  }
}
const lookupsOf = new WeakMap<AppContext, Lookups>()
function lookups(ctx: AppContext): Lookups {
  let found = lookupsOf.get(ctx)
  if (!found) lookupsOf.set(ctx, (found = new Lookups(ctx)))
  return found
}

/** Queues a new message for those of its chat's `members` (with a subscription) who have no live socket. */
export async function queueForMessage(ctx: AppContext, message: MessageView, members: { id: number; username: string }[], now: number) {
  if (message.message_id === null) return
  const online = await presenceOf(ctx).onlineAmong(members.map((m) => m.id))
  const offline = members.filter((m) => !online.has(m.id))
  if (offline.length === 0) return
  const repliedTo = message.reply_to_id === null ? null : await repo.senderOf(ctx.db, message.reply_to_id)
  const kindFor = (member: { id: number; username: string }): PushNotificationKind => {
    if (repliedTo === member.id) return 'reply'
    if (!message.is_encrypted && mentions(message.content, member.username)) return 'mention'
    return 'message'
  }
  const dueAt = now + ctx.config.pushDeliveryIntervalMs
  await repo.enqueue(
    ctx.db,
    offline.map((m) => ({ user_id: m.id, chat_id: message.chat_id, message_id: message.message_id!, kind: kindFor(m) })),
    now,
    dueAt,
  )
  queueWake(ctx, dueAt)
}
