/** The SQL of scheduled (pending) messages. */
import type { Db } from '../../db/database.js'
import type { NewScheduledMessageRow, ScheduledMessageRow } from '../../db/tables.js'

export function insert(db: Db, row: NewScheduledMessageRow) {
  return db.insertInto('scheduled_messages').values(row).returningAll().executeTakeFirstOrThrow()
}

/** A sender's pending message with this client id (a retried send is answered with it). */
export function findByClientId(db: Db, senderId: number, clientId: string): Promise<ScheduledMessageRow | undefined> {
  return db
    .selectFrom('scheduled_messages')
    .selectAll()
    .where('sender_id', '=', senderId)
    .where('client_message_id', '=', clientId)
    .executeTakeFirst()
}

/** One pending message of this sender. */
export function findOwn(db: Db, senderId: number, id: number) {
  return db.selectFrom('scheduled_messages').selectAll().where('id', '=', id).where('sender_id', '=', senderId).executeTakeFirst()
}

/** A sender's pending messages in a chat, soonest first. */
export function listOwn(db: Db, senderId: number, chatId: number) {
  return db
    .selectFrom('scheduled_messages')
    .selectAll()
    .where('sender_id', '=', senderId)
    .where('chat_id', '=', chatId)
    .orderBy('scheduled_at')
    .orderBy('id')
    .execute()
}

export async function remove(db: Db, id: number) {
  await db.deleteFrom('scheduled_messages').where('id', '=', id).execute()
}

export function reschedule(db: Db, id: number, at: number) {
  return db.updateTable('scheduled_messages').set({ scheduled_at: at }).where('id', '=', id).returningAll().executeTakeFirst()
}

/** Takes a pending message for delivery: the DELETE decides which transaction delivers it. */
export function take(db: Db, id: number) {
  return db.deleteFrom('scheduled_messages').where('id', '=', id).returningAll().executeTakeFirst()
}
