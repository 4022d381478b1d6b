/**
 * The per-user update log: the truth behind `resume` and GET V2/updates (docs/realtime.md, CONVENTIONS §7).
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
 * On SQLite a new row goes first to `recent_updates`, a small table keyed like `updates`, and
 * moves into `updates` within about a quarter second, a slice of users at a time, in statements
 * that join the group commit (`moveSlice`). The reason is pages: SQLite writes every page a commit
 * dirtied to the WAL whole, and the checkpoint copies it again. Each user's newest rows in
 * `updates` sit in a leaf of their own, so a commit of a few hundred sends dirtied a leaf per
 * recipient (about 200) for a few dozen bytes each; in the small recent log they share fewer
 * pages, and each user's leaf is written once per round of slices instead of once per commit.
 * Fewer, not few: keyed by user, a quarter second of rows at tens of thousands of sends a second
 * still spans about a page per user (docs/performance-issue-32.md, the thirteenth session).
 * Readers see one log: every row of a user in `recent_updates` is newer than their rows in
 * `updates` (a user's rows move all at once, in order), so the latest seq is the recent log's if
 * it has one (db/dialect.ts), the oldest is the main log's if it has one, and a replay merges the
 * two by seq. PostgreSQL logs row changes, not whole pages: it writes `updates` directly.
 *
 * A row may be a run (SQLite's send fast path, messages/posting-sqlite.ts): the message.new
 * entries a user got in one group commit, `message_ids` their message ids, one per seq, ending at
 * the row's `seq`. Keyed by its last seq, a run leaves the latest seq where it was (the newest
 * row's); `since` and `oldestSeq` read it as its entries.
 */
import type SQLite from 'better-sqlite3'
import type { AppContext } from '../context.js'
import type { Db } from '../db/database.js'
import { latestUpdateSeq, nextUpdateSeqs } from '../db/dialect.js'
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
  return recorded
    .filter((r) => (r.seq + r.userId) % step === 0 && r.seq > keep)
    .map((r) => ({ userId: r.userId, seq: r.seq - keep }))
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
  const recipients = [...new Set(userIds)]
  if (recipients.length === 0) return []
  const recorded = await nextUpdateSeqs(db, ctx.dialect, recipients)
  const json = about ? null : JSON.stringify(data)
  const messageId = about?.messageId ?? null
  const recent = ctx.dialect === 'sqlite'
  await db
    .insertInto(recent ? 'recent_updates' : 'updates')
    .values(recorded.map((r) => ({ user_id: r.userId, seq: r.seq, type, data: json, message_id: messageId, created_at: now })))
    .execute()
  for (const cut of prunes(recorded, ctx.config.updateLogKeep)) {
    await db.deleteFrom('updates').where('user_id', '=', cut.userId).where('seq', '<=', cut.seq).execute()
    if (recent) await db.deleteFrom('recent_updates').where('user_id', '=', cut.userId).where('seq', '<=', cut.seq).execute()
  }
  if (recent) recentWritten(ctx)
  return recorded
}

/**
 * SQLite: the recent log moves a slice of its users at a time, one slice every MOVE_TICK_MS while
 * it holds rows, each slice about 1/MOVE_SLICES of the rows. Each user's rows still move together
 * (their leaf in `updates` is written once per round, about MOVE_TICK_MS × MOVE_SLICES = 250 ms),
 * but no commit carries the whole log: moving a quarter second of rows at 8,000 sends/s (about
 * 4,000 rows) in one statement held every send behind it for 10-20 ms, four times a second, and
 * those sends were the p99 of socket-sends at half load (docs/performance-issue-32.md, the ninth session).
 */
const MOVE_TICK_MS = 25
const MOVE_SLICES = 10
/** a log this small moves whole, in one tick */
const MOVE_WHOLE_UP_TO = 256
/** the users' range before the first and after the last user id */
const NO_USER_BELOW = Number.MIN_SAFE_INTEGER
const NO_USER_ABOVE = Number.MAX_SAFE_INTEGER

/**
 * twin: the migration's down (2026-11-29T02-00-recent-updates). The rows of the users in
 * (?, ?], in the key's order, so that each user's rows go to their leaf together; rows of a user
 * deleted since are left out (the recent log has no foreign key: see the migration).
 */
const MOVE = `insert into updates (user_id, seq, type, data, message_id, message_ids, created_at)
  select user_id, seq, type, data, message_id, message_ids, created_at from recent_updates r
  where user_id > ? and user_id <= ? and exists (select 1 from users u where u.id = r.user_id) order by user_id, seq`
const DELETE_MOVED = 'delete from recent_updates where user_id > ? and user_id <= ?'
/** without a WHERE, SQLite drops the table's pages at once rather than deleting row by row */
const EMPTY = 'delete from recent_updates'
const COUNT = 'select count(*) from recent_updates'
/** the user of the n-th row (0-based) after user ?, in the index's order */
const NTH_USER_AFTER = 'select user_id from recent_updates where user_id > ? order by user_id, seq limit 1 offset ?'

/** each SQLite connection's move: its timer (one at most), the last user the round has moved, and whether moves are held */
const moves = new WeakMap<object, { timer: NodeJS.Timeout | null; after: number; held: boolean }>()

function moveOf(sqlite: object) {
  let move = moves.get(sqlite)
  if (!move) moves.set(sqlite, (move = { timer: null, after: NO_USER_BELOW, held: false }))
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
 * Moves the next slice of the recent log into `updates`, in the sends' group commit: all of it
 * when it is small, else the users after the last slice's, up to about 1/MOVE_SLICES of the rows
 * (a user's rows never split), starting over from the first user after the last. Whether rows
 * are left.
 */
export async function moveSlice(ctx: HotDatabase): Promise<boolean> {
  const move = moveOf(ctx.sqlite!)
  const from = move.after
  // the batch may run this twice (db/sqlite-hot.ts): it touches only the database, and the round's
  // place is kept once the slice has committed
  const next = await batched(ctx, (sqlite) => {
    const rows = statement(sqlite, COUNT).pluck().get() as number
    if (rows <= MOVE_WHOLE_UP_TO) {
      moveAll(sqlite)
      return null
    }
    const share = Math.ceil(rows / MOVE_SLICES)
    const last = (statement(sqlite, NTH_USER_AFTER).pluck().get(from, share - 1) as number | undefined) ?? NO_USER_ABOVE
    statement(sqlite, MOVE).run(from, last)
    statement(sqlite, DELETE_MOVED).run(from, last)
    return last === NO_USER_ABOVE ? NO_USER_BELOW : last
  })
  move.after = next ?? NO_USER_BELOW
  return next !== null
}

function moveAll(sqlite: SQLite.Database) {
  statement(sqlite, MOVE).run(NO_USER_BELOW, NO_USER_ABOVE)
  statement(sqlite, EMPTY).run()
}

/** Moves the whole recent log into `updates`, in the sends' group commit (SQLite only). */
export function moveRecent(ctx: HotDatabase): Promise<void> {
  return batched(ctx, moveAll)
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
const firstSeq = (row: { seq: number; message_ids: string | null }) => (row.message_ids === null ? row.seq : runEntries({ seq: row.seq, message_ids: row.message_ids })[0].seq)

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
export async function since(ctx: Pick<AppContext, 'db' | 'dialect'>, userId: number, after: number, limit: number, render: RenderMessages): Promise<Update[]> {
  const { db } = ctx
  const logged = (table: 'updates' | 'recent_updates') =>
    db.selectFrom(table).select(['seq', 'type', 'data', 'message_id', 'message_ids']).where('user_id', '=', userId).where('seq', '>', after)
  // SQLite merges the two index-ordered reads and stops at the limit
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

/** The user's latest seq (0 before any update). */
export const currentSeq = (ctx: AppContext, userId: number): Promise<number> => latestUpdateSeq(ctx.db, ctx.dialect, userId)

/** The live frames of recorded updates, for fan-out after the transaction commits. */
export function framesOf(recorded: Recorded[], type: string, data: unknown): Delivery[] {
  return recorded.map(({ userId, seq }) => ({ userId, frame: { type, seq, data } }))
}
