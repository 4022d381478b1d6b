import { sql, type ExpressionBuilder, type SelectQueryBuilder } from 'kysely'
import type { Db } from '../../db/database.js'
import { isPostgres } from '../../db/dialect.js'
import type { Database, MessageRow, NewMessageRow } from '../../db/tables.js'

export function insertMessage(db: Db, message: NewMessageRow) {
  return db.insertInto('messages').values(message).returningAll().executeTakeFirstOrThrow()
}

export function findById(db: Db, id: number) {
  return db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Messages by id with their sender's name and avatar (for views/presentRows). */
export function findWithSenders(db: Db, ids: number[]) {
  return db
    .selectFrom('messages as m')
    .innerJoin('users as s', 's.id', 'm.sender_id')
    .selectAll('m')
    .select(['s.username as sender_username', 's.avatar as sender_avatar', 's.privacy_avatar as sender_privacy_avatar'])
    .where('m.id', 'in', ids)
    .execute()
}

export function findBySeq(db: Db, chatId: number, seq: number) {
  return db.selectFrom('messages').select('id').where('chat_id', '=', chatId).where('seq', '=', seq).executeTakeFirst()
}

export function findByClientId(db: Db, senderId: number, clientMessageId: string) {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('sender_id', '=', senderId)
    .where('client_message_id', '=', clientMessageId)
    .executeTakeFirst()
}

export function updateMessage(db: Db, id: number, changes: Partial<Omit<MessageRow, 'id'>>) {
  return db.updateTable('messages').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
}

/**
 * Visible messages of a chat with seq in (afterSeq, beforeSeq), newest first, with their senders;
 * deleted-for-all messages and those `viewerId` deleted for themselves are left out.
 * Seeks on the (chat_id, seq) index, so it costs the same at any depth.
 */
export function listBySeq(
  db: Db,
  chatId: number,
  viewerId: number,
  range: { beforeSeq?: number; afterSeq?: number; topicId?: number; offset?: number },
  limit: number,
  order: 'asc' | 'desc' = 'desc',
) {
  let query = db
    .selectFrom('messages as m')
    .innerJoin('users as s', 's.id', 'm.sender_id')
    .selectAll('m')
    .select(['s.username as sender_username', 's.avatar as sender_avatar', 's.privacy_avatar as sender_privacy_avatar'])
    // a topic's messages seek on messages_topic_seq (topic_id, seq); the topic is of this chat
    .where(range.topicId !== undefined ? 'm.topic_id' : 'm.chat_id', '=', range.topicId ?? chatId)
    .where('m.deleted_for_all', '=', 0)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('message_hidden as h').select('h.message_id').where('h.user_id', '=', viewerId).whereRef('h.message_id', '=', 'm.id'),
        ),
      ),
    )
  if (range.beforeSeq !== undefined) query = query.where('m.seq', '<', range.beforeSeq)
  if (range.afterSeq !== undefined) query = query.where('m.seq', '>', range.afterSeq)
  query = query.orderBy('m.seq', order).limit(limit)
  return (range.offset ? query.offset(range.offset) : query).execute()
}

export async function isHidden(db: Db, userId: number, messageId: number): Promise<boolean> {
  const row = await db
    .selectFrom('message_hidden')
    .select('message_id')
    .where('user_id', '=', userId)
    .where('message_id', '=', messageId)
    .executeTakeFirst()
  return row !== undefined
}

export async function hide(db: Db, userId: number, messageId: number, now: number) {
  await db
    .insertInto('message_hidden')
    .values({ user_id: userId, message_id: messageId, created_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'message_id']).doNothing())
    .execute()
}

/** Stamps read_at on the messages others sent in (fromSeq, toSeq] that nobody had read yet. */
export async function markReadRange(db: Db, chatId: number, readerId: number, fromSeq: number, toSeq: number, now: number) {
  await db
    .updateTable('messages')
    .set({ read_at: now })
    .where(
      inIdOrder(db, (rows) =>
        rows
          .where('chat_id', '=', chatId)
          .where('seq', '>', fromSeq)
          .where('seq', '<=', toSeq)
          .where('sender_id', '!=', readerId)
          .where('read_at', 'is', null),
      ),
    )
    .execute()
}

/** Stamps delivered_at on the messages among `ids` not delivered before. */
export async function markDelivered(db: Db, ids: number[], now: number) {
  if (ids.length === 0) return
  await db
    .updateTable('messages')
    .set({ delivered_at: now })
    .where(inIdOrder(db, (rows) => rows.where('id', 'in', ids).where('delivered_at', 'is', null)))
    .execute()
}

type MessageRows = SelectQueryBuilder<Database, 'messages', { id: number }>

/**
 * The rows a multi-row update of messages changes. On PostgreSQL they are locked first, in id
 * order: a read receipt's range (inside a send's or a read's transaction) and a batch of delivery
 * stamps that took overlapping rows in different orders (the heap order of rows that were updated
 * before is not their seq order) would each wait for the other, a deadlock that fails a send
 * (found by test/api/group-commit.test.ts). SQLite has one writer at a time.
 */
function inIdOrder(db: Db, rows: (query: MessageRows) => MessageRows) {
  const selected = rows(db.selectFrom('messages').select('id'))
  return (eb: ExpressionBuilder<Database, 'messages'>) =>
    eb('id', 'in', isPostgres(db) ? selected.orderBy('id').forNoKeyUpdate() : selected)
}

/**
 * PostgreSQL only: takes the message's row for the rest of the transaction (FOR NO KEY UPDATE, as
 * an update of it would, so inserts that refer to it go on), so that what a change then reads
 * (the reactions map) includes every earlier change that took it. SQLite has one writer at a time.
 */
export async function lockMessage(db: Db, messageId: number) {
  await db.selectFrom('messages').select('id').where('id', '=', messageId).forNoKeyUpdate().execute()
}

export async function setReaction(db: Db, messageId: number, userId: number, emoji: string | null, now: number) {
  if (emoji === null) {
    await db.deleteFrom('reactions').where('message_id', '=', messageId).where('user_id', '=', userId).execute()
    return
  }
  await db
    .insertInto('reactions')
    .values({ message_id: messageId, user_id: userId, emoji, created_at: now })
    .onConflict((oc) => oc.columns(['message_id', 'user_id']).doUpdateSet({ emoji, created_at: now }))
    .execute()
}

export async function myReaction(db: Db, messageId: number, userId: number): Promise<string | null> {
  const row = await db
    .selectFrom('reactions')
    .select('emoji')
    .where('message_id', '=', messageId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return row?.emoji ?? null
}

/** emoji → count maps of the given messages (most used first); messages without reactions are absent. */
export async function reactionsOf(db: Db, messageIds: number[]): Promise<Map<number, Record<string, number>>> {
  const maps = new Map<number, Record<string, number>>()
  if (messageIds.length === 0) return maps
  const rows = await db
    .selectFrom('reactions')
    .select(['message_id', 'emoji', (eb) => eb.fn.countAll<number>().as('n')])
    .where('message_id', 'in', messageIds)
    .groupBy(['message_id', 'emoji'])
    .orderBy(sql`count(*)`, 'desc')
    .orderBy('emoji')
    .execute()
  for (const row of rows) {
    // keyed by stored text: no prototype for a key like __proto__ to land on
    const map = maps.get(row.message_id) ?? (Object.create(null) as Record<string, number>)
    map[row.emoji] = Number(row.n)
    maps.set(row.message_id, map)
  }
  return maps
}

/** Content and sender name of replied-to messages, by id (deleted-for-all ones are absent). */
export async function replyPreviews(db: Db, ids: number[]) {
  const previews = new Map<number, { content: string; sender_name: string }>()
  if (ids.length === 0) return previews
  const rows = await db
    .selectFrom('messages as m')
    .innerJoin('users as u', 'u.id', 'm.sender_id')
    .select(['m.id', 'm.content', 'u.display_name', 'u.username'])
    .where('m.id', 'in', ids)
    .where('m.deleted_for_all', '=', 0)
    .execute()
  for (const row of rows) previews.set(row.id, { content: row.content, sender_name: row.display_name || row.username })
  return previews
}

/** How many visible messages a forum topic holds. */
export async function countTopic(db: Db, topicId: number): Promise<number> {
  const row = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('topic_id', '=', topicId)
    .where('deleted_for_all', '=', 0)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
