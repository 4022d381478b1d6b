/**
 * messages/send on PostgreSQL, the batch path: group commit. A send is queued; while one batch is
 * being written the sends that arrive wait, and are then written together in the next
 * transaction: four round trips whatever its size (BEGIN; one statement that reads and locks what
 * the batch needs; one statement that writes it all, over arrays; COMMIT) and one WAL flush. On a
 * core shared with PostgreSQL each round trip costs two context switches, so their number
 * matters more than the statements' work. Every send's promise settles only after its batch
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
import type { Turn } from '../../lib/lane.js'
import { prunes, type Recorded } from '../../realtime/updates.js'
import { messageValues, type Draft } from './draft.js'
import { usableAccount } from '../../policies/accounts.js'
import { blockedBy } from '../../policies/blocks.js'
import { isReplyTarget, otherPeer } from '../../policies/chats.js'
import { col } from '../../policies/sql.js'
import type { FirstSend } from './posting.js'
import type { FastPath, FastSend } from './posting-sqlite.js'
import { presentMessage } from './present.js'

/** batches written at once (see Batcher.start) */
const MAX_IN_FLIGHT = 2
/** sends queued before a second batch starts beside one in flight; fewer wait for it to finish */
const SECOND_BATCH_MIN = 32
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
  /** its place among a socket's sends to one chat (see Batcher: queued, it lets the next one start) */
  turn?: Turn
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
    paths.set(ctx, (path = { send: (me, target, draft, clientId, now, turn) => batcher.send({ me, target, draft, clientId, now, turn }) }))
  }
  return path
}

/**
 * The queue of sends and the batches written from it.
 *
 * A socket's sends to one chat (a lane, lib/lane.ts) are placed as soon as they are queued, so the
 * next one of the lane queues behind it and both can share a batch. Their order holds because a
 * lane is never in two batches at once: while a batch in flight holds one of its sends, the lane's
 * later sends wait in the queue (sends of other lanes pass them) and go in a batch that starts
 * after it. A send the batch sends the general way (or a batch rolled back) defers, before its
 * lane is free again, so the lane's later sends see it and follow it there rather than overtake it.
 */
class Batcher {
  private queue: Job[] = []
  /** batches being written now: at most MAX_IN_FLIGHT */
  private inFlight = 0
  /** lanes with a send in a batch being written (their later sends wait for it) */
  private readonly busy = new Set<object>()

  constructor(private readonly ctx: AppContext) {}

  send(request: Omit<Job, 'settle'>): Promise<FastSend> {
    // topics exist only in groups, attachments have their own checks: the general path says so
    if (request.draft.topic_id !== null || request.draft.attachment) return Promise.resolve({ kind: 'general' })
    const outcome = new Promise<FastSend>((settle) => {
      this.queue.push({ ...request, settle })
      // the sends of this moment go together: the batch starts once the event loop has taken them all
      if (this.queue.length === (this.inFlight === 0 ? 1 : SECOND_BATCH_MIN) && this.inFlight < MAX_IN_FLIGHT)
        setImmediate(() => this.start())
    })
    // queued in order: the next send of the lane may queue behind this one
    request.turn?.placed()
    return outcome
  }

  /**
   * Starts a batch of what is queued, if a slot is free. Two may be in flight: while one waits for
   * its commit (the WAL flush), the next runs its statements. The second starts only once
   * SECOND_BATCH_MIN sends wait; fewer wait for the first to finish and go together then, since a
   * batch's cost is mostly per batch (its round trips, its commit): on a core shared with
   * PostgreSQL, two small batches cost about twice what one of their sum does. Batches never wait
   * on each other in a circle: each takes its chats' rows in id order first, and a chat's later
   * sends wait for the earlier batch's commit on that row (so a chat's seqs follow commit order).
   */
  private start() {
    if (this.queue.length === 0 || this.inFlight >= MAX_IN_FLIGHT) return
    if (this.inFlight > 0 && this.queue.length < SECOND_BATCH_MIN) return
    const { jobs, lanes } = this.take()
    // all that waits belongs to lanes in the batch being written: it goes once that one is done
    if (jobs.length === 0) return
    this.inFlight++
    void this.write(jobs, lanes).finally(() => {
      this.inFlight--
      this.start()
    })
  }

  private async write(jobs: Job[], lanes: Set<object>) {
    let outcomes: FastSend[]
    try {
      outcomes = await this.ctx.db.transaction().execute((trx) => writeBatch(this.ctx, trx, jobs))
    } catch (error) {
      // rolled back as a whole: each goes the general way alone (and fails alone if it must)
      this.ctx.log.debug({ err: error, sends: jobs.length }, 'send batch rolled back; its sends take the general path')
      outcomes = jobs.map(() => ({ kind: 'general' }))
    }
    // before the lanes are free: their later sends must see these go the general way
    jobs.forEach((job, i) => {
      if (outcomes[i].kind === 'general') void job.turn?.defer()
    })
    for (const lane of lanes) this.busy.delete(lane)
    for (const [i, job] of jobs.entries()) job.settle(outcomes[i])
  }

  /** The next batch, in queue order: up to MAX_BATCH sends and about MAX_BATCH_BYTES, none of a busy lane. */
  private take(): { jobs: Job[]; lanes: Set<object> } {
    const jobs: Job[] = []
    const lanes = new Set<object>()
    const waiting: Job[] = []
    let bytes = 0
    let full = false
    for (const job of this.queue) {
      const lane = job.turn?.lane
      const size = job.draft.content.length + (job.draft.encrypted_content?.length ?? 0)
      // once one send does not fit, none after it goes (a smaller one of its lane would overtake it)
      full ||= jobs.length > 0 && (jobs.length >= MAX_BATCH || bytes + size > MAX_BATCH_BYTES)
      if (full || (lane && this.busy.has(lane))) {
        waiting.push(job)
        continue
      }
      bytes += size
      jobs.push(job)
      if (lane) lanes.add(lane)
    }
    // a lane in this batch is busy until the batch is done (its sends left out wait: the batch was full)
    for (const lane of lanes) this.busy.add(lane)
    this.queue = waiting
    return { jobs, lanes }
  }
}

/** What the batch's read found, per job (by its index) and per reply target. */
interface BatchRead {
  /** each job's personal chat, locked, if this path may write it */
  locked: Map<number, { id: number; peer1_id: number; peer2_id: number; message_seq: number; read_seq: number }>
  /** what each (sender, client id) already made */
  firsts: Map<string, FirstSend>
  replies: Map<number, { chat_id: number; deleted_for_all: number }>
}

/**
 * The batch's reads, in one round trip. Each job's personal chat, locked (in id order, so that
 * concurrent batches and general sends never wait on each other in a circle), with its seq and the
 * sender's read position. The sender's member row is locked with the chat row: a read that waited
 * for another batch's commit then sees both rows as that batch left them (locking the chat alone
 * gave its new seq beside the member's old read position, and the send looked unread and went the
 * general way, one lock wait per send). The other member's row is locked too: the write statement
 * moves both members' rows and their update seqs in an order of PostgreSQL's choosing, and a read
 * or any other change that moves a member's row and then logs to that member's update seqs could
 * otherwise hold the one while the batch held the other (a deadlock, found by the conformance run;
 * test/conformance/read-race.test.ts). Only chats this path may write: the sender is a member,
 * the other member has not blocked them, and for a send to a user (a new pair goes the general
 * way) that user is active. twins: chats.requireMember and chats.getOrCreatePersonal, posting.ts
 * assertMaySend. With them, what each client id already made (twins: repo.ts findByClientId, then
 * scheduled-repo.ts findByClientId, as posting.ts findFirstSend) and each reply target (twin:
 * posting.ts assertReplyTarget). A retry is rare: its rows are read in a second round trip, by id.
 */
async function readBatch(db: Db, jobs: Job[]): Promise<BatchRead> {
  const pairs = jobs.map((job) => {
    const other = job.target.receiverId
    return other === undefined ? [null, null] : job.me.id < other ? [job.me.id, other] : [other, job.me.id]
  })
  const result = await sql<{
    kind: 'chat' | 'sent' | 'pending' | 'reply'
    i: number
    a: number
    b: number | null
    c: number | null
    d: number | null
    e: number | null
  }>`
    with r as (
      select * from unnest(${jobs.map((job) => job.me.id)}::int8[], ${jobs.map((job) => job.target.chatId ?? null)}::int8[],
        ${pairs.map((p) => p[0])}::int8[], ${pairs.map((p) => p[1])}::int8[], ${jobs.map((job) => job.clientId)}::text[],
        ${jobs.map((job) => job.draft.reply_to_id)}::int8[]) with ordinality as r(me, chat_id, p1, p2, client_id, reply_id, i)
    ),
    locked as (
      select r.i, c.id, c.peer1_id, c.peer2_id, c.message_seq, m.read_seq
      from r
      join chats c on c.id = coalesce(r.chat_id, (select p.id from chats p where p.peer1_id = r.p1 and p.peer2_id = r.p2))
      join chat_members m on m.chat_id = c.id and m.user_id = r.me
      join chat_members peer on peer.chat_id = c.id and peer.user_id = ${otherPeer('c', col('r.me'))}
      where c.chat_type = 'personal'
        and not ${blockedBy(col('peer.user_id'), col('r.me'))}
        and (r.chat_id is not null or exists (select 1 from users u where u.id = peer.user_id and ${usableAccount('u')}))
      order by c.id
      for update of c, m, peer
    )
    select 'chat' as kind, i, id as a, peer1_id as b, peer2_id as c, message_seq as d, read_seq as e from locked
    union all
    select 'sent', r.i, m.id, null, null, null, null from r join messages m on m.sender_id = r.me and m.client_message_id = r.client_id
    union all
    select 'pending', r.i, s.id, null, null, null, null from r join scheduled_messages s on s.sender_id = r.me and s.client_message_id = r.client_id
    union all
    select distinct 'reply', 0, t.id, t.chat_id, t.deleted_for_all::int8, null::int8, null::int8 from r join messages t on t.id = r.reply_id`.execute(
    db,
  )

  const read: BatchRead = { locked: new Map(), firsts: new Map(), replies: new Map() }
  const sent: number[] = []
  const pending: number[] = []
  for (const row of result.rows) {
    // ordinality counts from 1
    if (row.kind === 'chat')
      read.locked.set(Number(row.i) - 1, { id: row.a, peer1_id: row.b!, peer2_id: row.c!, message_seq: row.d!, read_seq: row.e! })
    else if (row.kind === 'sent') sent.push(row.a)
    else if (row.kind === 'pending') pending.push(row.a)
    else read.replies.set(row.a, { chat_id: row.b!, deleted_for_all: row.c! })
  }
  if (sent.length > 0) {
    const rows = await sql<MessageRow>`select * from messages where id = any(${sent}::int8[])`.execute(db)
    for (const message of rows.rows) read.firsts.set(`${message.sender_id}:${message.client_message_id}`, { message })
  }
  if (pending.length > 0) {
    const rows = await sql<ScheduledMessageRow>`select * from scheduled_messages where id = any(${pending}::int8[])`.execute(db)
    for (const row of rows.rows) {
      const key = `${row.sender_id}:${row.client_message_id}`
      if (!read.firsts.has(key)) read.firsts.set(key, { pending: row })
    }
  }
  return read
}

async function writeBatch(ctx: AppContext, db: Db, jobs: Job[]): Promise<FastSend[]> {
  const outcomes: FastSend[] = jobs.map(() => ({ kind: 'general' }))
  const { locked, firsts, replies } = await readBatch(db, jobs)

  const chats = new Map<number, ChatState>()
  /** senders whose earlier send to a chat in this batch went the general way: their later ones follow it */
  const detoured = new Set<string>()
  const claimed = new Set<string>()
  const placed: { job: number; chatId: number; seq: number; receiverId: number }[] = []
  jobs.forEach((job, i) => {
    if (job.clientId !== null) {
      const key = `${job.me.id}:${job.clientId}`
      const first = firsts.get(key)
      if (first) {
        outcomes[i] = { kind: 'retry', first }
        return
      }
      // the same client id twice in one batch: the first is written, the retry answered after it
      if (claimed.has(key)) return
      claimed.add(key)
    }
    // an earlier send of this socket to this chat went the general way: this one may not overtake it
    if (job.turn && !job.turn.inOrder()) return
    const row = locked.get(i)
    if (!row) return
    const lane = `${job.me.id}:${row.id}`
    if (detoured.has(lane)) return
    let chat = chats.get(row.id)
    if (!chat) {
      chat = { peer1: row.peer1_id, peer2: row.peer2_id, seq: row.message_seq, readSeqs: new Map(), at: job.now, reads: new Map() }
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
    return messageValues(job.draft, {
      chatId: p.chatId,
      seq: p.seq,
      senderId: job.me.id,
      receiverId: p.receiverId,
      clientId: job.clientId,
      origin: null,
      now: job.now,
    })
  })
  const columns = sql.join(Object.keys(values[0]).map((column) => sql.ref(column)))

  // twin: chats/repo.ts touchMembers: every member's chat to the top of their list; senders have read it
  const members: { chatId: number; userId: number; at: number; readSeq: number; readAt: number }[] = []
  for (const [chatId, chat] of chats) {
    for (const userId of new Set([chat.peer1, chat.peer2])) {
      const read = chat.reads.get(userId)
      members.push({ chatId, userId, at: chat.at, readSeq: read?.seq ?? 0, readAt: read?.at ?? 0 })
    }
  }

  // twin: realtime/updates.ts record (nextSeqs): each recipient's seqs, taken
  // for the whole batch at once, in user id order (so concurrent upserts never wait in a circle).
  // A recipient's k-th message of the batch gets the seq (their new top − their count + k): `back`
  // below their new top.
  const perUser = new Map<number, number>()
  /** one entry per (message, recipient), in the batch's order; `n` is the message's index in `placed` */
  const logged: { n: number; userId: number; chatId: number; seq: number; k: number; at: number }[] = []
  placed.forEach((p, n) => {
    const chat = chats.get(p.chatId)!
    // Saved Messages (a chat with oneself) has one recipient
    for (const userId of chat.peer1 === chat.peer2 ? [chat.peer1] : [chat.peer1, chat.peer2]) {
      const k = (perUser.get(userId) ?? 0) + 1
      perUser.set(userId, k)
      logged.push({ n, userId, chatId: p.chatId, seq: p.seq, k, at: jobs[p.job].now })
    }
  })
  const back = logged.map((l) => perUser.get(l.userId)! - l.k)
  const users = [...perUser.keys()].sort((a, b) => a - b)
  const chatIds = [...chats.keys()]

  // One statement writes the batch: the messages (twin: repo.ts insertMessage), each chat's seq and
  // last message (twin: chats/repo.ts nextMessageSeq and setLastMessage), its members' activity and
  // read positions, the recipients' update seqs, and message.new in their update logs, logged as a
  // reference to the message (rendered when read). Its parts see the messages' ids through RETURNING.
  // The rows go as one JSON parameter: every text in them passed the request checks, which refuse
  // U+0000 and lone surrogates (http/validation.ts), the two things PostgreSQL's JSON cannot turn
  // into text.
  const written = await sql<{ kind: 'message' | 'user'; a: number; b: number; c: number }>`
    with ins as (
      insert into messages (${columns})
      select ${columns} from json_populate_recordset(null::messages, ${JSON.stringify(values)}::json)
      returning id, chat_id, seq
    ),
    chats_moved as (
      update chats c set message_seq = v.seq, last_message_id = i.id, last_message_at = v.at
      from unnest(${chatIds}::int8[], ${chatIds.map((id) => chats.get(id)!.seq)}::int8[], ${chatIds.map((id) => chats.get(id)!.at)}::int8[]) as v(id, seq, at)
      join ins i on i.chat_id = v.id and i.seq = v.seq
      where c.id = v.id
    ),
    members_touched as (
      update chat_members m set last_activity_at = v.at,
        read_seq = case when m.read_seq < v.read_seq then v.read_seq else m.read_seq end,
        read_at = case when m.read_seq < v.read_seq then v.read_at else m.read_at end
      from unnest(${members.map((m) => m.chatId)}::int8[], ${members.map((m) => m.userId)}::int8[], ${members.map((m) => m.at)}::int8[],
        ${members.map((m) => m.readSeq)}::int8[], ${members.map((m) => m.readAt)}::int8[]) as v(chat_id, user_id, at, read_seq, read_at)
      where m.chat_id = v.chat_id and m.user_id = v.user_id
    ),
    tops as (
      insert into update_seqs (user_id, seq)
      select * from unnest(${users}::int8[], ${users.map((u) => perUser.get(u)!)}::int8[]) order by 1
      on conflict (user_id) do update set seq = update_seqs.seq + excluded.seq
      returning user_id, seq
    ),
    logged as (
      insert into updates (user_id, seq, type, message_id, created_at)
      select v.user_id, t.seq - v.back, 'message.new', i.id, v.at
      from unnest(${logged.map((l) => l.userId)}::int8[], ${logged.map((l) => l.chatId)}::int8[], ${logged.map((l) => l.seq)}::int8[],
        ${back}::int8[], ${logged.map((l) => l.at)}::int8[]) as v(user_id, chat_id, seq, back, at)
      join tops t on t.user_id = v.user_id
      join ins i on i.chat_id = v.chat_id and i.seq = v.seq
    )
    select 'message' as kind, id as a, chat_id as b, seq as c from ins
    union all
    select 'user', user_id, seq, 0 from tops`.execute(db)

  const idOf = new Map<string, number>()
  const tops = new Map<number, number>()
  for (const row of written.rows) {
    if (row.kind === 'message') idOf.set(`${row.b}:${row.c}`, row.a)
    else tops.set(row.a, row.b)
  }
  // each message's entries, with the seqs the statement gave them
  const recordedOf: Recorded[][] = placed.map(() => [])
  for (const [i, l] of logged.entries()) recordedOf[l.n].push({ userId: l.userId, seq: tops.get(l.userId)! - back[i] })
  placed.forEach((p, n) => {
    const job = jobs[p.job]
    // The row as the database now holds it, built here rather than read back.
    const row: MessageRow = {
      id: idOf.get(`${p.chatId}:${p.seq}`)!,
      ...values[n],
      deleted_for_all: 0,
      edited_at: null,
      scheduled_at: null,
      delivered_at: null,
      read_at: null,
    }
    outcomes[p.job] = { kind: 'sent', message: presentMessage(row, job.me, p.receiverId === job.me.id), recorded: recordedOf[n] }
  })
  const recorded = recordedOf.flat()
  // twin: the prune in realtime/updates.ts record (rare: one seq in a hundred triggers one)
  const cuts = prunes(recorded, ctx.config.updateLogKeep)
  if (cuts.length > 0) {
    await sql`
      delete from updates u using unnest(${cuts.map((c) => c.userId)}::int8[], ${cuts.map((c) => c.seq)}::int8[]) as v(user_id, seq)
      where u.user_id = v.user_id and u.seq <= v.seq`.execute(db)
  }
  return outcomes
}
