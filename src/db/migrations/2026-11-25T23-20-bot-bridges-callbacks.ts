import { sql, type Kysely } from 'kysely'
import { dialectOf, flag, ref, timestamp } from './columns.js'

/**
 * Bots, second part: bridged messages and inline keyboard callbacks.
 *
 * - messages.is_from_external / external_message_id (fields of the Message shape): a message a
 *   bot relays from another messenger, with that messenger's id. Unique per sender (the bot) and
 *   chat, so a bridge's retry finds the first message instead of writing a second.
 * - bot_callback_queries: a button press on a bot's inline keyboard, kept until the bot answers it
 *   (answerCallbackQuery) so the answer reaches the user who pressed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await db.schema.alterTable('messages').addColumn('is_from_external', flag, (c) => c.notNull().defaultTo(0)).execute()
  await db.schema.alterTable('messages').addColumn('external_message_id', 'text').execute()
  // partial unique index, the same statement on both dialects: only bridged messages are in it
  await db.schema
    .createIndex('messages_external_id')
    .unique()
    .on('messages')
    .columns(['chat_id', 'sender_id', 'external_message_id'])
    .where(sql.ref('external_message_id'), 'is not', null)
    .execute()

  await db.schema
    .createTable('bot_callback_queries')
    // the callback_query.id the bot answers with: random text, not a counter
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', ref(d), (c) => c.notNull().references('bot_apps.bot_id').onDelete('cascade'))
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('message_id', ref(d), (c) => c.notNull().references('messages.id').onDelete('cascade'))
    .addColumn('chat_id', ref(d), (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('answered_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('bot_callback_queries_created').on('bot_callback_queries').column('created_at').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('bot_callback_queries').execute()
  await db.schema.dropIndex('messages_external_id').execute()
  await db.schema.alterTable('messages').dropColumn('external_message_id').execute()
  await db.schema.alterTable('messages').dropColumn('is_from_external').execute()
}
