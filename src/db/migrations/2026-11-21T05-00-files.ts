import { sql, type Kysely } from 'kysely'
import { dialectOf, id, ref, timestamp } from './columns.js'

export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)

  // a message's attachment: how big a preview its image gets (big, medium or none)
  await db.schema.alterTable('messages').addColumn('preview_size', 'text').execute()

  // Stored bytes, once per content (SHA-256): identical uploads share one object and one thumbnail.
  await db.schema
    .createTable('file_objects')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('mime_type', 'text', (c) => c.notNull())
    // extension of the served paths, from the detected type
    .addColumn('ext', 'text', (c) => c.notNull())
    .addColumn('file_type', 'text', (c) => c.notNull())
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('thumbnail_key', 'text')
    .addColumn('preview_size', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()

  // One row per upload (the FileUpload and File shapes): its own random path, its uploader.
  await id(db.schema.createTable('file_uploads'), d)
    .addColumn('owner_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('hash', 'text', (c) => c.notNull().references('file_objects.hash'))
    .addColumn('path', 'text', (c) => c.notNull().unique())
    .addColumn('thumbnail_path', 'text', (c) => c.unique())
    .addColumn('original_name', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('mime_type', 'text', (c) => c.notNull())
    // `chunked:<session id>` or `tus:<upload id>`: finds the file of a finished resumable upload,
    // and makes finishing one twice produce one file
    .addColumn('source', 'text', (c) => c.unique())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('file_uploads_owner').on('file_uploads').columns(['owner_id', 'id']).execute()

  // Chunked upload sessions; the bytes received so far are the storage object `part_key`.
  await db.schema
    .createTable('upload_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('owner_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('mime_type', 'text', (c) => c.notNull())
    .addColumn('part_key', 'text', (c) => c.notNull())
    .addColumn('expires_at', timestamp, (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('upload_sessions_expires').on('upload_sessions').columns(['expires_at']).execute()

  // GET /files/{id} asks whether a message in one of the caller's chats carries the file: this
  // partial index holds only messages with an attachment.
  await db.schema
    .createIndex('messages_file_path')
    .on('messages')
    .columns(['file_path'])
    .where(sql.ref('file_path'), 'is not', null)
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('messages_file_path').execute()
  await db.schema.alterTable('messages').dropColumn('preview_size').execute()
  for (const table of ['upload_sessions', 'file_uploads', 'file_objects']) await db.schema.dropTable(table).execute()
}
