import { sql, type Insertable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { PushNotificationKind, PushSubscriptionsTable, WorkQueueRow } from '../../db/tables.js'

export function findByEndpoint(db: Db, endpoint: string) {
  return db.selectFrom('push_subscriptions').selectAll().where('endpoint', '=', endpoint).executeTakeFirst()
}

export function findById(db: Db, id: number) {
  return db.selectFrom('push_subscriptions').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function countOfUser(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('push_subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** A subscription as registering writes it (the table's columns but its id and times). */
export type NewSubscription = Required<Omit<Insertable<PushSubscriptionsTable>, 'id' | 'created_at' | 'updated_at'>>

/** Inserts a subscription, or takes over the row with the same endpoint (the device registered again). */
/**
 * Inserts a subscription, or updates the user's own one with the same endpoint (a new session or
 * new keys of the same device); answers its id, or null when the endpoint is another user's.
 */
export async function upsert(db: Db, sub: NewSubscription, now: number): Promise<number | null> {
  const row = await db
    .insertInto('push_subscriptions')
    .values({ ...sub, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc
        .column('endpoint')
        .doUpdateSet({ session_id: sub.session_id, kind: sub.kind, p256dh: sub.p256dh, auth: sub.auth, updated_at: now })
        .where('push_subscriptions.user_id', '=', sub.user_id),
    )
    .returning('id')
    .executeTakeFirst()
  return row?.id ?? null
}

/** Removes one of the user's subscriptions, by id or endpoint; answers how many went (0 or 1). */
export async function deleteOfUser(db: Db, userId: number, by: { id: number } | { endpoint: string }): Promise<number> {
  let query = db.deleteFrom('push_subscriptions').where('user_id', '=', userId)
  query = 'id' in by ? query.where('id', '=', by.id) : query.where('endpoint', '=', by.endpoint)
  const result = await query.executeTakeFirst()
  return Number(result.numDeletedRows)
}

export async function deleteById(db: Db, id: number) {
  await db.deleteFrom('push_subscriptions').where('id', '=', id).execute()
}

export async function deleteOfSession(db: Db, sessionId: number) {
  await db.deleteFrom('push_subscriptions').where('session_id', '=', sessionId).execute()
}

export async function deleteAllOfUser(db: Db, userId: number) {
  await db.deleteFrom('push_subscriptions').where('user_id', '=', userId).execute()
}

/** The user's subscriptions whose session is still live (active, used since `notBefore`). */
export function liveOfUser(db: Db, userId: number, notBefore: number) {
  return db
    .selectFrom('push_subscriptions as p')
    .innerJoin('user_sessions as s', 's.id', 'p.session_id')
    .selectAll('p')
    .where('p.user_id', '=', userId)
    .where('s.is_active', '=', 1)
    .where('s.last_activity', '>', notBefore)
    .orderBy('p.id')
    .execute()
}

/**
 * Members of a personal chat or group, but the sender, who have at least one push subscription,
 * with their usernames; none for a channel. One query per message: the planner may start from the
 * chat's members or from the subscriptions, whichever is fewer.
 */
export function subscribedMembers(db: Db, chatIds: readonly number[]) {
  return db
    .selectFrom('chats as c')
    .innerJoin('chat_members as m', 'm.chat_id', 'c.id')
    .innerJoin('push_subscriptions as p', 'p.user_id', 'm.user_id')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['c.id as chat_id', 'u.id', 'u.username'])
    .distinct()
    .where('c.id', 'in', chatIds)
    .where('c.chat_type', '<>', 'channel')
    .where('u.is_active', '=', 1)
    .execute()
}

/** Which of these users have at least one push subscription. */
export async function subscribedAmong(db: Db, userIds: readonly number[]): Promise<Set<number>> {
  const rows = await db.selectFrom('push_subscriptions').select('user_id').distinct().where('user_id', 'in', userIds).execute()
  return new Set(rows.map((r) => r.user_id))
}

export async function senderOf(db: Db, messageId: number): Promise<number | null> {
  const row = await db.selectFrom('messages').select('sender_id').where('id', '=', messageId).executeTakeFirst()
  return row?.sender_id ?? null
}

export async function isMember(db: Db, chatId: number, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('chat_members')
    .select('user_id')
    .where('chat_id', '=', chatId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return row !== undefined
}

/** A message as a notification names it: its chat's type and title, its sender. */
export function messageForPush(db: Db, messageId: number) {
  return db
    .selectFrom('messages as m')
    .innerJoin('chats as c', 'c.id', 'm.chat_id')
    .innerJoin('users as u', 'u.id', 'm.sender_id')
    .select([
      'm.id',
      'm.chat_id',
      'm.content',
      'm.is_encrypted',
      'm.deleted_for_all',
      'm.file_type',
      'c.chat_type',
      'c.title as chat_title',
      'u.id as sender_id',
      'u.username as sender_username',
      'u.display_name as sender_display_name',
    ])
    .where('m.id', '=', messageId)
    .executeTakeFirst()
}

export interface Queued {
  user_id: number
  chat_id: number
  message_id: number
  kind: PushNotificationKind
}

/** the work queue's kind for push notifications; an item's key is `user:chat` */
export const PUSH_KIND = 'push'

/** A queued push as its item in the work queue holds it. */
export interface QueuedPush extends Queued {
  count: number
}

export function pushOfItem(item: Pick<WorkQueueRow, 'item_key' | 'ref' | 'data' | 'count'>): QueuedPush {
  const [userId, chatId] = item.item_key.split(':').map(Number)
  return {
    user_id: userId,
    chat_id: chatId,
    message_id: Number(item.ref),
    kind: (item.data ?? 'message') as PushNotificationKind,
    count: item.count,
  }
}

/**
 * Queues notifications in the work queue, due at `dueAt`; a user's item for the chat that is
 * still waiting takes the newer message instead (one notification per user and chat: a burst
 * collapses), counting the messages, and keeps its time.
 */
export async function enqueue(db: Db, rows: Queued[], now: number, dueAt: number) {
  if (rows.length === 0) return
  await db
    .insertInto('work_queue')
    .values(
      rows.map((row) => ({
        kind: PUSH_KIND,
        item_key: `${row.user_id}:${row.chat_id}`,
        ref: row.message_id,
        data: row.kind,
        count: 1,
        attempts: 0,
        due_at: dueAt,
        since: now,
        created_at: now,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['kind', 'item_key']).doUpdateSet({
        // listeners may finish out of order: the newest message wins
        ref: sql<number>`case when excluded.ref > work_queue.ref then excluded.ref else work_queue.ref end`,
        data: sql<string>`case when excluded.ref > work_queue.ref then excluded.data else work_queue.data end`,
        count: sql<number>`work_queue.count + 1`,
        revision: sql<number>`work_queue.revision + 1`,
        attempts: 0,
      }),
    )
    .execute()
}
