import type { Db } from '../../db/database.js'
import type { NewMessageRow } from '../../db/tables.js'

export function insertMessage(db: Db, message: NewMessageRow) {
  return db.insertInto('messages').values(message).returningAll().executeTakeFirstOrThrow()
}

export function findById(db: Db, id: number) {
  return db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst()
}

export function findByClientId(db: Db, senderId: number, clientMessageId: string) {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('sender_id', '=', senderId)
    .where('client_message_id', '=', clientMessageId)
    .executeTakeFirst()
}

/**
 * Visible messages of a chat with seq in (afterSeq, beforeSeq), newest first, with their senders.
 * Seeks on the (chat_id, seq) index, so it costs the same at any depth.
 */
export function listBySeq(
  db: Db,
  chatId: number,
  range: { beforeSeq?: number; afterSeq?: number },
  limit: number,
  order: 'asc' | 'desc' = 'desc',
) {
  let query = db
    .selectFrom('messages as m')
    .innerJoin('users as s', 's.id', 'm.sender_id')
    .selectAll('m')
    .select(['s.username as sender_username', 's.avatar as sender_avatar'])
    .where('m.chat_id', '=', chatId)
    .where('m.deleted_for_all', '=', 0)
  if (range.beforeSeq !== undefined) query = query.where('m.seq', '<', range.beforeSeq)
  if (range.afterSeq !== undefined) query = query.where('m.seq', '>', range.afterSeq)
  return query.orderBy('m.seq', order).limit(limit).execute()
}
