/**
 * messages/send on SQLite, the fast path: one synchronous pass over prepared statements while
 * holding the connection, in a group commit shared with the sends of the same moment
 * (db/sqlite-hot.ts). It handles the common case only (a personal chat of mine whose peer lets me
 * write, nothing unread from them, no attachment or topic) and hands everything else to the
 * general path in posting.ts, which also gives every refusal. Its rules are posting.ts's: the same
 * row builder (messageValues, from which the INSERT's columns are derived), the same reply check
 * (isReplyTarget), the same retry lookup order; each statement below names its general twin. A
 * parity test (test/api/send-parity.test.ts) runs one conversation through both and compares the
 * rows, the update logs and the frames. SEND_FAST_PATH=off turns it off.
 */
import type SQLite from 'better-sqlite3'
import type { AppContext } from '../../context.js'
import type { MessageRow, ScheduledMessageRow, UserRow } from '../../db/tables.js'
import { batched, statement, type SharedPass } from '../../db/sqlite-hot.js'
import type { Turn } from '../../lib/lane.js'
import { prunes, recentWritten, runColumn, type Recorded } from '../../realtime/updates.js'
import { messageRow, messageValues, type Draft, type MessageValues } from './draft.js'
import { usableAccount } from '../../policies/accounts.js'
import { blockedBy } from '../../policies/blocks.js'
import { isReplyTarget, otherPeer } from '../../policies/chats.js'
import { col, placeholder, sqlText } from '../../policies/sql.js'
import type { FirstSend } from './posting.js'
import { presentMessage } from './present.js'
import type { MessageView } from './schemas.js'

/**
 * Each peer's latest update seq (twin: realtime/updates.ts currentSeq), read with the chat rather
 * than by statements of their own (each call costs more than the index lookup it runs). The job
 * runs synchronously inside the write transaction, so nothing else can log for them meanwhile.
 * The counters of the current pass are not written yet (they are, with its log rows, at its end,
 * once per user): for a user this pass logged for, the pass's own count stands instead.
 */
const PEER_SEQS = `
  coalesce((select seq from update_seqs where user_id = c.peer1_id), 0) as peer1_seq,
  coalesce((select seq from update_seqs where user_id = c.peer2_id), 0) as peer2_seq`

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
  where c.id = ? and c.chat_type = 'personal' and not ${sqlText(blockedBy(otherPeer('c', col('m.user_id')), col('m.user_id')))}`

/**
 * The personal chat of a pair (parameters: me, other, peer1, peer2, me) if the other user is
 * active, with the peers' latest seqs, my read position and its id.
 */
const PAIR_CHAT = `
  select c.peer1_id, c.peer2_id, c.message_seq, ${PEER_SEQS},
    (select read_seq from chat_members where chat_id = c.id and user_id = ?), c.id
  from chats c join users o on o.id = ? and ${sqlText(usableAccount('o'))}
  where c.peer1_id = ? and c.peer2_id = ? and not ${sqlText(blockedBy(col('o.id'), placeholder))}`

/** twins: repo.ts findByClientId, then scheduled-repo.ts findByClientId (posting.ts findFirstSend) */
const FIND_BY_CLIENT_ID = 'select * from messages where sender_id = ? and client_message_id = ?'
const FIND_PENDING_BY_CLIENT_ID = 'select * from scheduled_messages where sender_id = ? and client_message_id = ?'
/** twin: repo.ts findById, as posting.ts assertReplyTarget reads it */
const REPLY_TARGET = 'select chat_id, deleted_for_all from messages where id = ?'
/** twin: chats/repo.ts nextMessageSeq and setLastMessage */
const UPDATE_CHAT = 'update chats set message_seq = ?, last_message_id = ?, last_message_at = ? where id = ?'
/**
 * twin: chats/repo.ts touchMembers: the chat goes to the top of both lists; the sender has read it.
 * Parameters: now, sender, seq, seq, sender, seq, now, chat.
 */
const TOUCH_MEMBERS = `
  update chat_members set last_activity_at = ?,
    read_seq = case when user_id = ? and read_seq < ? then ? else read_seq end,
    read_at = case when user_id = ? and read_seq < ? then ? else read_at end
  where chat_id = ?`

/** twin: the prune in realtime/updates.ts record */
const PRUNE = 'delete from updates where user_id = ? and seq <= ?'
/** whether the user keeps rows in the main log after a prune (parameters: user, cut) */
const KEPT_IN_MAIN = 'select 1 from updates where user_id = ? and seq > ? limit 1'
/** the recent log's part of a prune, a scan of it, only when nothing is kept in the main log (see the twin) */
const PRUNE_RECENT = 'delete from recent_updates where user_id = ? and seq <= ?'
/** twin: realtime/updates.ts nextSeqs, setting the counter to the user's last seq of the pass */
const SET_SEQ = 'insert into update_seqs (user_id, seq) values (?, ?) on conflict (user_id) do update set seq = excluded.seq'

/**
 * twin: realtime/updates.ts record: message.new, logged as a reference to the message (rendered
 * when read), in the recent log (moved into `updates` later: see realtime/updates.ts)
 */
const insertUpdates = (n: number) =>
  `insert into recent_updates (user_id, seq, type, message_id, created_at) values ${Array(n).fill("(?, ?, 'message.new', ?, ?)").join(', ')}`
/** a personal chat has one recipient (Saved Messages) or two */
const INSERT_UPDATES = [insertUpdates(1), insertUpdates(2)]

/**
 * A shared pass's message.new entries, one row per recipient (realtime/updates.ts `since`): a
 * single entry as `insertUpdates` writes it, several as a run (`message_ids`, ending at `seq`).
 * One statement per row: a multi-row VALUES of the same rows cost more per row (send-alone, one
 * send in flight per chat: 52 µs a send against 45).
 */
const INSERT_RUN =
  "insert into recent_updates (user_id, seq, type, message_id, message_ids, created_at) values (?, ?, 'message.new', ?, ?, ?)"

/**
 * The chat reads' columns, read as an array (better-sqlite3's `raw` mode): a row object with named
 * properties costs about as much as the lookup, and each column a little. Only PAIR_CHAT reads the
 * chat id; MEMBER_CHAT's caller already has it.
 */
type HotChat = [peer1: number, peer2: number, messageSeq: number, peer1Seq: number, peer2Seq: number, myReadSeq: number, chatId?: number]

/**
 * twin: repo.ts insertMessage. The columns are those messageValues builds (the same builder as the
 * general path's), so a new message field reaches both INSERTs with one edit. A column the
 * message leaves null is left out of the statement (every such column defaults to null): a plain
 * text message binds 8 values instead of 27, and each bound value costs about 40 ns here. One
 * statement per set of columns present, kept by that set as a bit mask.
 */
const insertMessageSql = new Map<number, string>()
function insertMessage(sqlite: SQLite.Database, values: MessageValues): number {
  // the values in the builder's key order (one call, where reading them by name from a variable
  // is a megamorphic lookup each)
  const all = Object.values(values)
  const bound: unknown[] = []
  let present = 0
  for (let i = 0, bit = 1; i < all.length; i++, bit *= 2) {
    if (all[i] === null) continue
    // a sum of powers of two rather than `|`: exact past 31 columns
    present += bit
    bound.push(all[i])
  }
  let sql = insertMessageSql.get(present)
  if (sql === undefined) {
    const columns = Object.keys(values).filter((_, i) => all[i] !== null)
    sql = `insert into messages (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`
    insertMessageSql.set(present, sql)
  }
  return Number(statement(sqlite, sql).run(...bound).lastInsertRowid)
}

export type FastSend =
  | { kind: 'sent'; message: MessageView; recorded: Recorded[] }
  /** the client id was used before: posting.ts's retry rules answer it */
  | { kind: 'retry'; first: FirstSend }
  /**
   * not a personal chat of mine whose other member lets me write (a new pair, a group or channel,
   * not a member, blocked, an inactive receiver): the general path handles it or refuses it
   */
  | { kind: 'general' }

export interface FastPath {
  /**
   * `turn` (a socket's sends to one chat, lib/lane.ts): a path that queues the send where sends
   * are stored in the order queued places it, so that the next send of the lane can join the same
   * commit; one that sends it to the general path after all defers it there.
   */
  send(
    me: UserRow,
    target: { chatId?: number; receiverId?: number },
    draft: Draft,
    clientId: string | null,
    now: number,
    turn?: Turn,
  ): Promise<FastSend>
}

const fastPaths = new WeakMap<AppContext, FastPath>()

/** The fast path, on SQLite unless SEND_FAST_PATH=off; null on PostgreSQL (every send takes the general path). */
export function fastPath(ctx: AppContext): FastPath | null {
  if (!ctx.sqlite || !ctx.config.sendFastPath) return null
  let path = fastPaths.get(ctx)
  if (!path)
    fastPaths.set(ctx, (path = { send: (me, target, draft, clientId, now, turn) => send(ctx, { me, target, draft, clientId, now, turn }) }))
  return path
}

/** One send as the fast path takes it (see FastPath). */
interface Request {
  me: UserRow
  target: { chatId?: number; receiverId?: number }
  draft: Draft
  clientId: string | null
  now: number
  turn?: Turn
}

function send(ctx: AppContext, request: Request): Promise<FastSend> {
  const { draft, turn } = request
  // topics exist only in groups, attachments have their own checks: the general path says so
  if (draft.topic_id !== null || draft.attachment) return Promise.resolve({ kind: 'general' })
  const outcome = batched(ctx, (sqlite, pass): FastSend => {
    const sent = sendNow(ctx, sqlite, pass, request)
    // this send goes on by the general path, after this batch: later ones of its lane follow it there
    if (sent.kind === 'general') void turn?.defer()
    return sent
  })
  // jobs run in the order queued: the next send of the lane may queue behind this one
  turn?.placed()
  // the update log rows it writes go to the recent log, to be moved
  recentWritten(ctx)
  return outcome
}

/**
 * What the sends of one shared pass (db/sqlite-hot.ts) left for the later ones: sends to one chat
 * in one batch (a socket's pipelined sends, lib/lane.ts) write the chat's row and touch its members
 * once, at the pass's end, and all but the first skip the chat read.
 */
interface PassSends {
  /** each chat sent to in this pass, as it stands now (its row is written at the pass's end) */
  chats: Map<number, PassChat>
  /** each user this pass logged for: their message.new entries, written as one row at the pass's end */
  runs: Map<number, Run>
}
/**
 * One user's message.new entries of a pass: consecutive seqs ending at `seq`, their latest (nothing
 * else logs for them in the pass)
 */
interface Run {
  seq: number
  messageIds: number[]
  at: number
}
interface PassChat {
  peer1: number
  peer2: number
  /** the one member who sends in this pass: a send by the other finds messages it has not read */
  sender: number
  messageSeq: number
  lastId: number
  lastAt: number
}
const PASS_SENDS = Symbol('fast-path sends')

function passSends(sqlite: SQLite.Database, pass: SharedPass): PassSends {
  let sends = pass.state.get(PASS_SENDS) as PassSends | undefined
  if (!sends) {
    const created: PassSends = { chats: new Map(), runs: new Map() }
    pass.state.set(PASS_SENDS, (sends = created))
    pass.atEnd(() => writeRuns(sqlite, created.runs))
  }
  return sends
}

/** Each user's entries of the pass as one row (see INSERT_RUN), and their counter. */
function writeRuns(sqlite: SQLite.Database, runs: Map<number, Run>) {
  const insert = statement(sqlite, INSERT_RUN)
  const setSeq = statement(sqlite, SET_SEQ)
  for (const [userId, { seq, messageIds, at }] of runs) {
    if (messageIds.length === 1) insert.run(userId, seq, messageIds[0], null, at)
    else insert.run(userId, seq, null, runColumn(messageIds), at)
    setSeq.run(userId, seq)
  }
}

/** The chat's row and its members after the chat's latest send (twins: see UPDATE_CHAT, TOUCH_MEMBERS). */
function writeChat(sqlite: SQLite.Database, chatId: number, chat: PassChat) {
  const { sender, messageSeq: seq, lastId, lastAt } = chat
  statement(sqlite, UPDATE_CHAT).run(seq, lastId, lastAt, chatId)
  statement(sqlite, TOUCH_MEMBERS).run(lastAt, sender, seq, seq, sender, seq, lastAt, chatId)
}

/** The send, inside the batch's transaction (may run twice: see db/sqlite-hot.ts batched). */
function sendNow(
  ctx: AppContext,
  sqlite: SQLite.Database,
  pass: SharedPass | null,
  { me, target, draft, clientId, now, turn }: Request,
): FastSend {
  const get = <T>(sql: string, ...params: unknown[]) => statement(sqlite, sql).get(...params) as T | undefined
  if (clientId) {
    const message = get<MessageRow>(FIND_BY_CLIENT_ID, me.id, clientId)
    if (message) return { kind: 'retry', first: { message } }
    const pending = get<ScheduledMessageRow>(FIND_PENDING_BY_CLIENT_ID, me.id, clientId)
    if (pending) return { kind: 'retry', first: { pending } }
  }
  // an earlier send of this lane went to the general path: this one may not overtake it
  if (turn && !turn.inOrder()) return { kind: 'general' }
  const sends = pass && passSends(sqlite, pass)
  const read = (sql: string, ...params: number[]) =>
    statement(sqlite, sql)
      .raw(true)
      .get(...params) as HotChat | undefined
  let chat: HotChat | undefined
  const mine = target.chatId !== undefined ? sends?.chats.get(target.chatId) : undefined
  if (mine && mine.sender === me.id) {
    // I sent to this chat earlier in this pass: what the read would find is what that send left
    const { peer1, peer2, messageSeq } = mine
    chat = [peer1, peer2, messageSeq, sends!.runs.get(peer1)!.seq, sends!.runs.get(peer2)!.seq, messageSeq]
  } else {
    if (target.chatId !== undefined) chat = read(MEMBER_CHAT, me.id, target.chatId)
    else {
      const other = target.receiverId!
      const [p1, p2] = me.id < other ? [me.id, other] : [other, me.id]
      chat = read(PAIR_CHAT, me.id, other, p1, p2, me.id)
    }
    // earlier sends of this pass to the chat have not written its row or their sender's read
    // position yet (the update log they wrote at once): read those as they left them
    const earlier = chat && sends?.chats.get(chat[6] ?? target.chatId!)
    if (chat && earlier) {
      chat[2] = earlier.messageSeq
      if (earlier.sender === me.id) chat[5] = earlier.messageSeq
    }
    // nor the update log rows of this pass (written at its end): a peer logged for in this pass
    // (by this chat or another) stands where that left them
    if (chat && sends) {
      chat[3] = sends.runs.get(chat[0])?.seq ?? chat[3]
      chat[4] = sends.runs.get(chat[1])?.seq ?? chat[4]
    }
  }
  if (!chat) return { kind: 'general' }
  const [peer1, peer2, messageSeq, peer1Seq, peer2Seq, myReadSeq, chatId = target.chatId!] = chat
  // Sending reads the chat: with messages of theirs I have not read, that is a read receipt to
  // log and publish as well, which the general path does.
  if (myReadSeq < messageSeq) return { kind: 'general' }
  // a bad reply target: the general path refuses it (posting.ts assertReplyTarget)
  if (draft.reply_to_id !== null && !isReplyTarget(get(REPLY_TARGET, draft.reply_to_id), chatId)) return { kind: 'general' }
  const receiverId = peer1 === me.id ? peer2 : peer1

  // The row as the database now holds it, built here rather than read back (RETURNING * costs
  // as much as the insert itself).
  const values = messageValues(draft, { chatId, seq: messageSeq + 1, senderId: me.id, receiverId, clientId, origin: null, now })
  const row = messageRow(insertMessage(sqlite, values), values)
  const after: PassChat = { peer1, peer2, sender: me.id, messageSeq: row.seq, lastId: row.id, lastAt: now }
  if (!sends) writeChat(sqlite, chatId, after)
  else {
    if (!sends.chats.has(chatId)) pass!.atEnd(() => writeChat(sqlite, chatId, sends.chats.get(chatId)!))
    sends.chats.set(chatId, after)
  }
  const message = presentMessage(row, me, receiverId === me.id)
  // Saved Messages (a chat with oneself) has one recipient
  const recorded: Recorded[] = [{ userId: peer1, seq: peer1Seq + 1 }]
  if (peer2 !== peer1) recorded.push({ userId: peer2, seq: peer2Seq + 1 })
  if (!sends) {
    statement(sqlite, INSERT_UPDATES[recorded.length - 1]).run(...recorded.flatMap((r) => [r.userId, r.seq, row.id, now]))
    for (const { userId, seq } of recorded) statement(sqlite, SET_SEQ).run(userId, seq)
  } else {
    for (const { userId, seq } of recorded) {
      const run = sends.runs.get(userId)
      if (!run) sends.runs.set(userId, { seq, messageIds: [row.id], at: now })
      else {
        run.seq = seq
        run.messageIds.push(row.id)
        run.at = now
      }
    }
  }
  for (const { userId, seq } of prunes(recorded, ctx.config.updateLogKeep)) {
    statement(sqlite, PRUNE).run(userId, seq)
    if (statement(sqlite, KEPT_IN_MAIN).get(userId, seq) === undefined) statement(sqlite, PRUNE_RECENT).run(userId, seq)
  }
  return { kind: 'sent', message, recorded }
}
