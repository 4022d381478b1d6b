import { sql, type Kysely } from 'kysely'
import { timestamp } from './columns.js'

/**
 * The chat list orders a user's chats by last activity. Keeping that time on the member row, with
 * an index on (user_id, last_activity_at), makes a page cost O(chats shown) instead of sorting all
 * of the user's chats on every request (docs/performance.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('chat_members').addColumn('last_activity_at', timestamp).execute()
  await sql`update chat_members set last_activity_at = (
    select coalesce(c.last_message_at, c.created_at) from chats c where c.id = chat_members.chat_id)`.execute(db)
  await db.schema
    .createIndex('chat_members_user_activity')
    .on('chat_members')
    .columns(['user_id', 'last_activity_at', 'chat_id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('chat_members_user_activity').execute()
  await db.schema.alterTable('chat_members').dropColumn('last_activity_at').execute()
}
