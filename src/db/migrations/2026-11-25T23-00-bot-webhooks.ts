import type { Kysely } from 'kysely'
import { dialectOf, flag, id, json, ref, timestamp } from './columns.js'

/**
 * Bot webhooks: one webhook per bot (its URL, the Standard Webhooks signing
 * secret, the Telegram secret_token) and the delivery log, which is also the delivery queue: the
 * webhook-delivery job sends the due rows (each chat's in order) and keeps what happened.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await db.schema
    .createTable('bot_webhooks')
    .addColumn('bot_id', ref(d), (c) => c.primaryKey().references('bot_apps.bot_id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    // `whsec_<base64>`: the HMAC key the deliveries are signed with (a key, so kept as is)
    .addColumn('secret', 'text', (c) => c.notNull())
    // setWebhook's secret_token, sent back as X-Telegram-Bot-Api-Secret-Token (null: none)
    .addColumn('secret_token', 'text')
    .addColumn('is_active', flag, (c) => c.notNull().defaultTo(1))
    // when a delivery to this URL first succeeded
    .addColumn('verified_at', timestamp)
    .addColumn('last_error_at', timestamp)
    .addColumn('last_error_message', 'text')
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute()

  await id(db.schema.createTable('bot_webhook_deliveries'), d)
    .addColumn('bot_id', ref(d), (c) => c.notNull().references('bot_apps.bot_id').onDelete('cascade'))
    // deliveries with the same key go out one after another, in id order (a chat's updates)
    .addColumn('chat_key', 'text', (c) => c.notNull())
    // update (a Telegram Update from the bot's update queue) | custom (webhook/send)
    .addColumn('kind', 'text', (c) => c.notNull())
    // the update id of an update delivery: each update is moved into the log once
    .addColumn('update_id', 'bigint')
    // the exact JSON body posted (a retry posts the same bytes)
    .addColumn('payload', json(d), (c) => c.notNull())
    // pending | delivered | failed
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', timestamp, (c) => c.notNull())
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('delivered_at', timestamp)
    .execute()
  // the job's two questions: which pending rows are due, and is an earlier one of the same chat pending
  await db.schema.createIndex('bot_webhook_deliveries_due').on('bot_webhook_deliveries').columns(['status', 'next_attempt_at']).execute()
  await db.schema.createIndex('bot_webhook_deliveries_lane').on('bot_webhook_deliveries').columns(['bot_id', 'chat_key', 'status', 'id']).execute()
  // the log, newest first
  await db.schema.createIndex('bot_webhook_deliveries_bot').on('bot_webhook_deliveries').columns(['bot_id', 'id']).execute()
  await db.schema.createIndex('bot_webhook_deliveries_update').unique().on('bot_webhook_deliveries').columns(['bot_id', 'update_id']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('bot_webhook_deliveries').execute()
  await db.schema.dropTable('bot_webhooks').execute()
}
