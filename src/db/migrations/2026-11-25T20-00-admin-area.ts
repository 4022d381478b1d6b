import { sql, type Kysely } from 'kysely'
import { dialectOf, flag, id, ref, timestamp } from './columns.js'

/**
 * The admin area: the system account (is_system) and warnings per user; broadcasts and their
 * progress; the platform counters and the per-day counters the admin stats read (seeded here from
 * the data already present, kept in step by the writes that change them).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db)
  await db.schema.alterTable('users').addColumn('is_system', flag, (c) => c.notNull().defaultTo(0)).execute()
  await db.schema.alterTable('users').addColumn('warnings', 'integer', (c) => c.notNull().defaultTo(0)).execute()
  // premium users are counted by range on this index, not by a scan of users
  await db.schema.createIndex('users_premium_expires').on('users').column('premium_expires_at').execute()
  await db.schema.createIndex('users_system').on('users').column('is_system').where(sql.ref('is_system'), '=', 1).execute()

  // an admin's view of a user: the reports against them
  await db.schema.createIndex('reports_reported_user').on('reports').columns(['reported_user_id', 'status']).execute()

  await id(db.schema.createTable('broadcasts'), dialect)
    .addColumn('admin_id', ref(dialect), (c) => c.references('users.id'))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('sent', 'integer', (c) => c.notNull().defaultTo(0))
    // recipients are walked in id order: the last user id done
    .addColumn('cursor_user_id', ref(dialect), (c) => c.notNull().defaultTo(0))
    // the highest user id at the start: people who register later are not in it
    .addColumn('last_user_id', ref(dialect), (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('started_at', timestamp)
    .addColumn('finished_at', timestamp)
    .execute()
  await db.schema.createIndex('broadcasts_status').on('broadcasts').columns(['status', 'id']).execute()

  await db.schema
    .createTable('platform_counters')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema
    .createTable('daily_counters')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('metric', 'text', (c) => c.notNull())
    .addColumn('value', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('daily_counters_pk', ['day', 'metric'])
    .execute()

  await sql`insert into platform_counters (name, value) select 'users', count(*) from users`.execute(db)
  await sql`insert into platform_counters (name, value) select 'channels', count(*) from chats where chat_type = 'channel'`.execute(db)
  await sql`insert into platform_counters (name, value) select 'files_bytes', coalesce(sum(size), 0) from file_objects`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('daily_counters').execute()
  await db.schema.dropTable('platform_counters').execute()
  await db.schema.dropTable('broadcasts').execute()
  await db.schema.dropIndex('reports_reported_user').execute()
  await db.schema.dropIndex('users_system').execute()
  await db.schema.dropIndex('users_premium_expires').execute()
  await db.schema.alterTable('users').dropColumn('warnings').execute()
  await db.schema.alterTable('users').dropColumn('is_system').execute()
}
