/**
 * What members do to existing messages: edit, delete (for me or for everyone), read, react,
 * forward; and typing. Each change and its events commit in one transaction; frames go out after.
 */
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { forbidden, validationError } from '../../http/errors.js'
import { iso } from '../../lib/time.js'
import * as updates from '../../realtime/updates.js'
import * as blocks from '../blocks/service.js'
import * as chats from '../chats/service.js'
import * as users from '../users/service.js'
import type { Draft } from './draft.js'
import * as repo from './repo.js'
import type { MessageView } from './schemas.js'
import { presentOne, publishNew, visibleMessage, writeMessage, type Origin } from './service.js'

/** Members who may hear about my action in this chat: in a personal chat, not a peer who blocked me. */
async function listeners(ctx: AppContext, chat: chats.MemberChat, me: number): Promise<number[]> {
  const audience = await chats.audience(ctx.db, chat)
  const other = chats.otherMember(chat, me)
  if (other !== null && other !== me && (await blocks.hasBlocked(ctx.db, other, me))) return audience.filter((id) => id !== other)
  return audience
}

export async function edit(ctx: AppContext, me: UserRow, messageId: number, content: string): Promise<MessageView> {
  if (!content.trim()) throw validationError('content must not be empty')
  const { row, chat } = await visibleMessage(ctx, me, messageId)
  if (row.sender_id !== me.id) throw forbidden('Only the sender can edit a message')
  await blocks.assertNotBlocked(ctx.db, chats.otherMember(chat, me.id), me.id)
  const audience = await chats.audience(ctx.db, chat)
  const now = ctx.clock.now()
  const { message, recorded } = await ctx.db.transaction().execute(async (trx) => {
    const updated = await repo.updateMessage(trx, row.id, { content, edited_at: now })
    const message = await presentOne(trx, updated, me)
    return { message, recorded: await updates.record(trx, audience, 'message.edited', { message }, now, ctx.config.updateLogKeep) }
  })
  ctx.fanout.publish(updates.framesOf(recorded, 'message.edited', { message }))
  return message
}

/** Delete for me (hidden from my history only), or for everyone (the sender only). */
export async function remove(ctx: AppContext, me: UserRow, messageId: number, forAll: boolean) {
  // Deleting for me twice is fine: the second time finds the message already hidden.
  const { row, chat } = await visibleMessage(ctx, me, messageId, { hidden: !forAll })
  const now = ctx.clock.now()
  const event = { chat_id: chat.id, message_id: row.id, deleted_for_all: forAll }
  if (!forAll) {
    const recorded = await ctx.db.transaction().execute(async (trx) => {
      await repo.hide(trx, me.id, row.id, now)
      return updates.record(trx, [me.id], 'message.deleted', event, now, ctx.config.updateLogKeep)
    })
    ctx.fanout.publish(updates.framesOf(recorded, 'message.deleted', event))
    return { message_id: row.id, deleted_for_all: false }
  }

  if (row.sender_id !== me.id) throw forbidden('Only the sender can delete a message for everyone')
  await blocks.assertNotBlocked(ctx.db, chats.otherMember(chat, me.id), me.id)
  const audience = await chats.audience(ctx.db, chat)
  const frames = await ctx.db.transaction().execute(async (trx) => {
    // The text goes too: "deleted for everyone" means nobody can read it any more, here included.
    await repo.updateMessage(trx, row.id, {
      deleted_for_all: 1,
      content: '',
      encrypted_content: null,
      emoji: null,
      emoji_file: null,
    })
    const deleted = updates.framesOf(await updates.record(trx, audience, 'message.deleted', event, now, ctx.config.updateLogKeep), 'message.deleted', event)
    if (chat.last_message_id !== row.id) return deleted
    const changed = { chat_id: chat.id, last_message_id: await chats.refreshLastMessage(trx, chat.id) }
    return [...deleted, ...updates.framesOf(await updates.record(trx, audience, 'chat.updated', changed, now, ctx.config.updateLogKeep), 'chat.updated', changed)]
  })
  ctx.fanout.publish(frames)
  return { message_id: row.id, deleted_for_all: true }
}

/** Reads everything up to this message in its chat; tells every member once the position moves. */
export async function read(ctx: AppContext, me: UserRow, messageId: number) {
  const { row, chat } = await visibleMessage(ctx, me, messageId)
  const now = ctx.clock.now()
  const recipients = await listeners(ctx, chat, me.id)
  const { moved, recorded, event } = await ctx.db.transaction().execute(async (trx) => {
    const event = { chat_id: chat.id, reader_id: me.id, message_id: row.id, read_at: iso(now) }
    const moved = await chats.advanceRead(trx, chat.id, me.id, row.seq, now)
    if (!moved) return { moved, recorded: [], event }
    await repo.markReadRange(trx, chat.id, me.id, chat.read_seq, row.seq, now)
    return { moved, recorded: await updates.record(trx, recipients, 'message.read', event, now, ctx.config.updateLogKeep), event }
  })
  ctx.fanout.publish(updates.framesOf(recorded, 'message.read', event))
  return {
    chat_id: chat.id,
    message_id: row.id,
    read_at: iso(moved ? now : (chat.read_at ?? now)),
    unread_count: await chats.unreadCount(ctx.db, chat.id, me.id),
  }
}

/** Sets (or, with null, removes) my one reaction to a message. */
export async function react(ctx: AppContext, me: UserRow, messageId: number, emoji: string | null) {
  const { row, chat } = await visibleMessage(ctx, me, messageId)
  await blocks.assertNotBlocked(ctx.db, chats.otherMember(chat, me.id), me.id)
  const audience = await chats.audience(ctx.db, chat)
  const now = ctx.clock.now()
  const { event, recorded } = await ctx.db.transaction().execute(async (trx) => {
    await repo.setReaction(trx, row.id, me.id, emoji, now)
    const reactions = (await repo.reactionsOf(trx, [row.id])).get(row.id) ?? {}
    const event = { chat_id: chat.id, message_id: row.id, reactions }
    return { event, recorded: await updates.record(trx, audience, 'reaction.updated', event, now, ctx.config.updateLogKeep) }
  })
  ctx.fanout.publish(updates.framesOf(recorded, 'reaction.updated', event))
  return { ...event, my_reaction: emoji }
}

/** Copies a message I can see into another chat of mine, naming its original sender. */
export async function forward(ctx: AppContext, me: UserRow, messageId: number, targetChatId: number): Promise<MessageView> {
  const { row } = await visibleMessage(ctx, me, messageId)
  const target = await chats.requireMember(ctx, me.id, targetChatId)
  await blocks.assertNotBlocked(ctx.db, chats.otherMember(target, me.id), me.id)
  // A forward of a forward still names the first sender.
  let origin: Origin
  if (row.forwarded_from !== null) {
    origin = { forwarded_from: row.forwarded_from, forwarded_from_id: row.forwarded_from_id ?? row.sender_id }
  } else {
    const sender = await users.findById(ctx, row.sender_id)
    origin = { forwarded_from: sender ? sender.display_name || sender.username : 'Deleted account', forwarded_from_id: row.sender_id }
  }
  const draft: Draft = {
    content: row.content,
    reply_to_id: null,
    is_encrypted: row.is_encrypted === 1,
    encrypted_content: row.encrypted_content,
    encryption_key_id: row.encryption_key_id,
    emoji: row.emoji,
    emoji_file: row.emoji_file,
    emoji_size: row.emoji_size,
    emoji_count: row.emoji_count,
  }
  const now = ctx.clock.now()
  const { message, recorded } = await ctx.db.transaction().execute((trx) => writeMessage(ctx, trx, target, me, draft, null, origin, now))
  publishNew(ctx, message, recorded)
  return message
}

/** Typing is ephemeral: a frame to the other members, not logged; it expires on its own. */
export async function typing(ctx: AppContext, me: UserRow, chatId: number, isTyping: boolean) {
  const chat = await chats.requireMember(ctx, me.id, chatId)
  const recipients = (await listeners(ctx, chat, me.id)).filter((id) => id !== me.id)
  ctx.typing.set(chat.id, me.id, isTyping, recipients)
  return { chat_id: chat.id, is_typing: isTyping }
}
