/**
 * What members do to existing messages: edit, delete (for me or for everyone), read, react,
 * forward; and typing. Each change and its events commit in one transaction; frames go out after.
 */
import type { AppContext } from '../../context.js'
import { isSingleEmoji } from '../../lib/emoji.js'
import type { Db } from '../../db/database.js'
import type { ChatRow, MessageRow, UserRow } from '../../db/tables.js'
import { forbidden, notFound, validationError } from '../../http/errors.js'
import { iso } from '../../lib/time.js'
import { inTransaction, type Outbox } from '../../events/outbox.js'
import { isPersonal, personalMembers } from '../../realtime/chat-ref.js'
import { can, mayPost } from '../../policies/chats.js'
import * as chats from '../chats/index.js'
import * as communities from '../communities/index.js'
import * as users from '../users/index.js'
import type { Draft, Origin } from './draft.js'
import * as repo from './repo.js'
import type { MessageView } from './schemas.js'
import { assertMaySend, assertNotBlockedByPeer, blockedByPeer, writeMessage } from './posting.js'
import { presentOne, readableMessage, visibleMessage } from './service.js'

/*
 * Lock order. On PostgreSQL every transaction on a chat takes its rows in one order: the chat's
 * row, then members' rows, then messages' rows, then the members' update logs (a send: the chat's
 * row for its seq, then the sender's member row; a read: the reader's member row, then the
 * messages it marks read). A change to a message of a group or channel writes the chat's row for
 * its event (the chat's own log), so it takes that row first, before the message's. Taken after
 * it, a reaction waited for a send's chat row while a read, waiting behind the send for a member
 * row, waited for the reaction's message row: a deadlock, and a 500 (found by the
 * conformance run; test/conformance/group-lock-order.test.ts). A personal chat's events go to the
 * members' update logs, which come after the message's row anyway.
 */
async function takeGroupChat(db: Db, chat: ChatRow) {
  if (!isPersonal(chat)) await chats.lockChat(db, chat.id)
}

export async function edit(ctx: AppContext, me: UserRow, messageId: number, content: string): Promise<MessageView> {
  if (!content.trim()) throw validationError('content must not be empty')
  const { row, chat } = await visibleMessage(ctx, me, messageId)
  if (row.sender_id !== me.id) throw forbidden('Only the sender can edit a message')
  // an admin who lost the role can no longer change what the channel shows
  if (!mayPost(chat, chat.role)) throw forbidden('Only the owner and admins edit channel posts')
  await assertNotBlockedByPeer(ctx.db, chat, me.id)
  return inTransaction(ctx, async (trx, events) => {
    await takeGroupChat(trx, chat)
    const updated = await repo.updateMessage(trx, row.id, { content, edited_at: events.now })
    // Deleted for everyone since it was looked up (the update waited for that delete to commit):
    // the edit would put text back on a message nobody may read, and its event would follow the
    // deletion (test/conformance/delete-race.test.ts). Thrown, the update is rolled back.
    if (updated.deleted_for_all === 1) throw notFound('Message not found')
    const message = await presentOne(trx, updated, me)
    await events.toChat(chat, 'message.edited', { message })
    return message
  })
}

/**
 * Delete for me (hidden from my history only), or for everyone: the sender, or in a group or
 * channel an owner or admin whose rank is above the sender's (the permission table).
 */
export async function remove(ctx: AppContext, me: UserRow, messageId: number, forAll: boolean) {
  // Deleting for me twice is fine: the second time finds the message already hidden.
  const { row, chat } = await visibleMessage(ctx, me, messageId, { hidden: !forAll })
  const event = { chat_id: chat.id, message_id: row.id, deleted_for_all: forAll }
  if (!forAll) {
    await inTransaction(ctx, async (trx, events) => {
      await repo.hide(trx, me.id, row.id, events.now)
      await events.toUsers([me.id], 'message.deleted', event)
    })
    return { message_id: row.id, deleted_for_all: false }
  }

  if (row.sender_id !== me.id) {
    const senderRole = isPersonal(chat) ? null : await communities.roleOf(ctx.db, chat.id, row.sender_id)
    if (isPersonal(chat) || !can(chat, chat.role, 'delete_others', senderRole ?? 'member')) {
      throw forbidden('Only the sender, or an admin above them, can delete a message for everyone')
    }
  }
  await assertNotBlockedByPeer(ctx.db, chat, me.id)
  await inTransaction(ctx, (_trx, events) => eraseForAll(events, chat, row))
  return { message_id: row.id, deleted_for_all: true }
}

/**
 * Deletes a message for everyone inside the caller's unit of work, with its events: the one way a
 * message is deleted for all, whether its sender, a chat admin or a platform moderator does it.
 * The caller has checked who may.
 */
export async function eraseForAll(events: Outbox, chat: ChatRow, row: Pick<MessageRow, 'id'>) {
  // The chat's row is taken first (the lock order above), so that no send comes in between the
  // message going and the last message being chosen. In a personal chat, taken after the
  // message's row and the members' update logs it deadlocked with a concurrent send on PostgreSQL
  // (40P01, a 500; found by the conformance run, test/conformance/delete-race.test.ts).
  await chats.lockChat(events.db, chat.id)
  // The text goes too: "deleted for everyone" means nobody can read it any more, here included.
  await repo.updateMessage(events.db, row.id, {
    deleted_for_all: 1,
    content: '',
    encrypted_content: null,
    emoji: null,
    emoji_file: null,
  })
  const last = await chats.refreshLastMessage(events.db, chat.id)
  await events.toChat(chat, 'message.deleted', { chat_id: chat.id, message_id: row.id, deleted_for_all: true })
  if (chat.last_message_id !== row.id) return
  await events.toChat(chat, 'chat.updated', { chat_id: chat.id, last_message_id: last })
}

/**
 * Reads everything up to this message in its chat. Once the position moves, `message.read` goes to
 * both members of a personal chat (a block included: how far each has read is the chat's state,
 * which both see on reload too); in a group or channel only to the reader's own devices (their
 * unread count), not to every member.
 */
export async function read(ctx: AppContext, me: UserRow, messageId: number) {
  const { row, chat } = await visibleMessage(ctx, me, messageId)
  const now = ctx.clock.now()
  const recipients = isPersonal(chat) ? personalMembers(chat) : [me.id]
  const moved = await inTransaction(
    ctx,
    async (trx, events) => {
      if (!(await chats.advanceRead(trx, chat.id, me.id, row.seq, now))) return false
      await repo.markReadRange(trx, chat.id, me.id, chat.read_seq, row.seq, now)
      await events.toUsers(recipients, 'message.read', { chat_id: chat.id, reader_id: me.id, message_id: row.id, read_at: iso(now) })
      return true
    },
    now,
  )
  return {
    chat_id: chat.id,
    message_id: row.id,
    read_at: iso(moved ? now : (chat.read_at ?? now)),
    unread_count: await chats.unreadCount(ctx.db, chat.id, me.id),
  }
}

/** Sets (or, with null, removes) my one reaction to a message; answers with its reactions map. */
export async function react(ctx: AppContext, me: UserRow, messageId: number, emoji: string | null) {
  if (emoji !== null && !isSingleEmoji(emoji)) throw validationError('emoji must be a single emoji (or null to remove your reaction)')
  const { row, chat } = await visibleMessage(ctx, me, messageId)
  await assertNotBlockedByPeer(ctx.db, chat, me.id)
  return inTransaction(ctx, async (trx, events) => {
    await takeGroupChat(trx, chat)
    // One reaction at a time per message: the map each event carries is read after every earlier
    // reaction committed. Two at once each read the map without the other's on PostgreSQL, and the
    // event logged last could say less than the message holds (test/conformance/reaction-race.test.ts).
    if (ctx.dialect === 'postgres') await repo.lockMessage(trx, row.id)
    await repo.setReaction(trx, row.id, me.id, emoji, events.now)
    const reactions = (await repo.reactionsOf(trx, [row.id])).get(row.id) ?? {}
    await events.toChat(chat, 'reaction.updated', { chat_id: chat.id, message_id: row.id, reactions })
    return reactions
  })
}

/** Copies a message I can see into another chat of mine, naming its original sender. */
export async function forward(ctx: AppContext, me: UserRow, messageId: number, targetChatId: number): Promise<MessageView> {
  const { row } = await readableMessage(ctx, me, messageId)
  const target = await chats.requireMember(ctx, me.id, targetChatId)
  await assertMaySend(ctx.db, target, me.id)
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
    topic_id: null,
    attachment:
      row.file_path === null
        ? null
        : {
            file_path: row.file_path,
            file_type: row.file_type ?? 'document',
            file_name: row.file_name ?? '',
            file_size: row.file_size ?? 0,
            thumbnail_path: row.thumbnail_path,
            preview_size: (row.preview_size ?? 'none') as 'none',
            mime_type: '',
          },
  }
  return inTransaction(ctx, (_trx, events) => writeMessage(events, target, me, draft, null, origin))
}

/**
 * Typing is ephemeral: a frame to the other members, not logged; it expires on its own. Not in a
 * channel (only its owner and admins write there, and subscribers do not see who is typing a
 * post); not to a peer who blocked me.
 */
export async function typing(ctx: AppContext, me: UserRow, chatId: number, isTyping: boolean) {
  const chat = await chats.requireMember(ctx, me.id, chatId)
  if (chat.chat_type === 'channel') throw forbidden('Nobody types in a channel')
  if (!(await blockedByPeer(ctx.db, chat, me.id))) ctx.typing.set(chat, me.id, isTyping)
  return { chat_id: chat.id, is_typing: isTyping }
}
