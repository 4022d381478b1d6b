import { sql, type Kysely } from 'kysely'
import { dialectOf, id, ref, timestamp } from './columns.js'

/**
 * Contacts (whose stories a user follows, and who sees a contacts-only story), stories with their
 * views, likes, reactions and selected viewers, and what the file collector needs to tell whether
 * an upload is still referenced: an index on every column that stores an upload path, and the
 * attachment path of a scheduled message as a column of its own (it was only inside the payload).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)

  await id(db.schema.createTable('contacts'), d)
    .addColumn('owner_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('contact_user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('display_name', 'text')
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('contacts_owner_contact').unique().on('contacts').columns(['owner_id', 'contact_user_id']).execute()
  // "who has me as a contact": the audience of my stories, my followers count
  await db.schema.createIndex('contacts_contact_owner').on('contacts').columns(['contact_user_id', 'owner_id']).execute()

  await id(db.schema.createTable('stories'), d)
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('media_path', 'text', (c) => c.notNull())
    .addColumn('media_type', 'text', (c) => c.notNull().defaultTo('image'))
    .addColumn('caption', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('music_path', 'text')
    .addColumn('privacy_type', 'text', (c) => c.notNull().defaultTo('everyone'))
    .addColumn('view_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('like_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('reaction_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('expires_at', timestamp, (c) => c.notNull())
    .execute()
  // an author's active stories (the feed probes it once per followed author)
  await db.schema.createIndex('stories_user_expires').on('stories').columns(['user_id', 'expires_at']).execute()
  // the cleanup job's scan, oldest first
  await db.schema.createIndex('stories_expires').on('stories').columns(['expires_at']).execute()
  await db.schema.createIndex('stories_media_path').on('stories').columns(['media_path']).execute()
  await db.schema.createIndex('stories_music_path').on('stories').columns(['music_path']).where(sql.ref('music_path'), 'is not', null).execute()

  await db.schema
    .createTable('story_views')
    .addColumn('story_id', ref(d), (c) => c.notNull().references('stories.id').onDelete('cascade'))
    .addColumn('viewer_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('viewed_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('story_views_pk', ['story_id', 'viewer_id'])
    .execute()
  // the owner's viewer list, newest first
  await db.schema.createIndex('story_views_story_time').on('story_views').columns(['story_id', 'viewed_at']).execute()
  await db.schema.createIndex('story_views_viewer').on('story_views').columns(['viewer_id']).execute()

  await db.schema
    .createTable('story_likes')
    .addColumn('story_id', ref(d), (c) => c.notNull().references('stories.id').onDelete('cascade'))
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('story_likes_pk', ['story_id', 'user_id'])
    .execute()
  await db.schema.createIndex('story_likes_user').on('story_likes').columns(['user_id']).execute()

  await db.schema
    .createTable('story_reactions')
    .addColumn('story_id', ref(d), (c) => c.notNull().references('stories.id').onDelete('cascade'))
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('reaction', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('story_reactions_pk', ['story_id', 'user_id'])
    .execute()
  await db.schema.createIndex('story_reactions_user').on('story_reactions').columns(['user_id']).execute()

  await db.schema
    .createTable('story_allowed_users')
    .addColumn('story_id', ref(d), (c) => c.notNull().references('stories.id').onDelete('cascade'))
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('story_allowed_users_pk', ['story_id', 'user_id'])
    .execute()
  await db.schema.createIndex('story_allowed_users_user').on('story_allowed_users').columns(['user_id']).execute()

  // The collector asks whether any upload is left for an object's bytes.
  await db.schema.createIndex('file_uploads_hash').on('file_uploads').columns(['hash']).execute()
  // Where uploads are referenced: avatars, and a scheduled message's attachment.
  await db.schema.createIndex('users_avatar').on('users').columns(['avatar']).where(sql.ref('avatar'), 'is not', null).execute()
  await db.schema.createIndex('chats_avatar').on('chats').columns(['avatar']).where(sql.ref('avatar'), 'is not', null).execute()
  await db.schema.alterTable('scheduled_messages').addColumn('file_path', 'text').execute()
  // Raw SQL: the payload is JSON (text in SQLite, jsonb in PostgreSQL), read per dialect.
  if (d === 'sqlite') {
    await sql`update scheduled_messages set file_path = json_extract(payload, '$.attachment.file_path')`.execute(db)
  } else {
    await sql`update scheduled_messages set file_path = payload->'attachment'->>'file_path'`.execute(db)
  }
  await db.schema
    .createIndex('scheduled_messages_file_path')
    .on('scheduled_messages')
    .columns(['file_path'])
    .where(sql.ref('file_path'), 'is not', null)
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('scheduled_messages_file_path').execute()
  await db.schema.alterTable('scheduled_messages').dropColumn('file_path').execute()
  await db.schema.dropIndex('chats_avatar').execute()
  await db.schema.dropIndex('users_avatar').execute()
  await db.schema.dropIndex('file_uploads_hash').execute()
  for (const table of ['story_allowed_users', 'story_reactions', 'story_likes', 'story_views', 'stories', 'contacts']) {
    await db.schema.dropTable(table).execute()
  }
}
