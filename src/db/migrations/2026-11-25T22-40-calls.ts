import type { Kysely } from 'kysely'
import { dialectOf, id, ref, timestamp } from './columns.js'

/**
 * 1:1 calls: who called whom, audio or video, and how it went (ringing → answered → ended, or
 * missed, declined, cancelled), with the moments it was answered and ended.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db)
  await id(db.schema.createTable('calls'), dialect)
    .addColumn('caller_id', ref(dialect), (c) => c.notNull().references('users.id'))
    .addColumn('receiver_id', ref(dialect), (c) => c.notNull().references('users.id'))
    .addColumn('call_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('answered_at', timestamp)
    .addColumn('ended_at', timestamp)
    // seconds from answer to end; 0 for a call never answered
    .addColumn('duration', 'integer')
    .execute()
  // each side's history, newest first; and whether they are in a call now
  await db.schema.createIndex('calls_caller').on('calls').columns(['caller_id', 'id']).execute()
  await db.schema.createIndex('calls_receiver').on('calls').columns(['receiver_id', 'id']).execute()
  // the ringing and answered calls, for the time-outs
  await db.schema.createIndex('calls_status').on('calls').columns(['status', 'created_at']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('calls').execute()
}
