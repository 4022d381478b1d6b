/**
 * Posting a message by the rules of policies/ (who may post where, what a reply may point at) and
 * how a retried send is recognised, and `writeMessage`, the one place a message row is written.
 * Send, forward and scheduled delivery use them; the SQLite fast path (posting-sqlite.ts) uses the
 * same pure checks and the same row builder, and leaves every refusal to these.
 */
import type { Db } from '../../db/database.js'
import type { ChatRow, MessageRow, ScheduledMessageRow, UserRow } from '../../db/tables.js'
import type { Outbox } from '../../events/outbox.js'
import { blocked, forbidden, validationError } from '../../http/errors.js'
import { share } from '../../lib/shared-json.js'
import { iso } from '../../lib/time.js'
import { personalMembers } from '../../realtime/chat-ref.js'
import { hasBlocked } from '../../policies/blocks.js'
import { isReplyTarget, mayPost } from '../../policies/chats.js'
import * as chats from '../chats/index.js'
import { messageValues, type Draft, type Origin } from './draft.js'
import { messageJson, presentMessage } from './present.js'
import * as repo from './repo.js'
import * as scheduledRepo from './scheduled-repo.js'
import type { MessageView } from './schemas.js'

/** Whether the other member of this personal chat of mine has blocked me (never so in a group, a channel or Saved Messages). */
export async function blockedByPeer(db: Db, chat: ChatRow, meId: number): Promise<boolean> {
  const other = chats.otherMember(chat, meId)
  return other !== null && other !== meId && (await hasBlocked(db, other, meId))
}

/** 403 `blocked` when the peer of this personal chat blocked me: I may not write, edit, react or delete for both of us. */
export async function assertNotBlockedByPeer(db: Db, chat: ChatRow, meId: number) {
  if (await blockedByPeer(db, chat, meId)) throw blocked()
}

/** 403 unless I may post in this chat of mine (a channel's owner or admin) and its peer has not blocked me. */
export async function assertMaySend(db: Db, chat: ChatRow & { role?: string | null }, meId: number) {
  if (!mayPost(chat, chat.role)) throw forbidden('Only the owner or an admin can post in this channel')
  await assertNotBlockedByPeer(db, chat, meId)
}

export async function assertReplyTarget(db: Db, chatId: number, replyToId: number) {
  if (!isReplyTarget(await repo.findById(db, replyToId), chatId)) throw validationError('reply_to_id must be a message of this chat')
}

/** What a client id (or Idempotency-Key) already made: a message, or a message still pending. */
export type FirstSend = { message: MessageRow } | { pending: ScheduledMessageRow }

export async function findFirstSend(db: Db, senderId: number, clientId: string): Promise<FirstSend | null> {
  const message = await repo.findByClientId(db, senderId, clientId)
  if (message) return { message }
  const pending = await scheduledRepo.findByClientId(db, senderId, clientId)
  return pending ? { pending } : null
}

/**
 * Inside the unit of work: takes the chat's next seq, inserts the message, moves the chat's last
 * message and the sender's read position, and logs `message.new` for every member (a group's or
 * channel's once, in its own log).
 *
 * Sending reads the chat. In a personal chat where the other member's newest messages were still
 * unread by the sender, they become read as by `/read` (read_at, and `message.read` to both
 * members, logged before the new message), so a reply never leaves them looking unread.
 */
export async function writeMessage(
  events: Outbox,
  chat: ChatRow,
  sender: UserRow,
  draft: Draft,
  clientId: string | null,
  origin: Origin | null,
): Promise<MessageView> {
  const { db, now } = events
  const receiverId = chats.otherMember(chat, sender.id)
  const seq = await chats.nextMessageSeq(db, chat.id, now)
  if (chat.chat_type === 'personal') await readOnSend(events, chat, sender.id, seq - 1)
  const row = await repo.insertMessage(
    db,
    messageValues(draft, { chatId: chat.id, seq, senderId: sender.id, receiverId, clientId, origin, now }),
  )
  await chats.afterMessage(db, chat, row.id, sender.id, seq, now)
  const message = presentMessage(row, sender, receiverId === sender.id)
  // final: its JSON is made once for the members' frames and the sender's answer
  share(message, messageJson)
  await events.toChat(chat, 'message.new', { message }, { messageId: row.id })
  return message
}

/** The read receipt a send in a personal chat implies, if the sender had not read up to `lastSeq`. */
async function readOnSend(events: Outbox, chat: ChatRow, senderId: number, lastSeq: number) {
  if (lastSeq < 1) return
  const { db, now } = events
  // Positions only move forward: one read with the chat that already covers it still does. The
  // position it read from bounds the range marked read (from 0 it would scan the whole chat).
  const known = (chat as Partial<chats.MemberChat>).read_seq ?? (await chats.readSeqOf(db, chat.id, senderId))
  if (known >= lastSeq) return
  if (!(await chats.advanceRead(db, chat.id, senderId, lastSeq, now))) return
  await repo.markReadRange(db, chat.id, senderId, known, lastSeq, now)
  const last = await repo.findBySeq(db, chat.id, lastSeq)
  if (!last) return
  await events.toUsers(personalMembers(chat), 'message.read', {
    chat_id: chat.id,
    reader_id: senderId,
    message_id: last.id,
    read_at: iso(now),
  })
}
