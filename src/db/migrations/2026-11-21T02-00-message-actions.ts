import { sql, type Kysely } from 'kysely'
import { dialectOf, id, json, ref, timestamp } from './columns.js'

export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)

  // First time any other member read the message (set once, for the newly read range only).
  await db.schema.alterTable('messages').addColumn('read_at', timestamp).execute()
  // Messages already read by another member (by read position) count as read at their send time.
  await sql`update messages set read_at = created_at where exists (
    select 1 from chat_members cm
    where cm.chat_id = messages.chat_id and cm.user_id <> messages.sender_id and cm.read_seq >= messages.seq)`.execute(db)

  // Unread counts subtract the deleted-for-all messages past the reader's position: this partial
  // index holds only those, so the subtraction costs O(deleted unread), never a count over messages.
  await db.schema
    .createIndex('messages_deleted_for_all')
    .on('messages')
    .columns(['chat_id', 'seq'])
    .where(sql.ref('deleted_for_all'), '=', 1)
    .execute()

  // "Delete for me": the message stays for everyone else.
  await db.schema
    .createTable('message_hidden')
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('message_id', ref(d), (c) => c.notNull().references('messages.id').onDelete('cascade'))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('message_hidden_pk', ['user_id', 'message_id'])
    .execute()

  // One reaction per user per message; the message's map is an aggregate over these rows.
  await db.schema
    .createTable('reactions')
    .addColumn('message_id', ref(d), (c) => c.notNull().references('messages.id').onDelete('cascade'))
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('emoji', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('reactions_pk', ['message_id', 'user_id'])
    .execute()

  await id(db.schema.createTable('saved_messages'), d)
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('message_id', ref(d), (c) => c.notNull().references('messages.id').onDelete('cascade'))
    .addColumn('saved_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('saved_messages_user_message').unique().on('saved_messages').columns(['user_id', 'message_id']).execute()
  await db.schema.createIndex('saved_messages_user_id').on('saved_messages').columns(['user_id', 'id']).execute()

  await db.schema
    .createTable('blocked_users')
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('blocked_user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('reason', 'text')
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('blocked_users_pk', ['user_id', 'blocked_user_id'])
    .execute()
  await db.schema.createIndex('blocked_users_blocked').on('blocked_users').columns(['blocked_user_id']).execute()

  // Messages held back until scheduled_at. They get their message row, id and chat seq only when
  // the scheduler delivers them (Telegram's scheduled messages have their own ids too).
  await id(db.schema.createTable('scheduled_messages'), d)
    .addColumn('chat_id', ref(d), (c) => c.notNull().references('chats.id').onDelete('cascade'))
    .addColumn('sender_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    // the send request's message fields (content, reply_to_id, emoji…, encryption…)
    .addColumn('payload', json(d), (c) => c.notNull())
    .addColumn('client_message_id', 'text')
    .addColumn('scheduled_at', timestamp, (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('scheduled_messages_due').on('scheduled_messages').columns(['scheduled_at']).execute()
  await db.schema.createIndex('scheduled_messages_sender').on('scheduled_messages').columns(['sender_id', 'chat_id']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['scheduled_messages', 'blocked_users', 'saved_messages', 'reactions', 'message_hidden']) {
    await db.schema.dropTable(table).execute()
  }
  await db.schema.alterTable('messages').dropColumn('read_at').execute()
}
