/**
 * What push hears: a call ringing for an offline callee (queueForCall); after a new message has committed, each member of the chat (not the sender)
 * who has a push subscription and no live socket anywhere gets a row in the push queue — one per
 * user and chat, so a burst collapses — which the push-delivery job sends (delivery.ts). Channel
 * posts push nothing (DESIGN §6: a post is one write whatever the subscriber count; subscribers
 * read it when they come online). Registered by one line in http/mounts.ts beside the gateway.
 */
import type { AppContext } from '../../context.js'
import type { PushNotificationKind } from '../../db/tables.js'
import type { CallView } from '../calls/schemas.js'
import type { MessageView } from '../messages/schemas.js'
import { presenceOf } from '../presence/service.js'
import * as repo from './repo.js'
import { nativeSenders } from './senders.js'
import { vapidOf } from './vapid.js'

export function registerPushReactions(ctx: AppContext) {
  // generated (or read) at start, so the key exists before the first subscriber asks for it
  vapidOf(ctx.config)
  nativeSenders(ctx)
  ctx.events.on('message.new', (event) => queueForMessage(ctx, event.payload.message, event.at))
  ctx.events.on('call.incoming', (event) => queueForCall(ctx, event.payload.call, event.at))
}

/**
 * A call that starts ringing for a callee with no live socket: one queue row of its own (chat_id
 * is minus the call id, so it never collapses with a chat's messages), sent while it still rings.
 */
export async function queueForCall(ctx: AppContext, call: CallView, now: number) {
  if (call.status !== 'ringing') return
  const callee = call.receiver_id
  if ((await repo.countOfUser(ctx.db, callee)) === 0) return
  if ((await presenceOf(ctx).onlineAmong([callee])).has(callee)) return
  await repo.enqueue(ctx.db, [{ user_id: callee, chat_id: -call.call_id, message_id: call.call_id, kind: 'call' }], now)
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

export async function queueForMessage(ctx: AppContext, message: MessageView, now: number) {
  if (message.message_id === null) return
  const members = await repo.subscribedMembers(ctx.db, message.chat_id, message.sender_id)
  if (members.length === 0) return
  const online = await presenceOf(ctx).onlineAmong(members.map((m) => m.id))
  const offline = members.filter((m) => !online.has(m.id))
  if (offline.length === 0) return
  const repliedTo = message.reply_to_id === null ? null : await repo.senderOf(ctx.db, message.reply_to_id)
  const kindFor = (member: { id: number; username: string }): PushNotificationKind => {
    if (repliedTo === member.id) return 'reply'
    if (!message.is_encrypted && mentions(message.content, member.username)) return 'mention'
    return 'message'
  }
  await repo.enqueue(ctx.db, offline.map((m) => ({ user_id: m.id, chat_id: message.chat_id, message_id: message.message_id!, kind: kindFor(m) })), now)
}
