/**
 * messages/send on SQLite, the hot path: one synchronous pass over prepared statements while
 * holding the connection: idempotency lookup, membership and block check (one query, which finds
 * nothing unless this path can send), reply check, then the writes (message, chat seq and last
 * message, the sender's read position, the update log, where message.new is a reference to the
 * message rather than a copy of it), in a group commit shared with the sends of the same moment
 * (db/sqlite-hot.ts). The same rules as
 * service.ts's general path, which still handles the rest: opening a new personal chat, groups and
 * channels, attachments, topics, scheduled messages, a reply that reads messages of the other's
 * (a read receipt), the refusals (not a member, blocked) and PostgreSQL.
 */
import type { MessageRow, ScheduledMessageRow, UserRow } from '../../db/tables.js'
import { batched, statement } from '../../db/sqlite-hot.js'
import type { AppContext } from '../../context.js'
import { validationError } from '../../http/errors.js'
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

/*
 * The two chat reads answer only the case this path handles: a personal chat whose other member
 * has not blocked me. Anything else (not a member, a group or channel, blocked, a new pair) finds
 * no row and goes to the general path, which answers it with the right error or handles it.
 * Parameters are positional: binding by name costs a property lookup per name.
 */

/** My personal chat `chat` (parameters: me, chat), with its peers' latest seqs and my read position. */
const MEMBER_CHAT = `
  select c.peer1_id, c.peer2_id, c.message_seq, ${PEER_SEQS}, m.read_seq
  from chats c join chat_members m on m.chat_id = c.id and m.user_id = ?
  where c.id = ? and c.chat_type = 'personal' and not exists (
    select 1 from blocked_users b
    where b.blocked_user_id = m.user_id
      and b.user_id = case when c.peer1_id = m.user_id then c.peer2_id else c.peer1_id end
  )`

/**
 * The personal chat of a pair (parameters: me, other, peer1, peer2, me) if the other user is
 * active, with the peers' latest seqs, my read position and its id.
 */
const PAIR_CHAT = `
  select c.peer1_id, c.peer2_id, c.message_seq, ${PEER_SEQS},
    (select read_seq from chat_members where chat_id = c.id and user_id = ?), c.id
  from chats c join users o on o.id = ? and o.is_active = 1 and o.deleted_at is null
  where c.peer1_id = ? and c.peer2_id = ? and not exists (
    select 1 from blocked_users b where b.user_id = o.id and b.blocked_user_id = ?
  )`

const FIND_BY_CLIENT_ID = 'select * from messages where sender_id = ? and client_message_id = ?'
/** a retried send whose first attempt was scheduled answers with the pending message */
const FIND_PENDING_BY_CLIENT_ID = 'select * from scheduled_messages where sender_id = ? and client_message_id = ?'
const REPLY_TARGET = 'select chat_id, deleted_for_all from messages where id = ?'
const INSERT_MESSAGE = `
  insert into messages (chat_id, seq, sender_id, receiver_id, content, reply_to_id, is_encrypted,
    encrypted_content, encryption_key_id, emoji, emoji_file, emoji_size, emoji_count, client_message_id, created_at)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
const UPDATE_CHAT = 'update chats set message_seq = ?, last_message_id = ?, last_message_at = ? where id = ?'
/**
 * chats/repo.ts touchMembers: the chat goes to the top of both lists; the sender has read it.
 * Parameters: now, sender, seq, seq, sender, seq, now, chat.
 */
const TOUCH_MEMBERS = `
  update chat_members set last_activity_at = ?,
    read_seq = case when user_id = ? and read_seq < ? then ? else read_seq end,
    read_at = case when user_id = ? and read_seq < ? then ? else read_at end
  where chat_id = ?`

const PRUNE = 'delete from updates where user_id = ? and seq <= ?'

/** message.new, logged as a reference to the message (realtime/updates.ts renders it when read) */
const insertUpdates = (n: number) =>
  `insert into updates (user_id, seq, type, message_id, created_at) values ${Array(n).fill("(?, ?, 'message.new', ?, ?)").join(', ')}`
/** a personal chat has one recipient (Saved Messages) or two */
const INSERT_UPDATES = [insertUpdates(1), insertUpdates(2)]

/**
 * The chat reads' columns, read as an array (better-sqlite3's `raw` mode): a row object with named
 * properties costs about as much as the lookup, and each column a little. Only PAIR_CHAT reads the
 * chat id; MEMBER_CHAT's caller already has it.
 */
type HotChat = [peer1: number, peer2: number, messageSeq: number, peer1Seq: number, peer2Seq: number, myReadSeq: number, chatId?: number]

export type HotSend =
  | { kind: 'sent'; message: MessageView; recorded: Recorded[] }
  | { kind: 'duplicate'; row: MessageRow }
  | { kind: 'pending'; row: ScheduledMessageRow }
  /**
   * not a personal chat of mine whose other member lets me write (a new pair, a group or channel,
   * not a member, blocked, an inactive receiver): the general path handles it or refuses it
   */
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
      const pending = get<ScheduledMessageRow>(FIND_PENDING_BY_CLIENT_ID, me.id, clientId)
      if (pending) return { kind: 'pending', row: pending }
    }
    const read = (sql: string, ...params: number[]) => statement(sqlite, sql).raw(true).get(...params) as HotChat | undefined
    let chat: HotChat | undefined
    if (target.chatId !== undefined) {
      chat = read(MEMBER_CHAT, me.id, target.chatId)
    } else {
      const other = target.receiverId!
      const [p1, p2] = me.id < other ? [me.id, other] : [other, me.id]
      chat = read(PAIR_CHAT, me.id, other, p1, p2, me.id)
    }
    if (!chat) return { kind: 'general' }
    const [peer1, peer2, messageSeq, peer1Seq, peer2Seq, myReadSeq, chatId = target.chatId!] = chat
    // Sending reads the chat: with messages of theirs I have not read, that is a read receipt to
    // log and publish as well, which the general path does.
    if (myReadSeq < messageSeq) return { kind: 'general' }
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
    statement(sqlite, TOUCH_MEMBERS).run(now, me.id, row.seq, row.seq, me.id, row.seq, now, chatId)
    const message = presentMessage(row, me, receiverId === me.id)
    // Saved Messages (a chat with oneself) has one recipient
    const recorded: Recorded[] = [{ userId: peer1, seq: peer1Seq + 1 }]
    if (peer2 !== peer1) recorded.push({ userId: peer2, seq: peer2Seq + 1 })
    statement(sqlite, INSERT_UPDATES[recorded.length - 1]).run(...recorded.flatMap((r) => [r.userId, r.seq, row.id, now]))
    for (const cut of prunes(recorded, ctx.config.updateLogKeep)) statement(sqlite, PRUNE).run(cut.userId, cut.seq)
    return { kind: 'sent', message, recorded }
  })
}
