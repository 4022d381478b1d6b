import { sql, type Kysely } from 'kysely'
import { dialectOf, id, ref, timestamp } from './columns.js'

/**
 * One durable queue of due work (src/jobs/queue.ts): scheduled messages, push notifications, bot
 * webhook deliveries and admin broadcasts. A row is one piece of work of a kind, unique by
 * (kind, item_key), due at `due_at`, claimed by one instance at a time until `claimed_until`.
 * The work that was waiting is carried over: a queue row for each pending scheduled message, each
 * push_queue row (which the queue replaces: its columns map onto ref, count and data), each
 * webhook lane (a bot and chat) with pending deliveries, each bot with an active webhook and
 * updates still to move into its delivery log, and the unfinished broadcasts.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await id(db.schema.createTable('work_queue'), d)
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('item_key', 'text', (c) => c.notNull())
    .addColumn('due_at', timestamp, (c) => c.notNull())
    // when the item's current work began: a kind that gives up by age counts from here
    .addColumn('since', timestamp, (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // moved by every write that adds to the item: finishing a claimed item removes it only if unchanged
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
    // the row the item stands for (a scheduled message, the newest message of a push, a lane's head delivery)
    .addColumn('ref', ref(d))
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('data', 'text')
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', timestamp)
    .addColumn('last_error', 'text')
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('work_queue_item').unique().on('work_queue').columns(['kind', 'item_key']).execute()
  await db.schema.createIndex('work_queue_due').on('work_queue').columns(['due_at', 'id']).execute()

  const now = Date.now()
  // Plain INSERT … SELECT, the same text on both dialects: `||` concatenates and cast(… as text)
  // converts in SQLite and PostgreSQL alike.
  await sql`insert into work_queue (kind, item_key, due_at, since, ref, created_at)
    select 'scheduled', cast(id as text), scheduled_at, scheduled_at, id, created_at from scheduled_messages`.execute(db)
  await sql`insert into work_queue (kind, item_key, due_at, since, attempts, ref, count, data, created_at)
    select 'push', cast(user_id as text) || ':' || cast(chat_id as text), due_at, created_at, attempts, message_id, count, kind, created_at from push_queue`.execute(db)
  await sql`insert into work_queue (kind, item_key, due_at, since, attempts, ref, created_at)
    select 'webhook', cast(h.bot_id as text) || ':' || h.chat_key, h.next_attempt_at, h.created_at, h.attempts, h.id, h.created_at
    from bot_webhook_deliveries h
    where h.status = 'pending'
      and not exists (select 1 from bot_webhook_deliveries e where e.bot_id = h.bot_id and e.chat_key = h.chat_key and e.status = 'pending' and e.id < h.id)`.execute(db)
  await sql`insert into work_queue (kind, item_key, due_at, since, created_at)
    select 'webhook-updates', cast(w.bot_id as text), cast(${now} as bigint), cast(${now} as bigint), cast(${now} as bigint)
    from bot_webhooks w
    where w.is_active = 1 and exists (select 1 from bot_updates u where u.bot_id = w.bot_id)`.execute(db)
  await sql`insert into work_queue (kind, item_key, due_at, since, created_at)
    select 'broadcasts', 'all', cast(${now} as bigint), cast(${now} as bigint), cast(${now} as bigint)
    from broadcasts where status in ('queued', 'running') limit 1`.execute(db)
  await db.schema.dropTable('push_queue').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await id(db.schema.createTable('push_queue'), d)
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('chat_id', ref(d), (c) => c.notNull())
    .addColumn('message_id', ref(d), (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('due_at', timestamp, (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('push_queue_user_chat').unique().on('push_queue').columns(['user_id', 'chat_id']).execute()
  await db.schema.createIndex('push_queue_due').on('push_queue').column('due_at').execute()
  await db.schema.dropTable('work_queue').execute()
}
