import type { Kysely } from 'kysely'
import { dialectOf, id, ref, timestamp } from './columns.js'

/**
 * Push notifications: the devices' subscriptions (Web Push endpoints with their keys, or native
 * FCM/APNs tokens), each owned by the session that registered it, and the queue of notifications
 * the push-delivery job sends (one row per user and chat: a burst in a chat collapses into it).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await id(db.schema.createTable('push_subscriptions'), d)
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    // sessions are deactivated, not deleted: the sessions module deletes these rows with it; the
    // cascade covers a session row that is ever deleted
    .addColumn('session_id', ref(d), (c) => c.notNull().references('user_sessions.id').onDelete('cascade'))
    // webpush | fcm | apns
    .addColumn('kind', 'text', (c) => c.notNull())
    // the Web Push endpoint URL, or the native token
    .addColumn('endpoint', 'text', (c) => c.notNull().unique())
    .addColumn('p256dh', 'text')
    .addColumn('auth', 'text')
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('push_subscriptions_user').on('push_subscriptions').column('user_id').execute()
  await db.schema.createIndex('push_subscriptions_session').on('push_subscriptions').column('session_id').execute()

  await id(db.schema.createTable('push_queue'), d)
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('chat_id', ref(d), (c) => c.notNull())
    // the newest message of the burst: the notification names it
    .addColumn('message_id', ref(d), (c) => c.notNull())
    // message | mention | reply
    .addColumn('kind', 'text', (c) => c.notNull())
    // messages the row stands for
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('due_at', timestamp, (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('push_queue_user_chat').unique().on('push_queue').columns(['user_id', 'chat_id']).execute()
  await db.schema.createIndex('push_queue_due').on('push_queue').column('due_at').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('push_queue').execute()
  await db.schema.dropTable('push_subscriptions').execute()
}
