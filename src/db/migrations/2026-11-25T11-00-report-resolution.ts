import type { Kysely } from 'kysely'

/** A moderator's note on how a report was resolved, and the admin queue's index (status, newest first). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('reports').addColumn('resolution_note', 'text').execute()
  await db.schema.createIndex('reports_status_id').on('reports').columns(['status', 'id']).execute()
  await db.schema.createIndex('mod_logs_target').on('mod_logs').columns(['target_id', 'id']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('mod_logs_target').execute()
  await db.schema.dropIndex('reports_status_id').execute()
  await db.schema.alterTable('reports').dropColumn('resolution_note').execute()
}
