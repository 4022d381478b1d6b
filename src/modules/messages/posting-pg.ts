/**
 * messages/send on PostgreSQL, the batch path: group commit. A send is queued; while one batch is
 * being written the sends that arrive wait, and are then written together in the next
 * transaction, one statement per step for the whole batch (multi-row inserts and updates over
 * arrays), so a batch of N sends costs the round trips and the one commit (its WAL flush) that a
 * single send costs in the general path. Every send's promise settles only after its batch
 * committed (or rolled back). Two batches may be in flight: one waiting for its commit while the
 * next runs.
 *
 * It handles the case the SQLite fast path handles (posting-sqlite.ts): a personal chat of mine
 * whose peer lets me write, nothing unread from them, no attachment or topic. Everything else,
 * and every refusal, goes to the general path (posting.ts). Its rules are posting.ts's: the same
 * row builder (messageValues), the same reply check (isReplyTarget), the same retry lookup
 * order; each statement names its general twin. The parity test (test/api/send-parity.test.ts)
 * runs one conversation through both on PostgreSQL and compares rows, logs and frames.
 *
 * A batch that fails as a whole (a deadlock with another transaction, a client id that another
 * instance inserted meanwhile) is rolled back and each of its sends goes the general way alone,
 * so a failing send fails alone. Batches start in arrival order and lock their chats' rows (in id
 * order, so no two transactions wait on each other in a circle), which keeps each chat's seqs
 * gap-free and in commit order, on one process or several.
 */
import { sql } from 'kysely'
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import type { MessageRow, ScheduledMessageRow, UserRow } from '../../db/tables.js'
import { prunes, type Recorded } from '../../realtime/updates.js'
import { messageValues, type Draft } from './draft.js'
import { isReplyTarget, type FirstSend } from './posting.js'
import type { FastPath, FastSend } from './posting-sqlite.js'
import { presentMessage } from './present.js'

/** batches written at once (see Batcher.start) */
const MAX_IN_FLIGHT = 2
/** a batch holds at most this many sends… */
const MAX_BATCH = 256
/** …and about this many bytes of text (a batch is one statement per step: bounded, so is its memory) */
const MAX_BATCH_BYTES = 1024 * 1024

interface Job {
  me: UserRow
  target: { chatId?: number; receiverId?: number }
  draft: Draft
  clientId: string | null
  now: number
  settle(outcome: FastSend): void
}

/** What the batch learned about a job's chat, with the chat row locked. */
interface ChatState {
  peer1: number
  peer2: number
  /** the chat's seq as the batch has moved it */
  seq: number
  /** each sender's read position as the batch has moved it */
  readSeqs: Map<number, number>
  /** the last send's instant (the chat's last_message_at, every member's last activity) */
  at: number
  lastMessageId: number
  /** per member: the read position this batch moved them to, and when */
  reads: Map<number, { seq: number; at: number }>
}

const paths = new WeakMap<AppContext, FastPath>()

/** The batch path, on PostgreSQL unless SEND_FAST_PATH=off; null on SQLite. */
export function batchPath(ctx: AppContext): FastPath | null {
  if (ctx.dialect !== 'postgres' || !ctx.config.sendFastPath) return null
  let path = paths.get(ctx)
  if (!path) {
    const batcher = new Batcher(ctx)
    paths.set(ctx, (path = { send: (me, target, draft, clientId, now) => batcher.send(me, target, draft, clientId, now) }))
  }
  return path
}

class Batcher {
  private queue: Job[] = []
  /** batches being written now: at most MAX_IN_FLIGHT */
  private inFlight = 0

  constructor(private readonly ctx: AppContext) {}

  send(me: UserRow, target: Job['target'], draft: Draft, clientId: string | null, now: number): Promise<FastSend> {
    // topics exist only in groups, attachments have their own checks: the general path says so
    if (draft.topic_id !== null || draft.attachment) return Promise.resolve({ kind: 'general' })
    return new Promise((settle) => {
      this.queue.push({ me, target, draft, clientId, now, settle })
      // the sends of this moment go together: the batch starts once the event loop has taken them all
      if (this.queue.length === 1 && this.inFlight < MAX_IN_FLIGHT) setImmediate(() => this.start())
    })
  }

  /**
   * Starts a batch of what is queued, if a slot is free. Two may be in flight: while one waits for
   * its commit (the WAL flush), the next runs its statements. They never wait on each other in a
   * circle: each takes its chats' rows in id order first, and a chat's later sends wait for the
   * earlier batch's commit on that row (so a chat's seqs follow commit order).
   */
  private start() {
    if (this.queue.length === 0 || this.inFlight >= MAX_IN_FLIGHT) return
    const jobs = this.take()
    this.inFlight++
    void this.write(jobs).finally(() => {
      this.inFlight--
      this.start()
    })
  }

  private async write(jobs: Job[]) {
    let outcomes: FastSend[]
    try {
      outcomes = await this.ctx.db.transaction().execute((trx) => writeBatch(this.ctx, trx, jobs))
    } catch (error) {
      // rolled back as a whole: each goes the general way alone (and fails alone if it must)
      this.ctx.log.debug({ err: error, sends: jobs.length }, 'send batch rolled back; its sends take the general path')
      outcomes = jobs.map(() => ({ kind: 'general' }))
    }
    jobs.forEach((job, i) => job.settle(outcomes[i]))
  }

  private take(): Job[] {
    let bytes = 0
    let count = 0
    for (const job of this.queue) {
      bytes += job.draft.content.length + (job.draft.encrypted_content?.length ?? 0)
      if (count > 0 && (count >= MAX_BATCH || bytes > MAX_BATCH_BYTES)) break
      count++
    }
    return this.queue.splice(0, count)
  }
}

/** twins: repo.ts findByClientId, then scheduled-repo.ts findByClientId (posting.ts findFirstSend) */
async function firstSends(db: Db, jobs: Job[]): Promise<Map<string, FirstSend>> {
  const asked = jobs.filter((job) => job.clientId !== null)
  const found = new Map<string, FirstSend>()
  if (asked.length === 0) return found
  const senders = asked.map((job) => job.me.id)
  const clientIds = asked.map((job) => job.clientId)
  const messages = await sql<MessageRow>`
    select * from messages
    where (sender_id, client_message_id) in (select * from unnest(${senders}::int8[], ${clientIds}::text[]))`.execute(db)
  for (const message of messages.rows) found.set(`${message.sender_id}:${message.client_message_id}`, { message })
  const pending = await sql<ScheduledMessageRow>`
    select * from scheduled_messages
    where (sender_id, client_message_id) in (select * from unnest(${senders}::int8[], ${clientIds}::text[]))`.execute(db)
  for (const row of pending.rows) {
    const key = `${row.sender_id}:${row.client_message_id}`
    if (!found.has(key)) found.set(key, { pending: row })
  }
  return found
}

/**
 * Each job's personal chat, locked (in id order, so that concurrent batches and general sends
 * never wait on each other in a circle), with its seq and the sender's read position. Only chats
 * this path may write: the sender is a member, the other member has not blocked them, and for a
 * send to a user (a new pair goes the general way) that user is active. twins: chats.requireMember
 * and chats.getOrCreatePersonal, posting.ts assertMaySend.
 */
async function lockChats(db: Db, jobs: Job[]) {
  const mes = jobs.map((job) => job.me.id)
  const chatIds = jobs.map((job) => job.target.chatId ?? null)
  const pairs = jobs.map((job) => {
    const other = job.target.receiverId
    return other === undefined ? [null, null] : job.me.id < other ? [job.me.id, other] : [other, job.me.id]
  })
  const result = await sql<{ i: number; id: number; peer1_id: number; peer2_id: number; message_seq: number; read_seq: number }>`
    select r.i, c.id, c.peer1_id, c.peer2_id, c.message_seq, m.read_seq
    from unnest(${mes}::int8[], ${chatIds}::int8[], ${pairs.map((p) => p[0])}::int8[], ${pairs.map((p) => p[1])}::int8[])
      with ordinality as r(me, chat_id, p1, p2, i)
    join chats c on c.id = coalesce(r.chat_id, (select p.id from chats p where p.peer1_id = r.p1 and p.peer2_id = r.p2))
    join chat_members m on m.chat_id = c.id and m.user_id = r.me
    where c.chat_type = 'personal'
      and not exists (
        select 1 from blocked_users b
        where b.blocked_user_id = r.me and b.user_id = case when c.peer1_id = r.me then c.peer2_id else c.peer1_id end)
      and (r.chat_id is not null or exists (
        select 1 from users o
        where o.id = case when c.peer1_id = r.me then c.peer2_id else c.peer1_id end and o.is_active = 1 and o.deleted_at is null))
    order by c.id
    for update of c`.execute(db)
  // ordinality counts from 1
  return new Map(result.rows.map((row) => [Number(row.i) - 1, row]))
}

/** twin: posting.ts assertReplyTarget (repo.ts findById) */
async function replyTargets(db: Db, jobs: Job[]) {
  const ids = [...new Set(jobs.flatMap((job) => (job.draft.reply_to_id === null ? [] : [job.draft.reply_to_id])))]
  if (ids.length === 0) return new Map<number, { chat_id: number; deleted_for_all: number }>()
  const rows = await sql<{ id: number; chat_id: number; deleted_for_all: number }>`
    select id, chat_id, deleted_for_all from messages where id = any(${ids}::int8[])`.execute(db)
  return new Map(rows.rows.map((row) => [row.id, row]))
}

async function writeBatch(ctx: AppContext, db: Db, jobs: Job[]): Promise<FastSend[]> {
  const outcomes: FastSend[] = jobs.map(() => ({ kind: 'general' }))
  const firsts = await firstSends(db, jobs)
  const replies = await replyTargets(db, jobs)
  const locked = await lockChats(db, jobs)

  const chats = new Map<number, ChatState>()
  /** senders whose earlier send to a chat in this batch went the general way: their later ones follow it */
  const detoured = new Set<string>()
  const claimed = new Set<string>()
  const placed: { job: number; chatId: number; seq: number; receiverId: number }[] = []
  jobs.forEach((job, i) => {
    if (job.clientId !== null) {
      const key = `${job.me.id}:${job.clientId}`
      const first = firsts.get(key)
      if (first) return void (outcomes[i] = { kind: 'retry', first })
      // the same client id twice in one batch: the first is written, the retry answered after it
      if (claimed.has(key)) return
      claimed.add(key)
    }
    const row = locked.get(i)
    if (!row) return
    const lane = `${job.me.id}:${row.id}`
    if (detoured.has(lane)) return
    let chat = chats.get(row.id)
    if (!chat) {
      chat = { peer1: row.peer1_id, peer2: row.peer2_id, seq: row.message_seq, readSeqs: new Map(), at: job.now, lastMessageId: 0, reads: new Map() }
      chats.set(row.id, chat)
    }
    if (!chat.readSeqs.has(job.me.id)) chat.readSeqs.set(job.me.id, row.read_seq)
    // Sending reads the chat: with messages of theirs I have not read, that is a read receipt to
    // log and publish as well, which the general path does. So does a bad reply target's refusal.
    const reply = job.draft.reply_to_id
    if (chat.readSeqs.get(job.me.id)! < chat.seq || (reply !== null && !isReplyTarget(replies.get(reply), row.id))) {
      detoured.add(lane)
      return
    }
    chat.seq++
    chat.readSeqs.set(job.me.id, chat.seq)
    chat.reads.set(job.me.id, { seq: chat.seq, at: job.now })
    chat.at = job.now
    placed.push({ job: i, chatId: row.id, seq: chat.seq, receiverId: chat.peer1 === job.me.id ? chat.peer2 : chat.peer1 })
  })
  if (placed.length === 0) return outcomes

  // twin: repo.ts insertMessage (the same row builder)
  const values = placed.map((p) => {
    const job = jobs[p.job]
    return messageValues(job.draft, { chatId: p.chatId, seq: p.seq, senderId: job.me.id, receiverId: p.receiverId, clientId: job.clientId, origin: null, now: job.now })
  })
  const inserted = await db.insertInto('messages').values(values).returning(['id', 'chat_id', 'seq']).execute()
  const idOf = new Map(inserted.map((row) => [`${row.chat_id}:${row.seq}`, row.id]))

  // twin: chats/repo.ts nextMessageSeq and setLastMessage
  const chatIds = [...chats.keys()]
  for (const p of placed) chats.get(p.chatId)!.lastMessageId = idOf.get(`${p.chatId}:${p.seq}`)!
  await sql`
    update chats c set message_seq = v.seq, last_message_id = v.last_id, last_message_at = v.at
    from unnest(${chatIds}::int8[], ${chatIds.map((id) => chats.get(id)!.seq)}::int8[],
      ${chatIds.map((id) => chats.get(id)!.lastMessageId)}::int8[], ${chatIds.map((id) => chats.get(id)!.at)}::int8[]) as v(id, seq, last_id, at)
    where c.id = v.id`.execute(db)

  // twin: chats/repo.ts touchMembers: every member's chat to the top of their list; senders have read it
  const members: { chatId: number; userId: number; at: number; readSeq: number; readAt: number }[] = []
  for (const [chatId, chat] of chats) {
    for (const userId of new Set([chat.peer1, chat.peer2])) {
      const read = chat.reads.get(userId)
      members.push({ chatId, userId, at: chat.at, readSeq: read?.seq ?? 0, readAt: read?.at ?? 0 })
    }
  }
  await sql`
    update chat_members m set last_activity_at = v.at,
      read_seq = case when m.read_seq < v.read_seq then v.read_seq else m.read_seq end,
      read_at = case when m.read_seq < v.read_seq then v.read_at else m.read_at end
    from unnest(${members.map((m) => m.chatId)}::int8[], ${members.map((m) => m.userId)}::int8[], ${members.map((m) => m.at)}::int8[],
      ${members.map((m) => m.readSeq)}::int8[], ${members.map((m) => m.readAt)}::int8[]) as v(chat_id, user_id, at, read_seq, read_at)
    where m.chat_id = v.chat_id and m.user_id = v.user_id`.execute(db)

  // twin: realtime/updates.ts record (db/dialect.ts nextUpdateSeqs): each recipient's seqs, taken
  // for the whole batch at once, in user id order (so concurrent upserts never wait in a circle)
  const perUser = new Map<number, number>()
  const recipientsOf = (p: (typeof placed)[number]) => {
    const chat = chats.get(p.chatId)!
    // Saved Messages (a chat with oneself) has one recipient
    return chat.peer1 === chat.peer2 ? [chat.peer1] : [chat.peer1, chat.peer2]
  }
  for (const p of placed) for (const userId of recipientsOf(p)) perUser.set(userId, (perUser.get(userId) ?? 0) + 1)
  const users = [...perUser.keys()].sort((a, b) => a - b)
  const tops = await sql<{ user_id: number; seq: number }>`
    insert into update_seqs (user_id, seq)
    select * from unnest(${users}::int8[], ${users.map((u) => perUser.get(u)!)}::int8[]) order by 1
    on conflict (user_id) do update set seq = update_seqs.seq + excluded.seq
    returning user_id, seq`.execute(db)
  const nextSeq = new Map(tops.rows.map((row) => [row.user_id, row.seq - perUser.get(row.user_id)!]))

  const logged: { userId: number; seq: number; messageId: number; at: number }[] = []
  placed.forEach((p, n) => {
    const job = jobs[p.job]
    const id = idOf.get(`${p.chatId}:${p.seq}`)!
    const recorded: Recorded[] = recipientsOf(p).map((userId) => {
      const seq = nextSeq.get(userId)! + 1
      nextSeq.set(userId, seq)
      logged.push({ userId, seq, messageId: id, at: job.now })
      return { userId, seq }
    })
    // The row as the database now holds it, built here rather than read back.
    const row: MessageRow = { id, ...values[n], deleted_for_all: 0, edited_at: null, scheduled_at: null, delivered_at: null, read_at: null }
    outcomes[p.job] = { kind: 'sent', message: presentMessage(row, job.me, p.receiverId === job.me.id), recorded }
  })
  // message.new, logged as a reference to the message (rendered when read)
  await sql`
    insert into updates (user_id, seq, type, message_id, created_at)
    select u, s, 'message.new', m, t
    from unnest(${logged.map((l) => l.userId)}::int8[], ${logged.map((l) => l.seq)}::int8[],
      ${logged.map((l) => l.messageId)}::int8[], ${logged.map((l) => l.at)}::int8[]) as v(u, s, m, t)`.execute(db)
  const cuts = prunes(logged, ctx.config.updateLogKeep)
  if (cuts.length > 0) {
    await sql`
      delete from updates u using unnest(${cuts.map((c) => c.userId)}::int8[], ${cuts.map((c) => c.seq)}::int8[]) as v(user_id, seq)
      where u.user_id = v.user_id and u.seq <= v.seq`.execute(db)
  }
  return outcomes
}
