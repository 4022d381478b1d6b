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
 */
import type { AppContext } from '../context.js'
import type { Db } from '../db/database.js'
import { latestUpdateSeq, nextUpdateSeqs } from '../db/dialect.js'
import { fromJson } from '../db/json.js'
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
  await db
    .insertInto('updates')
    .values(recorded.map((r) => ({ user_id: r.userId, seq: r.seq, type, data: json, message_id: messageId, created_at: now })))
    .execute()
  for (const cut of prunes(recorded, ctx.config.updateLogKeep)) {
    await db.deleteFrom('updates').where('user_id', '=', cut.userId).where('seq', '<=', cut.seq).execute()
  }
  return recorded
}

/** The user's oldest kept seq (null when the log is empty). */
export async function oldestSeq(db: Db, userId: number): Promise<number | null> {
  const row = await db.selectFrom('updates').select('seq').where('user_id', '=', userId).orderBy('seq').limit(1).executeTakeFirst()
  return row?.seq ?? null
}

/**
 * Renders the messages a log refers to (message.new kept as a reference), as they are now: the
 * messages module provides it (the update log does not know what a message looks like).
 */
export type RenderMessages = (db: Db, messageIds: number[]) => Promise<ReadonlyMap<number, unknown>>

/** Updates after `since`, oldest first, at most `limit`; message references rendered by `render`. */
export async function since(db: Db, userId: number, after: number, limit: number, render: RenderMessages): Promise<Update[]> {
  const rows = await db
    .selectFrom('updates')
    .select(['seq', 'type', 'data', 'message_id'])
    .where('user_id', '=', userId)
    .where('seq', '>', after)
    .orderBy('seq')
    .limit(limit)
    .execute()
  const referenced = rows.flatMap((r) => (r.data === null && r.message_id !== null ? [r.message_id] : []))
  const messages = referenced.length > 0 ? await render(db, referenced) : new Map<number, unknown>()
  return rows.map((r) => {
    if (r.data !== null || r.message_id === null) return { type: r.type, seq: r.seq, data: fromJson(r.data) }
    const message = messages.get(r.message_id)
    // no endpoint deletes a personal message row, but an operator may: the client learns it is gone
    if (!message) return { type: 'message.deleted', seq: r.seq, data: { chat_id: null, message_id: r.message_id, deleted_for_all: true } }
    return { type: r.type, seq: r.seq, data: { message } }
  })
}

/** The user's latest seq (0 before any update). */
export const currentSeq = (ctx: AppContext, userId: number): Promise<number> => latestUpdateSeq(ctx.db, ctx.dialect, userId)

/** The live frames of recorded updates, for fan-out after the transaction commits. */
export function framesOf(recorded: Recorded[], type: string, data: unknown): Delivery[] {
  return recorded.map(({ userId, seq }) => ({ userId, frame: { type, seq, data } }))
}
