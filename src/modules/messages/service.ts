/** Sending and reading messages. Events are recorded in the update log in the same transaction. */
import type { AppContext } from '../../context.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { MessageRow, UserRow } from '../../db/tables.js'
import { invalidFile, notFound, validationError } from '../../http/errors.js'
import * as updates from '../../realtime/updates.js'
import * as chats from '../chats/service.js'
import { presentMessage } from './present.js'
import * as repo from './repo.js'
import type { HistoryQuery, MessageView, SendMessageBody } from './schemas.js'

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
  if (clientId) {
    const first = await repo.findByClientId(ctx.db, me.id, clientId)
    if (first) return presentSent(ctx, me, first)
  }

  const content = input.content ?? ''
  if (!content.trim() && !input.file_path && !input.emoji && !input.encrypted_content) {
    throw validationError('content must not be empty')
  }
  if (input.chat_id === undefined && input.receiver_id === undefined) {
    throw validationError('chat_id or receiver_id is required')
  }
  // TODO(#3): scheduled delivery arrives with the scheduler; until then refuse rather than send now.
  if (input.scheduled_at !== undefined) throw validationError('scheduled_at is not supported yet')
  // TODO(#5): attachments arrive with uploads; no path can have been uploaded before that.
  if (input.file_path !== undefined) throw invalidFile()

  const chat =
    input.chat_id !== undefined
      ? await chats.requireMember(ctx, me.id, input.chat_id)
      : await chats.getOrCreatePersonal(ctx, me, input.receiver_id!)
  if (input.reply_to_id !== undefined) {
    const original = await repo.findById(ctx.db, input.reply_to_id)
    if (!original || original.chat_id !== chat.id || original.deleted_for_all === 1) {
      throw validationError('reply_to_id must be a message of this chat')
    }
  }
  const receiverId = chat.chat_type === 'personal' ? (chat.peer1_id === me.id ? chat.peer2_id : chat.peer1_id) : null
  // A personal chat names its audience on the row itself: no member query on the hot path.
  const audience = [me.id, receiverId ?? me.id]

  const now = ctx.clock.now()
  try {
    const { message, recorded } = await ctx.db.transaction().execute(async (trx) => {
      const seq = await chats.nextMessageSeq(trx, chat.id, now)
      const row = await repo.insertMessage(trx, {
        chat_id: chat.id,
        seq,
        sender_id: me.id,
        receiver_id: receiverId,
        content,
        reply_to_id: input.reply_to_id ?? null,
        is_encrypted: input.is_encrypted ? 1 : 0,
        encrypted_content: input.encrypted_content ?? null,
        encryption_key_id: input.encryption_key_id ?? null,
        emoji: input.emoji ?? null,
        emoji_file: input.emoji_file ?? null,
        emoji_size: input.emoji_size ?? null,
        emoji_count: input.emoji_count ?? null,
        client_message_id: clientId,
        created_at: now,
      })
      await chats.afterMessage(trx, chat.id, row.id, me.id, seq, now)
      const message = presentMessage(row, me, receiverId === me.id)
      const recorded = await updates.record(trx, audience, 'message.new', { message }, now)
      return { message, recorded }
    })
    // After commit: nudge every instance holding a recipient's sockets.
    ctx.fanout.publish(recorded.map(({ userId, seq }) => ({ userId, frame: { type: 'message.new', seq, data: { message } } })))
    return message
  } catch (error) {
    // The same client id raced in twice: the unique index kept the first; answer with it.
    if (clientId && isUniqueViolation(error)) {
      const first = await repo.findByClientId(ctx.db, me.id, clientId)
      if (first) return presentSent(ctx, me, first)
    }
    throw error
  }
}

async function presentSent(ctx: AppContext, me: UserRow, row: MessageRow): Promise<MessageView> {
  const reads = await chats.memberReads(ctx.db, row.chat_id)
  return presentMessage(row, me, isRead(row, reads))
}

/** Read by the receiver: any member other than the sender has read up to it (own chat: always). */
function isRead(row: MessageRow, reads: { user_id: number; read_seq: number }[]): boolean {
  if (row.receiver_id === row.sender_id) return true
  return reads.some((r) => r.user_id !== row.sender_id && r.read_seq >= row.seq)
}

/**
 * A page of a chat's history, newest first. `page`/`per_page` are translated into a seq range
 * (never an OFFSET), `before_id`/`after_id` + `limit` are keysets; both seek on (chat_id, seq).
 */
export async function history(ctx: AppContext, me: UserRow, query: HistoryQuery) {
  const chat = await chats.requireMember(ctx, me.id, query.chat_id)
  const reads = await chats.memberReads(ctx.db, chat.id)
  const present = (rows: Awaited<ReturnType<typeof repo.listBySeq>>) =>
    rows.map((row) => presentMessage(row, { username: row.sender_username, avatar: row.sender_avatar }, isRead(row, reads)))

  const anchorSeq = async (messageId: number) => {
    const anchor = await repo.findById(ctx.db, messageId)
    if (!anchor || anchor.chat_id !== chat.id) throw notFound('Message not found in this chat')
    return anchor.seq
  }
  if (query.before_id !== undefined || query.after_id !== undefined) {
    const limit = query.limit ?? DEFAULT_LIMIT
    if (query.after_id !== undefined) {
      const rows = await repo.listBySeq(ctx.db, chat.id, {
        afterSeq: await anchorSeq(query.after_id),
        ...(query.before_id !== undefined ? { beforeSeq: await anchorSeq(query.before_id) } : {}),
      }, limit, 'asc')
      return { keyset: true as const, items: present(rows.reverse()) }
    }
    const rows = await repo.listBySeq(ctx.db, chat.id, { beforeSeq: await anchorSeq(query.before_id!) }, limit)
    return { keyset: true as const, items: present(rows) }
  }

  const page = query.page ?? 1
  const perPage = query.per_page ?? query.limit ?? DEFAULT_PAGE_SIZE
  const top = chat.message_seq
  const rows = await repo.listBySeq(
    ctx.db,
    chat.id,
    { beforeSeq: top - (page - 1) * perPage + 1, afterSeq: top - page * perPage },
    perPage,
  )
  return { keyset: false as const, items: present(rows), page, perPage, total: top }
}
