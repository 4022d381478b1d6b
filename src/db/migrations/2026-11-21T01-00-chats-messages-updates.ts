import type { Kysely } from 'kysely'
import { dialectOf, flag, id, json, ref, timestamp } from './columns.js'

export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)

  await id(db.schema.createTable('chats'), d)
    .addColumn('chat_type', 'text', (c) => c.notNull())
    // personal chats: the two participants, lower id first (equal for Saved Messages)
    .addColumn('peer1_id', ref(d), (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('peer2_id', ref(d), (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('title', 'text')
    .addColumn('description', 'text')
    .addColumn('avatar', 'text')
    .addColumn('created_by', ref(d), (c) => c.references('users.id').onDelete('set null'))
    .addColumn('is_public', flag, (c) => c.notNull().defaultTo(0))
    // the chat's own message sequence: unread counts are differences of it, never counts over messages
    .addColumn('message_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_message_id', ref(d))
    .addColumn('last_message_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('chats_personal_pair').unique().on('chats').columns(['peer1_id', 'peer2_id']).execute()

  await db.schema
    .createTable('chat_members')
    .addColumn('chat_id', ref(d), (c) => c.notNull().references('chats.id').onDelete('cascade'))
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull().defaultTo('member'))
    .addColumn('joined_at', timestamp, (c) => c.notNull())
    // read position: the chat message_seq up to which this member has read
    .addColumn('read_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('read_at', timestamp)
    .addPrimaryKeyConstraint('chat_members_pk', ['chat_id', 'user_id'])
    .execute()
  await db.schema.createIndex('chat_members_user').on('chat_members').columns(['user_id', 'chat_id']).execute()

  await id(db.schema.createTable('messages'), d)
    .addColumn('chat_id', ref(d), (c) => c.notNull().references('chats.id').onDelete('cascade'))
    // position in the chat's message_seq (1, 2, 3…). Scheduled messages wait elsewhere and get
    // their row, id and seq when delivered, so id and seq grow together within a chat.
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('sender_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('receiver_id', ref(d), (c) => c.references('users.id').onDelete('set null'))
    .addColumn('content', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('reply_to_id', ref(d))
    .addColumn('forwarded_from', 'text')
    .addColumn('forwarded_from_id', ref(d))
    .addColumn('file_path', 'text')
    .addColumn('file_type', 'text')
    .addColumn('file_name', 'text')
    .addColumn('file_size', 'bigint')
    .addColumn('thumbnail_path', 'text')
    .addColumn('is_encrypted', flag, (c) => c.notNull().defaultTo(0))
    .addColumn('encrypted_content', 'text')
    .addColumn('encryption_key_id', 'text')
    .addColumn('emoji', 'text')
    .addColumn('emoji_file', 'text')
    .addColumn('emoji_size', 'integer')
    .addColumn('emoji_count', 'integer')
    .addColumn('deleted_for_all', flag, (c) => c.notNull().defaultTo(0))
    .addColumn('edited_at', timestamp)
    .addColumn('scheduled_at', timestamp)
    .addColumn('delivered_at', timestamp)
    .addColumn('client_message_id', 'text')
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  // History pages and keysets both seek on (chat_id, seq): the same cost at any depth.
  await db.schema.createIndex('messages_chat_seq').unique().on('messages').columns(['chat_id', 'seq']).execute()
  // A retried send with the same client id finds the first message (Telegram's random_id).
  await db.schema.createIndex('messages_client_id').unique().on('messages').columns(['sender_id', 'client_message_id']).execute()

  // The per-user update log behind `resume` and GET V2/updates.
  await db.schema
    .createTable('update_seqs')
    .addColumn('user_id', ref(d), (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema
    .createTable('updates')
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', json(d), (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('updates_pk', ['user_id', 'seq'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['updates', 'update_seqs', 'messages', 'chat_members', 'chats']) {
    await db.schema.dropTable(table).execute()
  }
}
