/**
 * The per-user update log: the truth behind `resume` and GET V2/updates (DESIGN §4, CONVENTIONS §7).
 *
 * `record` runs inside the change's own transaction: it gives each recipient the next value of
 * their `seq` with one atomic upsert (serialized per user in both dialects) and writes one row per
 * recipient. A client that has seen seq N asks for everything after N and gets it in order,
 * exactly once, whatever pub/sub dropped.
 */
import { sql } from 'kysely'
import type { Db } from '../db/database.js'
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

/** Appends one update for each of `userIds` (deduplicated); returns each recipient's new seq. */
export async function record(db: Db, userIds: number[], type: string, data: unknown, now: number): Promise<Recorded[]> {
  const recipients = [...new Set(userIds)]
  if (recipients.length === 0) return []
  const seqs = await db
    .insertInto('update_seqs')
    .values(recipients.map((userId) => ({ user_id: userId, seq: 1 })))
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ seq: sql`update_seqs.seq + 1` }))
    .returning(['user_id', 'seq'])
    .execute()
  const json = JSON.stringify(data)
  await db
    .insertInto('updates')
    .values(seqs.map((s) => ({ user_id: s.user_id, seq: s.seq, type, data: json, created_at: now })))
    .execute()
  return seqs.map((s) => ({ userId: s.user_id, seq: s.seq }))
}

/** Updates after `since`, oldest first, at most `limit`. */
export async function since(db: Db, userId: number, after: number, limit: number): Promise<Update[]> {
  const rows = await db
    .selectFrom('updates')
    .select(['seq', 'type', 'data'])
    .where('user_id', '=', userId)
    .where('seq', '>', after)
    .orderBy('seq')
    .limit(limit)
    .execute()
  return rows.map((r) => ({ type: r.type, seq: r.seq, data: fromJson(r.data) }))
}

/** The user's latest seq (0 before any update). */
export async function currentSeq(db: Db, userId: number): Promise<number> {
  const row = await db.selectFrom('update_seqs').select('seq').where('user_id', '=', userId).executeTakeFirst()
  return row?.seq ?? 0
}

/** The live frames of recorded updates, for fan-out after the transaction commits. */
export function framesOf(recorded: Recorded[], type: string, data: unknown): Delivery[] {
  return recorded.map(({ userId, seq }) => ({ userId, frame: { type, seq, data } }))
}
