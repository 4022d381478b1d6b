/** The SQL of forum topics (groups only). */
import type { Db } from '../../db/database.js'

export function insertTopic(
  db: Db,
  values: { chat_id: number; title: string; icon_emoji_id: string | null; created_by: number; now: number },
) {
  return db
    .insertInto('group_topics')
    .values({
      chat_id: values.chat_id,
      title: values.title,
      icon_emoji_id: values.icon_emoji_id,
      created_by: values.created_by,
      created_at: values.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function listTopics(db: Db, chatId: number) {
  return db.selectFrom('group_topics').selectAll().where('chat_id', '=', chatId).orderBy('id').limit(1000).execute()
}
