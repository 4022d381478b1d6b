/**
 * A group's or channel's own event log (docs/realtime.md: "a channel keeps its own sequence, and a
 * subscriber catches up per channel"). An event is one row whatever the member count; members'
 * sockets receive it live through their subscription to the chat, and a member that missed some
 * asks for everything after the chat seq it last saw.
 */
import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import { fromJson } from '../db/json.js'
import type { Delivery, Frame } from './fanout.js'
import { prunes } from './updates.js'

export interface ChatEvent {
  type: string
  chat_id: number
  chat_seq: number
  data: unknown
}

/** Appends one event to the chat's log inside the change's transaction; returns its frame. */
export async function append(db: Db, chatId: number, type: string, data: unknown, now: number, keep: number): Promise<ChatEvent> {
  const { event_seq: seq } = await db
    .updateTable('chats')
    .set({ event_seq: sql`event_seq + 1` })
    .where('id', '=', chatId)
    .returning('event_seq')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('chat_events')
    .values({ chat_id: chatId, seq, type, data: JSON.stringify(data), created_at: now })
    .execute()
  // the same amortized retention as the per-user log: a short range delete every keep/100 events
  for (const cut of prunes([{ userId: chatId, seq }], keep)) {
    await db.deleteFrom('chat_events').where('chat_id', '=', chatId).where('seq', '<=', cut.seq).execute()
  }
  return { type, chat_id: chatId, chat_seq: seq, data }
}

/** Events after `after`, oldest first, at most `limit`. */
export async function since(db: Db, chatId: number, after: number, limit: number): Promise<ChatEvent[]> {
  const rows = await db
    .selectFrom('chat_events')
    .select(['seq', 'type', 'data'])
    .where('chat_id', '=', chatId)
    .where('seq', '>', after)
    .orderBy('seq')
    .limit(limit)
    .execute()
  return rows.map((r) => ({ type: r.type, chat_id: chatId, chat_seq: r.seq, data: fromJson(r.data) }))
}

/** The chat's oldest kept event seq (null when its log is empty). */
export async function oldestSeq(db: Db, chatId: number): Promise<number | null> {
  const row = await db.selectFrom('chat_events').select('seq').where('chat_id', '=', chatId).orderBy('seq').limit(1).executeTakeFirst()
  return row?.seq ?? null
}

/** The chat's latest event seq (0 for a chat that is gone). */
export async function currentSeq(db: Db, chatId: number): Promise<number> {
  const row = await db.selectFrom('chats').select('event_seq').where('id', '=', chatId).executeTakeFirst()
  return row?.event_seq ?? 0
}

/** A chat event as a live delivery to the chat's subscribers. */
export function deliveryOf(event: ChatEvent): Delivery {
  const frame: Frame = { type: event.type, chat_id: event.chat_id, chat_seq: event.chat_seq, data: event.data }
  return { chatId: event.chat_id, frame }
}

/** The groups and channels a user belongs to, with each one's current event seq (a socket's starting cursors). */
export function memberships(db: Db, userId: number) {
  return db
    .selectFrom('chat_members as m')
    .innerJoin('chats as c', 'c.id', 'm.chat_id')
    .select(['m.chat_id', 'c.event_seq'])
    .where('m.user_id', '=', userId)
    .where('c.chat_type', '<>', 'personal')
    .execute()
}
