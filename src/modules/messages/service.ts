/** Sending and reading messages. Events are logged in the same transaction as the change. */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { ChatRow, MessageRow, ScheduledMessageRow, UserRow } from '../../db/tables.js'
import { AppError, conflict, notFound, validationError } from '../../http/errors.js'
import * as files from '../files/service.js'
import { iso } from '../../lib/time.js'
import { logChat, logUsers, personalMembers } from '../../realtime/events.js'
import type { Delivery } from '../../realtime/fanout.js'
import * as updates from '../../realtime/updates.js'
import * as blocks from '../blocks/service.js'
import * as chats from '../chats/service.js'
import { draftFrom, messageValues, repeats, type Draft, type Origin } from './draft.js'
import { isRead, presentMessage, presentRich, type Sender } from './present.js'
import * as repo from './repo.js'
import type { HistoryQuery, MessageView, RichMessageView, SendMessageBody } from './schemas.js'
import * as scheduled from './scheduled.js'
import { presentRows } from './views.js'
import { sendSqlite } from './send-sqlite.js'

const DEFAULT_PAGE_SIZE = 20
const DEFAULT_LIMIT = 50

/** Sends a message to a chat the sender belongs to, or to a user (creating the personal chat). */
export async function send(
  ctx: AppContext,
  me: UserRow,
  input: SendMessageBody,
  idempotencyKey?: string,
): Promise<MessageView> {
  const clientId = input.client_message_id ?? idempotencyKey ?? null
  const draft = draftFrom(input)
  if (input.chat_id === undefined && input.receiver_id === undefined) {
    throw validationError('chat_id or receiver_id is required')
  }
  // only a file this sender uploaded (400 invalid_file otherwise); its stored facts, not the client's
  if (input.file_path !== undefined) draft.attachment = await files.requireUploaded(ctx, me.id, input.file_path)
  // a custom emoji or sticker is shown from /uploads/{emoji_file}: it must be an uploaded file
  if (draft.emoji_file !== null) await files.requireServed(ctx, draft.emoji_file)

  const now = ctx.clock.now()
  // a time already past sends at once
  const holdUntil = input.scheduled_at !== undefined && Date.parse(input.scheduled_at) > now ? Date.parse(input.scheduled_at) : null
  if (ctx.sqlite && holdUntil === null && !draft.attachment) {
    const hot = await sendSqlite(ctx, me, { chatId: input.chat_id, receiverId: input.receiver_id }, draft, clientId)
    if (hot.kind === 'duplicate') return answerRetry(ctx, me, input, { message: hot.row })
    if (hot.kind === 'pending') return answerRetry(ctx, me, input, { pending: hot.row })
    if (hot.kind === 'sent') {
      ctx.fanout.publish(updates.framesOf(hot.recorded, 'message.new', { message: hot.message }))
      return hot.message
    }
  } else if (clientId) {
    const first = await repo.findByClientId(ctx.db, me.id, clientId)
    if (first) return answerRetry(ctx, me, input, { message: first })
    const pending = await scheduled.findPendingByClientId(ctx, me, clientId)
    if (pending) return answerRetry(ctx, me, input, { pending })
  }

  const chat =
    input.chat_id !== undefined
      ? await chats.requireMember(ctx, me.id, input.chat_id)
      : await chats.getOrCreatePersonal(ctx, me, input.receiver_id!)
  await assertMaySend(ctx, chat, me.id)
  if (draft.reply_to_id !== null) await assertReplyTarget(ctx.db, chat.id, draft.reply_to_id)
  if (draft.topic_id !== null) await chats.assertTopic(ctx.db, chat, draft.topic_id)

  try {
    if (holdUntil !== null) return await scheduled.schedule(ctx, me, chat, draft, holdUntil, clientId)
    const { message, deliveries } = await ctx.db.transaction().execute((trx) => writeMessage(ctx, trx, chat, me, draft, clientId, null, now))
    ctx.fanout.publish(deliveries)
    return message
  } catch (error) {
    // The same client id raced in twice: the unique index kept the first; answer it as a retry.
    if (clientId && isUniqueViolation(error)) {
      const first = await repo.findByClientId(ctx.db, me.id, clientId)
      if (first) return answerRetry(ctx, me, input, { message: first })
      const pending = await scheduled.findPendingByClientId(ctx, me, clientId)
      if (pending) return answerRetry(ctx, me, input, { pending })
    }
    throw error
  }
}

/**
 * A send whose client id (or Idempotency-Key) was used before: the same send again is answered
 * with what the first one made (the message, or the pending message); the same id for a different
 * send (another chat, other text…) is 409 conflict.
 */
async function answerRetry(ctx: AppContext, me: UserRow, input: SendMessageBody, first: { message: MessageRow } | { pending: ScheduledMessageRow }) {
  const { chat_id: chatId } = 'message' in first ? first.message : first.pending
  const sameTarget = input.chat_id !== undefined ? input.chat_id === chatId : (await chats.personalPeer(ctx, chatId, me.id)) === input.receiver_id
  if (!sameTarget || !repeats(input, 'message' in first ? first.message : scheduled.draftOf(first.pending))) {
    throw conflict('client_message_id (or Idempotency-Key) was already used for a different message')
  }
  return 'message' in first ? presentOne(ctx.db, first.message, me) : scheduled.presentRow(ctx, me, first.pending)
}

/** 403 unless I may post in this chat of mine (a channel's owner or admin) and its peer has not blocked me. */
export async function assertMaySend(ctx: AppContext, chat: ChatRow & { role?: string | null }, meId: number) {
  chats.assertCanPost(chat)
  await blocks.assertNotBlocked(ctx.db, chats.otherMember(chat, meId), meId)
}

async function assertReplyTarget(db: Db, chatId: number, replyToId: number) {
  const original = await repo.findById(db, replyToId)
  if (!original || original.chat_id !== chatId || original.deleted_for_all === 1) {
    throw validationError('reply_to_id must be a message of this chat')
  }
}

/**
 * Inside a transaction: takes the chat's next seq, inserts the message, moves the chat's last
 * message and the sender's read position, and logs `message.new` for every member (a group's or
 * channel's once, in its own log). Returns the deliveries to publish after commit.
 *
 * Sending reads the chat. In a personal chat where the other member's newest messages were still
 * unread by the sender, they become read as by `/read` (read_at, and `message.read` to both
 * members, logged before the new message), so a reply never leaves them looking unread.
 */
export async function writeMessage(
  ctx: AppContext,
  trx: Db,
  chat: ChatRow,
  sender: UserRow,
  draft: Draft,
  clientId: string | null,
  origin: Origin | null,
  now: number,
) {
  const receiverId = chats.otherMember(chat, sender.id)
  const seq = await chats.nextMessageSeq(trx, chat.id, now)
  const receipt = chat.chat_type === 'personal' ? await readOnSend(ctx, trx, chat, sender.id, seq - 1, now) : []
  const row = await repo.insertMessage(
    trx,
    messageValues(draft, { chatId: chat.id, seq, senderId: sender.id, receiverId, clientId, origin, now }),
  )
  await chats.afterMessage(trx, chat, row.id, sender.id, seq, now)
  const message = presentMessage(row, sender, receiverId === sender.id)
  const deliveries: Delivery[] = await logChat(ctx, trx, chat, 'message.new', { message }, now, { messageId: row.id })
  return { message, deliveries: [...receipt, ...deliveries] }
}

/** The read receipt a send in a personal chat implies, if the sender had not read up to `lastSeq`. */
async function readOnSend(ctx: AppContext, trx: Db, chat: ChatRow, senderId: number, lastSeq: number, now: number): Promise<Delivery[]> {
  if (lastSeq < 1) return []
  // Positions only move forward: one read with the chat that already covers it still does. The
  // position it read from bounds the range marked read (from 0 it would scan the whole chat).
  const known = (chat as Partial<chats.MemberChat>).read_seq ?? (await chats.readSeqOf(trx, chat.id, senderId))
  if (known >= lastSeq) return []
  if (!(await chats.advanceRead(trx, chat.id, senderId, lastSeq, now))) return []
  await repo.markReadRange(trx, chat.id, senderId, known, lastSeq, now)
  const last = await trx.selectFrom('messages').select('id').where('chat_id', '=', chat.id).where('seq', '=', lastSeq).executeTakeFirst()
  if (!last) return []
  const event = { chat_id: chat.id, reader_id: senderId, message_id: last.id, read_at: iso(now) }
  return logUsers(ctx, trx, personalMembers(chat), 'message.read', event, now)
}

/** A message as it is now, reactions included (`db` may be a transaction). */
export async function presentOne(db: Db, row: MessageRow, sender: Sender) {
  const reactions = await repo.reactionsOf(db, [row.id])
  return presentMessage(row, sender, isRead(row), reactions.get(row.id))
}

/**
 * A message the user may act on: in a chat they belong to, not deleted for everyone and not
 * deleted for themselves. 404 otherwise, so outsiders cannot probe ids.
 */
export async function visibleMessage(ctx: AppContext, me: UserRow, messageId: number, allow = { hidden: false }) {
  const row = await repo.findById(ctx.db, messageId)
  if (!row || row.deleted_for_all === 1) throw notFound('Message not found')
  // a post of a public chat is visible to outsiders: acting on it is 403 (join first), not 404
  const chat = await chats.requireMember(ctx, me.id, row.chat_id).catch((error) => {
    throw error instanceof AppError && error.code === 'forbidden' ? error : notFound('Message not found')
  })
  if (!allow.hidden && (await repo.isHidden(ctx.db, me.id, row.id))) throw notFound('Message not found')
  return { row, chat }
}

/** A message the user may read (and so forward): visible to a member, or a post of a public group or channel. */
export async function readableMessage(ctx: AppContext, me: UserRow, messageId: number) {
  const row = await repo.findById(ctx.db, messageId)
  if (!row || row.deleted_for_all === 1) throw notFound('Message not found')
  await chats.requireReader(ctx, me.id, row.chat_id).catch(() => {
    throw notFound('Message not found')
  })
  if (await repo.isHidden(ctx.db, me.id, row.id)) throw notFound('Message not found')
  return { row }
}

type HistoryRow = Awaited<ReturnType<typeof repo.listBySeq>>[number]

/**
 * A page of a chat's history, newest first. `page`/`per_page` are translated into a seq range
 * (never an OFFSET), `before_id`/`after_id` + `limit` are keysets; both seek on (chat_id, seq).
 */
export async function history(ctx: AppContext, me: UserRow, query: HistoryQuery) {
  const chat = await chats.requireReader(ctx, me.id, query.chat_id)
  const present = async (rows: HistoryRow[]): Promise<(MessageView | RichMessageView)[]> => {
    const replyIds = [...new Set(rows.flatMap((r) => (r.reply_to_id === null ? [] : [r.reply_to_id])))]
    const [views, replies] = await Promise.all([
      presentRows(ctx.db, rows),
      query.format === 'rich' ? repo.replyPreviews(ctx.db, replyIds) : Promise.resolve(new Map()),
    ])
    if (query.format !== 'rich') return views
    return views.map((message, i) => {
      const row = rows[i]
      return presentRich(message, row, me.id, row.reply_to_id === null ? null : (replies.get(row.reply_to_id) ?? null))
    })
  }

  if (query.topic_id !== undefined) await chats.assertTopic(ctx.db, chat, query.topic_id)
  const topic = query.topic_id !== undefined ? { topicId: query.topic_id } : {}
  const anchorSeq = async (messageId: number) => {
    const anchor = await repo.findById(ctx.db, messageId)
    if (!anchor || anchor.chat_id !== chat.id) throw notFound('Message not found in this chat')
    return anchor.seq
  }
  if (query.before_id !== undefined || query.after_id !== undefined) {
    const limit = query.limit ?? DEFAULT_LIMIT
    if (query.after_id !== undefined) {
      const rows = await repo.listBySeq(ctx.db, chat.id, me.id, {
        ...topic,
        afterSeq: await anchorSeq(query.after_id),
        ...(query.before_id !== undefined ? { beforeSeq: await anchorSeq(query.before_id) } : {}),
      }, limit, 'asc')
      return { keyset: true as const, items: await present(rows.reverse()) }
    }
    const rows = await repo.listBySeq(ctx.db, chat.id, me.id, { ...topic, beforeSeq: await anchorSeq(query.before_id!) }, limit)
    return { keyset: true as const, items: await present(rows) }
  }

  const page = query.page ?? 1
  const perPage = query.per_page ?? query.limit ?? DEFAULT_PAGE_SIZE
  if (query.topic_id !== undefined) {
    // A topic's seqs have holes (the chat's other messages), so its pages use an offset over the
    // topic index; keysets (before_id) stay constant-cost.
    const rows = await repo.listBySeq(ctx.db, chat.id, me.id, { topicId: query.topic_id, offset: (page - 1) * perPage }, perPage)
    return { keyset: false as const, items: await present(rows), page, perPage, total: await repo.countTopic(ctx.db, query.topic_id) }
  }
  const top = chat.message_seq
  const rows = await repo.listBySeq(
    ctx.db,
    chat.id,
    me.id,
    { beforeSeq: top - (page - 1) * perPage + 1, afterSeq: top - page * perPage },
    perPage,
  )
  return { keyset: false as const, items: await present(rows), page, perPage, total: top }
}
