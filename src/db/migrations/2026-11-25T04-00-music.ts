import { sql, type Kysely } from 'kysely'
import { dialectOf, id, ref, timestamp } from './columns.js'

/** Each user's music library: audio files they uploaded or found in a message they can see. */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await id(db.schema.createTable('user_music'), d)
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('file_path', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('artist', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('duration', 'integer')
    .addColumn('source_message_id', ref(d), (c) => c.references('messages.id').onDelete('set null'))
    .addColumn('added_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('user_music_user_file').unique().on('user_music').columns(['user_id', 'file_path']).execute()
  await db.schema.createIndex('user_music_user_id').on('user_music').columns(['user_id', 'id']).execute()
  // the file collector asks whether a library still holds an upload
  await db.schema.createIndex('user_music_file_path').on('user_music').columns(['file_path']).where(sql.ref('file_path'), 'is not', null).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('user_music').execute()
}
