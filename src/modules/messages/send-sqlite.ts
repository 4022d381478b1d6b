/**
 * messages/send on SQLite, the hot path: one synchronous pass over prepared statements while
 * holding the connection: idempotency lookup, membership and block check (one query), reply check,
 * then the writes (message, chat seq and last message, the sender's read position, the update
 * log, where message.new is a reference to the message rather than a copy of it), in a group
 * commit shared with the sends of the same moment (db/sqlite-hot.ts). The same rules as
 * service.ts's general path, which still handles the rest: opening a new personal chat, groups and
 * channels, attachments, topics, scheduled messages, and PostgreSQL.
 */
import type { ChatRow, MessageRow, UserRow } from '../../db/tables.js'
import { batched, statement } from '../../db/sqlite-hot.js'
import type { AppContext } from '../../context.js'
import { blocked, notFound, validationError } from '../../http/errors.js'
import { prunes, type Recorded } from '../../realtime/updates.js'
import { messageValues, type Draft } from './draft.js'
import { presentMessage } from './present.js'
import type { MessageView } from './schemas.js'

/**
 * Each peer's latest update seq, read with the chat rather than by statements of their own (each
 * call costs more than the index lookup it runs). On SQLite a user's seq is the newest entry of
 * their update log (realtime/updates.ts nextSeqs); the job runs synchronously inside the write
 * transaction, so nothing else can log for them before this send's own insert.
 */
const PEER_SEQS = `
  (select coalesce(max(seq), 0) from updates where user_id = c.peer1_id) as peer1_seq,
  (select coalesce(max(seq), 0) from updates where user_id = c.peer2_id) as peer2_seq`

/** The chat (if I am a member), whether its other member blocked me, and the peers' latest seqs. */
const MEMBER_CHAT = `
  select c.id, c.chat_type, c.peer1_id, c.peer2_id, c.message_seq, exists(
    select 1 from blocked_users b
    where c.chat_type = 'personal' and b.blocked_user_id = :me
      and b.user_id = case when c.peer1_id = :me then c.peer2_id else c.peer1_id end
  ) as blocked_me, ${PEER_SEQS}
  from chats c join chat_members m on m.chat_id = c.id and m.user_id = :me
  where c.id = :chat`

/** The personal chat of a pair, if it exists and the other user is active; the block flag; the peers' seqs. */
const PAIR_CHAT = `
  select c.id, c.chat_type, c.peer1_id, c.peer2_id, c.message_seq, exists(
    select 1 from blocked_users b where b.user_id = :other and b.blocked_user_id = :me
  ) as blocked_me, ${PEER_SEQS}
  from chats c join users o on o.id = :other and o.is_active = 1 and o.deleted_at is null
  where c.peer1_id = :p1 and c.peer2_id = :p2`

const FIND_BY_CLIENT_ID = 'select * from messages where sender_id = ? and client_message_id = ?'
const REPLY_TARGET = 'select chat_id, deleted_for_all from messages where id = ?'
const INSERT_MESSAGE = `
  insert into messages (chat_id, seq, sender_id, receiver_id, content, reply_to_id, is_encrypted,
    encrypted_content, encryption_key_id, emoji, emoji_file, emoji_size, emoji_count, client_message_id, created_at)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
const UPDATE_CHAT = 'update chats set message_seq = ?, last_message_id = ?, last_message_at = ? where id = ?'
/** chats/repo.ts touchMembers: the chat goes to the top of both lists; the sender has read it */
const TOUCH_MEMBERS = `
  update chat_members set last_activity_at = :now,
    read_seq = case when user_id = :sender and read_seq < :seq then :seq else read_seq end,
    read_at = case when user_id = :sender and read_seq < :seq then :now else read_at end
  where chat_id = :chat`

const PRUNE = 'delete from updates where user_id = ? and seq <= ?'

/** message.new, logged as a reference to the message (realtime/updates.ts renders it when read) */
const insertUpdates = (n: number) =>
  `insert into updates (user_id, seq, type, message_id, created_at) values ${Array(n).fill("(?, ?, 'message.new', ?, ?)").join(', ')}`
/** a personal chat has one recipient (Saved Messages) or two */
const INSERT_UPDATES = [insertUpdates(1), insertUpdates(2)]

/**
 * MEMBER_CHAT's and PAIR_CHAT's columns in order. They are read as an array (better-sqlite3's
 * `raw` mode): building a row object with named properties costs about as much as the lookup.
 */
type HotChat = [
  id: number,
  chatType: ChatRow['chat_type'],
  /** the peers are null outside personal chats, which leave the hot path before reading them */
  peer1: number,
  peer2: number,
  messageSeq: number,
  blockedMe: number,
  peer1Seq: number,
  peer2Seq: number,
]

export type HotSend =
  | { kind: 'sent'; message: MessageView; recorded: Recorded[] }
  | { kind: 'duplicate'; row: MessageRow }
  /** a new personal chat (or an inactive receiver): the general path handles it */
  | { kind: 'general' }

export function sendSqlite(
  ctx: AppContext,
  me: UserRow,
  target: { chatId?: number; receiverId?: number },
  draft: Draft,
  clientId: string | null,
): Promise<HotSend> {
  // topics exist only in groups, attachments have their own checks: the general path says so
  if (draft.topic_id !== null || draft.attachment) return Promise.resolve({ kind: 'general' })
  const now = ctx.clock.now()
  return batched(ctx, (sqlite): HotSend => {
    const get = <T>(sql: string, ...params: unknown[]) => statement(sqlite, sql).get(...params) as T | undefined
    if (clientId) {
      const first = get<MessageRow>(FIND_BY_CLIENT_ID, me.id, clientId)
      if (first) return { kind: 'duplicate', row: first }
    }
    const getChat = (sql: string, params: Record<string, number>) => statement(sqlite, sql).raw(true).get(params) as HotChat | undefined
    let found: HotChat | undefined
    if (target.chatId !== undefined) {
      found = getChat(MEMBER_CHAT, { me: me.id, chat: target.chatId })
      if (!found) throw notFound('Chat not found')
    } else {
      const other = target.receiverId!
      const [p1, p2] = me.id < other ? [me.id, other] : [other, me.id]
      found = getChat(PAIR_CHAT, { me: me.id, other, p1, p2 })
      if (!found) return { kind: 'general' }
    }
    const [chatId, chatType, peer1, peer2, messageSeq, blockedMe, peer1Seq, peer2Seq] = found
    // groups and channels log to their own chat log and check roles: the general path
    if (chatType !== 'personal') return { kind: 'general' }
    if (blockedMe) throw blocked()
    if (draft.reply_to_id !== null) {
      const original = get<{ chat_id: number; deleted_for_all: number }>(REPLY_TARGET, draft.reply_to_id)
      if (!original || original.chat_id !== chatId || original.deleted_for_all === 1) {
        throw validationError('reply_to_id must be a message of this chat')
      }
    }
    const receiverId = peer1 === me.id ? peer2 : peer1

    // The row as the database now holds it, built here rather than read back (RETURNING * costs
    // as much as the insert itself).
    const row: MessageRow = {
      id: 0,
      ...messageValues(draft, { chatId, seq: messageSeq + 1, senderId: me.id, receiverId, clientId, origin: null, now }),
      deleted_for_all: 0,
      edited_at: null,
      scheduled_at: null,
      delivered_at: null,
      read_at: null,
    }
    row.id = Number(
      statement(sqlite, INSERT_MESSAGE).run(
        row.chat_id, row.seq, row.sender_id, row.receiver_id, row.content, row.reply_to_id, row.is_encrypted,
        row.encrypted_content, row.encryption_key_id, row.emoji, row.emoji_file, row.emoji_size, row.emoji_count,
        row.client_message_id, row.created_at,
      ).lastInsertRowid,
    )
    statement(sqlite, UPDATE_CHAT).run(row.seq, row.id, now, chatId)
    statement(sqlite, TOUCH_MEMBERS).run({ now, sender: me.id, seq: row.seq, chat: chatId })
    const message = presentMessage(row, me, receiverId === me.id)
    // Saved Messages (a chat with oneself) has one recipient
    const recorded: Recorded[] = [{ userId: peer1, seq: peer1Seq + 1 }]
    if (peer2 !== peer1) recorded.push({ userId: peer2, seq: peer2Seq + 1 })
    statement(sqlite, INSERT_UPDATES[recorded.length - 1]).run(...recorded.flatMap((r) => [r.userId, r.seq, row.id, now]))
    for (const cut of prunes(recorded, ctx.config.updateLogKeep)) statement(sqlite, PRUNE).run(cut.userId, cut.seq)
    return { kind: 'sent', message, recorded }
  })
}
