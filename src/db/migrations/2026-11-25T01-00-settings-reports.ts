import { sql, type Kysely } from 'kysely'
import { dialectOf, id, json, ref, timestamp } from './columns.js'

/**
 * Per-user settings (one JSON object of preferences each) and reports of users and messages to
 * the moderators, with at most one open report per reporter and target.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await db.schema
    .createTable('user_settings')
    .addColumn('user_id', ref(d), (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('settings', json(d), (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute()

  await id(db.schema.createTable('reports'), d)
    .addColumn('reporter_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('reported_user_id', ref(d), (c) => c.references('users.id').onDelete('set null'))
    .addColumn('reported_message_id', ref(d), (c) => c.references('messages.id').onDelete('set null'))
    // `user:<id>` or `message:<id>`: what the report is about, so one reporter has one open report each
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('resolved_at', timestamp)
    .addColumn('resolved_by', ref(d), (c) => c.references('users.id').onDelete('set null'))
    .execute()
  await db.schema
    .createIndex('reports_open_target')
    .unique()
    .on('reports')
    .columns(['reporter_id', 'target'])
    .where(sql.ref('status'), '=', 'pending')
    .execute()
  // the admin queue: by status, oldest first
  await db.schema.createIndex('reports_status').on('reports').columns(['status', 'id']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('reports').execute()
  await db.schema.dropTable('user_settings').execute()
}
