import type { Kysely } from 'kysely'
import { dialectOf, json, ref, timestamp } from './columns.js'

/**
 * Bots: the bot app (one per bot user, the bot's id is its user id, as in Telegram),
 * the commands it answers, and the updates waiting for it (long polling reads and acknowledges
 * them; an update id grows per bot).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await db.schema
    .createTable('bot_apps')
    .addColumn('bot_id', ref(d), (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('owner_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    // commands users may send beside the defined ones: a JSON array of names
    .addColumn('allowed_commands', json(d), (c) => c.notNull())
    // SHA-256 of the whole token `<bot_id>:<secret>`; the token itself is shown once
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    // the last update id handed out (an atomic increment allocates the next)
    .addColumn('last_update_id', 'bigint', (c) => c.notNull().defaultTo(0))
    // getUpdates' allowed_updates, as the bot last set it (JSON array; null: the default set)
    .addColumn('allowed_updates', json(d))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('bot_apps_owner').on('bot_apps').column('owner_id').execute()

  await db.schema
    .createTable('bot_commands')
    .addColumn('bot_id', ref(d), (c) => c.notNull().references('bot_apps.bot_id').onDelete('cascade'))
    .addColumn('command', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('handler', 'text')
    // the order getMyCommands answers in (setMyCommands keeps the bot's order)
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('bot_commands_pk', ['bot_id', 'command'])
    .execute()

  await db.schema
    .createTable('bot_updates')
    .addColumn('bot_id', ref(d), (c) => c.notNull().references('bot_apps.bot_id').onDelete('cascade'))
    .addColumn('update_id', 'bigint', (c) => c.notNull())
    // message | callback_query | … (what allowed_updates filters on)
    .addColumn('kind', 'text', (c) => c.notNull())
    // the message the update is about: one update per bot and message, whatever retries
    .addColumn('message_id', ref(d))
    // the Telegram Update object without update_id, as it was when the update was made
    .addColumn('payload', json(d), (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('bot_updates_pk', ['bot_id', 'update_id'])
    .execute()
  await db.schema.createIndex('bot_updates_message').unique().on('bot_updates').columns(['bot_id', 'message_id']).execute()

  // inline keyboards a bot sent with its messages (reply_markup), by message
  await db.schema
    .createTable('bot_message_markup')
    .addColumn('message_id', ref(d), (c) => c.primaryKey().references('messages.id').onDelete('cascade'))
    .addColumn('bot_id', ref(d), (c) => c.notNull().references('bot_apps.bot_id').onDelete('cascade'))
    .addColumn('reply_markup', json(d), (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('bot_message_markup').execute()
  await db.schema.dropTable('bot_updates').execute()
  await db.schema.dropTable('bot_commands').execute()
  await db.schema.dropTable('bot_apps').execute()
}
