import type { Kysely } from 'kysely'
import { dialectOf, ref, timestamp } from './columns.js'

/** Per-user pinned chats (at the top of the chat list) and archived chats (in a list of their own). */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  for (const [table, column] of [['pinned_chats', 'pinned_at'], ['archived_chats', 'archived_at']] as const) {
    await db.schema
      .createTable(table)
      .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('chat_id', ref(d), (c) => c.notNull().references('chats.id').onDelete('cascade'))
      .addColumn(column, timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint(`${table}_pk`, ['user_id', 'chat_id'])
      .execute()
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('archived_chats').execute()
  await db.schema.dropTable('pinned_chats').execute()
}
