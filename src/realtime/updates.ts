/**
 * The per-user update log: the truth behind `resume` and GET V2/updates (docs/realtime.md).
 *
 * `record` runs inside the change's own transaction: it gives each recipient the next value of
 * their `seq` (see `nextSeqs`) and writes one row per recipient. A client that has seen seq N asks
 * for everything after N and gets it in order, exactly once, whatever pub/sub dropped.
 *
 * A personal chat's `message.new` is kept as a reference to the message (`message_id`, no data):
 * a copy per recipient was most of what a send wrote. Read back, it is the message as it is now,
 * so a client that catches up sees the current text, reactions and read state, and then the later
 * events (edited, deleted, ...) that led there.
 *
 * Each user's latest seq is a counter, `update_seqs` (`nextSeqs`): on PostgreSQL its row lock makes
 * concurrent transactions for one user take turns; SQLite has one writer at a time.
 *
 * On SQLite a new row goes first to `recent_updates`, a small table in the order rows are written,
 * and moves into `updates` within about a quarter second, a slice of users at a time, in
 * statements that join the group commit (`moveSlice`). The reason is pages: SQLite writes every
 * page a commit dirtied to the WAL whole, and the checkpoint copies it again. Each user's newest
 * rows in `updates` sit in a leaf of their own, so a commit of a few hundred sends dirtied a leaf
 * per recipient (about 200) for a few dozen bytes each. In write order a commit's rows share the
 * recent log's last page or two, and each user's leaf in `updates` is written once per round of
 * slices instead of once per commit. (Keyed by user, as it once was, a quarter second of the
 * recent log still spanned about a page per user at high rates: docs/decisions/recent-updates-log.md.) A read of it by user (a replay, the oldest seq, a prune that
 * reaches past the main log: see `record`) scans it, a quarter second of rows; a send does not.
 * Readers see one log: every row of a user in `recent_updates` is newer than their rows in
 * `updates` (a user's rows move oldest first), so a replay merges the two by seq. PostgreSQL logs
 * row changes, not whole pages: it writes `updates` directly.
 *
 * A row may be a run (SQLite's send fast path, messages/posting-sqlite.ts): the message.new
 * entries a user got in one group commit, `message_ids` their message ids, one per seq, ending at
 * the row's `seq`, so that it sorts with single rows by its newest entry; `since` and `oldestSeq`
 * read it as its entries.
 */
import type SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import type { AppContext } from '../context.js'
import type { Db } from '../db/database.js'
import { fromJson } from '../db/json.js'
import { batched, statement, type HotDatabase } from '../db/sqlite-hot.js'
import type { Delivery } from './fanout.js'

export interface Update {
  type: string
  seq: number
  data: unknown
}

export interface Recorded {
  userId: number
  seq: number
}

/**
 * Retention: every time a log's seq passes a multiple of keep/100, its updates older than the
 * newest `keep` are deleted (a range on the primary key; amortized O(1) per update, no sweep). A
 * client resuming from before the oldest kept update is told to `reset` (see `since`).
 *
 * Small steps keep each delete short (100 rows for the default 10,000), and the multiple is offset
 * by the log's owner, so users whose seqs advance together (the two sides of a busy chat) do not
 * all prune in the same commit: the work is spread evenly instead of stalling one moment.
 */
const pruneStep = (keep: number) => Math.max(1, Math.floor(keep / 100))

/** Which of the new seqs trigger a prune, and up to which seq it deletes. */
export function prunes(recorded: Recorded[], keep: number): Recorded[] {
  const step = pruneStep(keep)
  return recorded.filter((r) => (r.seq + r.userId) % step === 0 && r.seq > keep).map((r) => ({ userId: r.userId, seq: r.seq - keep }))
}

/** An update that is about one message, logged as a reference to it (see `since`). */
export interface MessageRef {
  messageId: number
}

export async function record(
  ctx: AppContext,
  db: Db,
  userIds: number[],
  type: string,
  data: unknown,
  now: number,
  about: MessageRef | null = null,
): Promise<Recorded[]> {
  // in user id order, as the send batch takes them: two transactions never wait on each other's counters in a circle
  const recipients = [...new Set(userIds)].sort((a, b) => a - b)
  if (recipients.length === 0) return []
  const recorded = await nextSeqs(db, recipients)
  const json = about ? null : JSON.stringify(data)
  const messageId = about?.messageId ?? null
  const recent = ctx.dialect === 'sqlite'
  await db
    .insertInto(recent ? 'recent_updates' : 'updates')
    .values(recorded.map((r) => ({ user_id: r.userId, seq: r.seq, type, data: json, message_id: messageId, created_at: now })))
    .execute()
  for (const cut of prunes(recorded, ctx.config.updateLogKeep)) {
    await db.deleteFrom('updates').where('user_id', '=', cut.userId).where('seq', '<=', cut.seq).execute()
    // The recent log's part is a scan of it, needed only when the cut reaches past the user's rows
    // in the main log (their rows in the recent log are all newer than those): when nothing they
    // keep is left there, after more than the kept number of updates within one round of moves.
    if (
      recent &&
      !(await db
        .selectFrom('updates')
        .select('seq')
        .where('user_id', '=', cut.userId)
        .where('seq', '>', cut.seq)
        .limit(1)
        .executeTakeFirst())
    ) {
      await db.deleteFrom('recent_updates').where('user_id', '=', cut.userId).where('seq', '<=', cut.seq).execute()
    }
  }
  if (recent) recentWritten(ctx)
  return recorded
}

/**
 * Each recipient's next seq: an upsert on their counter. On PostgreSQL the row lock makes
 * concurrent transactions for one user take turns; SQLite has one writer at a time. (The SQLite
 * send fast path, messages/posting-sqlite.ts, reads and sets the counter itself.)
 */
async function nextSeqs(db: Db, recipients: number[]): Promise<Recorded[]> {
  const rows = await db
    .insertInto('update_seqs')
    .values(recipients.map((userId) => ({ user_id: userId, seq: 1 })))
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ seq: sql`update_seqs.seq + 1` }))
    .returning(['user_id', 'seq'])
    .execute()
  return rows.map((r) => ({ userId: r.user_id, seq: r.seq }))
}

/** The user's latest seq (0 before any update). */
export async function currentSeq(ctx: Pick<AppContext, 'db'>, userId: number): Promise<number> {
  const row = await ctx.db.selectFrom('update_seqs').select('seq').where('user_id', '=', userId).executeTakeFirst()
  return row?.seq ?? 0
}

/**
 * SQLite: the recent log moves in rounds. A round takes the rows written before it began and moves
 * them a slice of users at a time, one slice every MOVE_TICK_MS, each slice about 1/MOVE_SLICES of
 * the rows (a user's rows never split). Each user's rows still move together (their leaf in
 * `updates` is written once per round, about MOVE_TICK_MS × MOVE_SLICES = 250 ms), but no commit
 * carries the whole log: moving a quarter second of rows at 8,000 sends/s (about 4,000 rows) in
 * one statement held every send behind it for 10-20 ms, four times a second, and those sends were
 * the p99 of socket-sends at half load (docs/decisions/recent-updates-log.md).
 */
const MOVE_TICK_MS = 25
const MOVE_SLICES = 10
/** a round this small moves whole, in one tick */
const MOVE_WHOLE_UP_TO = 256
/** the users' range before the first and after the last user id */
const NO_USER_BELOW = Number.MIN_SAFE_INTEGER
const NO_USER_ABOVE = Number.MAX_SAFE_INTEGER

/**
 * twin: the migration's down (2026-11-29T02-00-recent-updates). The round's rows (id up to ?) of
 * the users in (?, ?], in the order of `updates`' key, so that each user's rows go to their leaf
 * together; rows of a user deleted since are left out (the recent log has no foreign key: see the
 * migration). The slice's delete follows in the same transaction.
 */
const MOVE = `insert into updates (user_id, seq, type, data, message_id, message_ids, created_at)
  select user_id, seq, type, data, message_id, message_ids, created_at from recent_updates r
  where id <= ? and user_id > ? and user_id <= ? and exists (select 1 from users u where u.id = r.user_id) order by user_id, seq`
const DELETE_MOVED = 'delete from recent_updates where id <= ? and user_id > ? and user_id <= ?'
/** without a WHERE, SQLite drops the table's pages at once rather than deleting row by row */
const EMPTY = 'delete from recent_updates'
/** the newest row: a round takes the rows up to it */
const LAST_ID = 'select max(id) from recent_updates'
/** whether rows were written after a round began */
const NEWER = 'select 1 from recent_updates where id > ? limit 1'
/** the round's users in key order, with their number of rows */
const ROUND_USERS = 'select user_id, count(*) from recent_updates where id <= ? group by user_id order by user_id'

/** A round of moves: the rows up to `upTo`, in slices of users each ending at a bound. */
interface Round {
  upTo: number
  /** each slice's last user, the last slice's NO_USER_ABOVE */
  bounds: number[]
  /** the slices moved so far */
  moved: number
}

/** each SQLite connection's move: its timer (one at most), the round under way, and whether moves are held */
const moves = new WeakMap<object, { timer: NodeJS.Timeout | null; round: Round | null; held: boolean }>()

function moveOf(sqlite: object) {
  let move = moves.get(sqlite)
  if (!move) moves.set(sqlite, (move = { timer: null, round: null, held: false }))
  return move
}

/**
 * Tests: no slice moves until the returned release is called, which schedules one. A small log
 * moves within MOVE_TICK_MS of a write, too soon for a test to act on a log split between the two
 * tables without it.
 */
export function holdRecentMoves(ctx: HotDatabase & Pick<AppContext, 'log'>): () => void {
  const move = moveOf(ctx.sqlite!)
  move.held = true
  return () => {
    move.held = false
    recentWritten(ctx)
  }
}

/**
 * Notes that rows were written to the recent log (by `record` or the send fast path): a slice
 * moves within MOVE_TICK_MS, and every row within about MOVE_SLICES ticks. Nothing runs while
 * nothing is written. Rows a stopped server left there stay readable, and move after its
 * successor's first write.
 */
export function recentWritten(ctx: HotDatabase & Pick<AppContext, 'log'>): void {
  const sqlite = ctx.sqlite
  if (!sqlite) return
  const move = moveOf(sqlite)
  if (move.timer || move.held) return
  move.timer = setTimeout(() => {
    // a write from now on (this slice's batch included) asks for the next tick itself
    move.timer = null
    // held since this tick was asked for: the release asks again
    if (move.held) return
    void moveSlice(ctx).then(
      (more) => {
        if (more) recentWritten(ctx)
      },
      (err: unknown) => {
        // a closed database moves nothing; the rows stay readable where they are
        if (sqlite.open) ctx.log.warn({ err }, 'could not move the recent update log')
      },
    )
  }, MOVE_TICK_MS).unref()
}

/**
 * Moves the next slice of the recent log into `updates`, in the sends' group commit, starting a
 * round when none is under way. Whether rows are left.
 */
export async function moveSlice(ctx: HotDatabase): Promise<boolean> {
  const move = moveOf(ctx.sqlite!)
  const current = move.round
  // the batch may run this twice (db/sqlite-hot.ts): it touches only the database, and the round's
  // place is kept once the slice has committed
  const { round, more } = await batched(ctx, (sqlite) => moveNext(sqlite, current))
  move.round = round
  return more
}

function moveNext(sqlite: SQLite.Database, current: Round | null): { round: Round | null; more: boolean } {
  let round = current
  if (!round) {
    const upTo = statement(sqlite, LAST_ID).pluck().get() as number | null
    if (upTo === null) return { round: null, more: false }
    round = { upTo, bounds: sliceBounds(statement(sqlite, ROUND_USERS).raw(true).all(upTo) as [number, number][]), moved: 0 }
  }
  const { upTo, bounds, moved } = round
  const from = moved === 0 ? NO_USER_BELOW : bounds[moved - 1]
  statement(sqlite, MOVE).run(upTo, from, bounds[moved])
  statement(sqlite, DELETE_MOVED).run(upTo, from, bounds[moved])
  if (moved + 1 < bounds.length) return { round: { ...round, moved: moved + 1 }, more: true }
  // the round is over: rows written since it began are the next one's
  return { round: null, more: statement(sqlite, NEWER).get(upTo) !== undefined }
}

/**
 * A round's slices: its users (in key order, with their number of rows) cut into about
 * MOVE_SLICES runs of about equal rows, a user's rows never split; each slice's last user, the
 * last slice's NO_USER_ABOVE. A small round is one slice.
 */
export function sliceBounds(users: [userId: number, rows: number][]): number[] {
  const total = users.reduce((sum, [, rows]) => sum + rows, 0)
  if (total <= MOVE_WHOLE_UP_TO) return [NO_USER_ABOVE]
  const share = Math.ceil(total / MOVE_SLICES)
  const bounds: number[] = []
  let rowsInSlice = 0
  for (const [userId, rows] of users) {
    rowsInSlice += rows
    if (rowsInSlice >= share) {
      bounds.push(userId)
      rowsInSlice = 0
    }
  }
  // the last slice takes every user after the one before it
  if (rowsInSlice === 0) bounds.pop()
  bounds.push(NO_USER_ABOVE)
  return bounds
}

/** Moves the whole recent log into `updates`, in the sends' group commit (SQLite only). */
export async function moveRecent(ctx: HotDatabase): Promise<void> {
  await batched(ctx, (sqlite) => {
    statement(sqlite, MOVE).run(Number.MAX_SAFE_INTEGER, NO_USER_BELOW, NO_USER_ABOVE)
    statement(sqlite, EMPTY).run()
  })
  // what a round under way had left is gone with the rest
  moveOf(ctx.sqlite!).round = null
}

/** A run's `message_ids`: its message ids in seq order, as a JSON array (see `since`). */
export const runColumn = (messageIds: number[]): string => `[${messageIds.join(',')}]`

/** A run's entries: each message id with its seq, the last at the row's own seq. */
export function runEntries(row: { seq: number; message_ids: string }): { seq: number; messageId: number }[] {
  const ids = JSON.parse(row.message_ids) as number[]
  const first = row.seq - ids.length + 1
  return ids.map((messageId, i) => ({ seq: first + i, messageId }))
}

/** The seq of a row's first entry. */
const firstSeq = (row: { seq: number; message_ids: string | null }) =>
  row.message_ids === null ? row.seq : runEntries({ seq: row.seq, message_ids: row.message_ids })[0].seq

/** The user's oldest kept seq (null when the log is empty). */
export async function oldestSeq(ctx: Pick<AppContext, 'db' | 'dialect'>, userId: number): Promise<number | null> {
  const { db } = ctx
  const oldest = (table: 'updates' | 'recent_updates') =>
    db.selectFrom(table).select(['seq', 'message_ids']).where('user_id', '=', userId).orderBy('seq').limit(1)
  // SQLite: one statement, so that a move between two reads cannot hide the rows from both
  const query =
    ctx.dialect === 'sqlite'
      ? db
          .selectFrom(oldest('updates').as('u'))
          .selectAll()
          .unionAll(db.selectFrom(oldest('recent_updates').as('r')).selectAll())
          .orderBy('seq')
          .limit(1)
      : oldest('updates')
  const row = await query.executeTakeFirst()
  return row ? firstSeq(row) : null
}

/**
 * Renders the messages a log refers to (message.new kept as a reference), as they are now: the
 * messages module provides it (the update log does not know what a message looks like).
 */
export type RenderMessages = (db: Db, messageIds: number[]) => Promise<ReadonlyMap<number, unknown>>

/** One entry of the log as read: a logged event, or a message.new by reference. */
type Entry = { seq: number; type: string; data: unknown; messageId: number | null }

/**
 * Updates after `since`, oldest first, at most `limit`; message references rendered by `render`.
 * A row may be a run of message.new entries (`message_ids`, one per seq up to the row's `seq`):
 * it is read as those entries, the ones at or before `after` left out. Each row read gives at
 * least one entry after `after`, so `limit` rows give at least `limit` entries.
 */
export async function since(
  ctx: Pick<AppContext, 'db' | 'dialect'>,
  userId: number,
  after: number,
  limit: number,
  render: RenderMessages,
): Promise<Update[]> {
  const { db } = ctx
  const logged = (table: 'updates' | 'recent_updates') =>
    db.selectFrom(table).select(['seq', 'type', 'data', 'message_id', 'message_ids']).where('user_id', '=', userId).where('seq', '>', after)
  // SQLite: the main log's rows come in its key's order; the recent log's (a scan of it) are sorted
  // and merged with them, up to the limit
  const log = ctx.dialect === 'sqlite' ? logged('updates').unionAll(logged('recent_updates')) : logged('updates')
  const rows = await log.orderBy('seq').limit(limit).execute()
  const entries: Entry[] = []
  for (const r of rows) {
    if (r.message_ids === null) {
      entries.push({ seq: r.seq, type: r.type, data: r.data, messageId: r.message_id })
      continue
    }
    for (const { seq, messageId } of runEntries({ seq: r.seq, message_ids: r.message_ids })) {
      if (seq > after) entries.push({ seq, type: r.type, data: null, messageId })
    }
  }
  entries.length = Math.min(entries.length, limit)
  const referenced = entries.flatMap((e) => (e.data === null && e.messageId !== null ? [e.messageId] : []))
  const messages = referenced.length > 0 ? await render(db, referenced) : new Map<number, unknown>()
  return entries.map((e) => {
    if (e.data !== null || e.messageId === null) return { type: e.type, seq: e.seq, data: fromJson(e.data) }
    const message = messages.get(e.messageId)
    // no endpoint deletes a personal message row, but an operator may: the client learns it is gone
    if (!message) return { type: 'message.deleted', seq: e.seq, data: { chat_id: null, message_id: e.messageId, deleted_for_all: true } }
    return { type: e.type, seq: e.seq, data: { message } }
  })
}

/** The live frames of recorded updates, for fan-out after the transaction commits. */
export function framesOf(recorded: Recorded[], type: string, data: unknown): Delivery[] {
  return recorded.map(({ userId, seq }) => ({ userId, frame: { type, seq, data } }))
}
