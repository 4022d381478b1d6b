/** Sending and reading messages. The rules of posting live in posting.ts; here the requests that use them. */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { ChatRow, MessageRow, UserRow } from '../../db/tables.js'
import { announceRecorded, inTransaction, type Outbox } from '../../events/outbox.js'
import { AppError, forbidden, notFound, validationError } from '../../http/errors.js'
import { share } from '../../lib/shared-json.js'
import type { Turn } from '../../lib/lane.js'
import { parseInstant } from '../../lib/time.js'
import * as chats from '../chats/index.js'
import * as files from '../files/index.js'
import * as stickers from '../stickers/index.js'
import { draftFrom, repeats, type Draft } from './draft.js'
import { batchPath } from './posting-pg.js'
import { fastPath, type FastPath } from './posting-sqlite.js'
import { assertMaySend, assertReplyTarget, findFirstSend, writeMessage, type FirstSend } from './posting.js'
import { isRead, messageJson, presentMessage, presentRich, type Sender } from './present.js'
import * as repo from './repo.js'
import type { HistoryQuery, MessageView, RichMessageView, SendMessageBody } from './schemas.js'
import * as scheduled from './scheduled.js'
import { presentRows } from './views.js'
import { offsetOf } from '../../db/page.js'
import { keyReused } from '../../http/idempotency.js'

export { textDraft } from './draft.js'

/**
 * Posts a message another module made (a poll) inside that module's unit of work: the posting
 * rules, then the one write path, so members see it in history and get `message.new`.
 */
export async function postIn(events: Outbox, chat: chats.MemberChat, sender: UserRow, draft: Draft): Promise<MessageView> {
  await assertMaySend(events.db, chat, sender.id)
  return writeMessage(events, chat, sender, draft, null, null)
}

/**
 * A message from the platform (a broadcast, a moderator's warning), sent by the system account into
 * its personal chat with a user, inside the caller's unit of work: the one write path, without the
 * members' posting rules (a user's block does not silence what the platform must tell them).
 */
export function postFromPlatform(events: Outbox, chat: ChatRow, system: UserRow, draft: Draft): Promise<MessageView> {
  return writeMessage(events, chat, system, draft, null, null)
}

/** A message and its chat for a platform moderator (no membership asked); null when it does not exist. */
export async function moderatedMessage(db: Db, messageId: number) {
  const row = await repo.findById(db, messageId)
  if (!row) return null
  const chat = await chats.findChat(db, row.chat_id)
  return chat ? { row, chat } : null
}

const DEFAULT_PAGE_SIZE = 20
const DEFAULT_LIMIT = 50

/** How a send came, besides its body. */
export interface SendOptions {
  /** the HTTP Idempotency-Key header (client_message_id wins) */
  idempotencyKey?: string
  /** bots only (bots/bot-send.ts): the message is relayed from another messenger */
  bridge?: { externalMessageId: string }
  /**
   * its place among the sends of one socket to one chat (lib/lane.ts): once queued for the group
   * commit the next may start, so that they share it
   */
  turn?: Turn
}

/** Sends a message to a chat the sender belongs to, or to a user (creating the personal chat). */
export async function send(ctx: AppContext, me: UserRow, input: SendMessageBody, options: SendOptions = {}): Promise<MessageView> {
  const { idempotencyKey, bridge, turn } = options
  const clientId = input.client_message_id ?? idempotencyKey ?? null
  const draft = draftFrom(input)
  if (bridge) {
    if (me.is_bot !== 1) throw forbidden('Only bots relay messages from other messengers')
    draft.external_message_id = bridge.externalMessageId
  }
  if (input.chat_id === undefined && input.receiver_id === undefined) {
    throw validationError('chat_id or receiver_id is required')
  }
  // only a file this sender uploaded (400 invalid_file otherwise); its stored facts, not the client's
  if (input.file_path !== undefined) draft.attachment = await files.requireUploaded(ctx, me.id, input.file_path)
  // a sticker of a pack the sender may use (a premium pack: with premium)
  if (draft.emoji_file !== null) stickers.requireUsable(ctx, me, draft.emoji_file)

  const now = ctx.clock.now()
  // a time already past sends at once
  const at = input.scheduled_at === undefined ? null : parseInstant(input.scheduled_at)
  const holdUntil = at !== null && at > now ? at : null
  const fast = holdUntil === null ? commonSendPath(ctx) : null
  if (fast) {
    const outcome = await fast.send(me, { chatId: input.chat_id, receiverId: input.receiver_id }, draft, clientId, now, turn)
    if (outcome.kind === 'retry') return answerRetry(ctx, me, input, outcome.first)
    if (outcome.kind === 'sent') {
      // final: its JSON is made once for the members' frames and the ack
      share(outcome.message, messageJson)
      announceRecorded(ctx, outcome.recorded, 'message.new', { message: outcome.message }, outcome.message.chat_id, now)
      return outcome.message
    }
  }
  // The general path: an earlier send of this socket to this chat, queued for the group commit,
  // is stored first (this one must not overtake it).
  if (turn) await turn.defer()
  if (!fast && clientId) {
    const first = await findFirstSend(ctx.db, me.id, clientId)
    if (first) return answerRetry(ctx, me, input, first)
  }

  const chat =
    input.chat_id !== undefined
      ? await chats.requireMember(ctx, me.id, input.chat_id)
      : await chats.getOrCreatePersonal(ctx, me, input.receiver_id!)
  await assertMaySend(ctx.db, chat, me.id)
  if (draft.reply_to_id !== null) await assertReplyTarget(ctx.db, chat.id, draft.reply_to_id)
  if (draft.topic_id !== null) await chats.assertTopic(ctx.db, chat, draft.topic_id)

  try {
    if (holdUntil !== null) return await scheduled.schedule(ctx, me, chat, draft, holdUntil, clientId)
    return await inTransaction(ctx, (_trx, events) => writeMessage(events, chat, me, draft, clientId, null), now)
  } catch (error) {
    // The same client id raced in twice: the unique index kept the first; answer it as a retry.
    const first = clientId && isUniqueViolation(error) ? await findFirstSend(ctx.db, me.id, clientId) : null
    if (first) return answerRetry(ctx, me, input, first)
    throw error
  }
}

/**
 * The path for the common send (a personal chat, text) on this database: SQLite's fast path or
 * PostgreSQL's batches (group commit); null with SEND_FAST_PATH=off. The general path handles the
 * rest and every refusal.
 */
export const commonSendPath = (ctx: AppContext): FastPath | null => fastPath(ctx) ?? batchPath(ctx)

/**
 * A send whose client id (or Idempotency-Key) was used before: the same send again is answered
 * with what the first one made (the message, or the pending message); the same id for a different
 * send (another chat, other text…) is 409 conflict.
 */
async function answerRetry(ctx: AppContext, me: UserRow, input: SendMessageBody, first: FirstSend) {
  const { chat_id: chatId } = 'message' in first ? first.message : first.pending
  const sameTarget =
    input.chat_id !== undefined ? input.chat_id === chatId : (await chats.personalPeer(ctx, chatId, me.id)) === input.receiver_id
  if (!sameTarget || !repeats(input, 'message' in first ? first.message : scheduled.draftOf(first.pending))) {
    throw keyReused('client_message_id (or Idempotency-Key)', 'message')
  }
  return 'message' in first ? presentOne(ctx.db, first.message, me) : scheduled.presentRow(ctx, me, first.pending)
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
      const rows = await repo.listBySeq(
        ctx.db,
        chat.id,
        me.id,
        {
          ...topic,
          afterSeq: await anchorSeq(query.after_id),
          ...(query.before_id !== undefined ? { beforeSeq: await anchorSeq(query.before_id) } : {}),
        },
        limit,
        'asc',
      )
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
    const rows = await repo.listBySeq(ctx.db, chat.id, me.id, { topicId: query.topic_id, offset: offsetOf(page, perPage) }, perPage)
    return { keyset: false as const, items: await present(rows), page, perPage, total: await repo.countTopic(ctx.db, query.topic_id) }
  }
  const top = chat.message_seq
  const rows = await repo.listBySeq(
    ctx.db,
    chat.id,
    me.id,
    { beforeSeq: top - offsetOf(page, perPage) + 1, afterSeq: top - page * perPage },
    perPage,
  )
  return { keyset: false as const, items: await present(rows), page, perPage, total: top }
}

/** A message row by id, whatever its state (callers check visibility and deletion themselves). */
export const messageRow = (ctx: AppContext, id: number) => repo.findById(ctx.db, id)
