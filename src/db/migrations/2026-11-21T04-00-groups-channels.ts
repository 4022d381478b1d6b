import { sql, type Kysely } from 'kysely'
import { dialectOf, flag, id, json, ref, timestamp } from './columns.js'

/**
 * Groups and channels. Nothing here is written once per member on a message:
 * - a group or channel keeps its own event log (`chat_events`, sequenced by `chats.event_seq`)
 *   that members catch up on per chat, instead of one update row per member;
 * - its place in a member's chat list comes from the chat row (`last_message_at`), not from the
 *   member rows;
 * - members are numbered in join order (`position`) and counted per bucket of positions, so a
 *   members page seeks to its place without an OFFSET over the whole list.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)

  await db.schema.alterTable('chats').addColumn('owner_id', ref(d), (c) => c.references('users.id').onDelete('set null')).execute()
  for (const counter of ['member_count', 'join_seq', 'event_seq']) {
    await db.schema.alterTable('chats').addColumn(counter, 'bigint', (c) => c.notNull().defaultTo(0)).execute()
  }
  for (const name of ['is_verified', 'is_forum']) {
    await db.schema.alterTable('chats').addColumn(name, flag, (c) => c.notNull().defaultTo(0)).execute()
  }
  // the group's or channel's permanent invite link ({base}/join/<code>, {base}/channel/<code>)
  await db.schema.alterTable('chats').addColumn('invite_code', 'text').execute()
  await db.schema.createIndex('chats_invite_code').unique().on('chats').column('invite_code').execute()
  await sql`update chats set member_count = (select count(*) from chat_members m where m.chat_id = chats.id)`.execute(db)

  // join order inside the chat; personal chats' two members get 1 and 2
  await db.schema.alterTable('chat_members').addColumn('position', 'bigint').execute()
  await sql`update chat_members set position = (
    select count(*) from chat_members o where o.chat_id = chat_members.chat_id and o.user_id <= chat_members.user_id)`.execute(db)
  await sql`update chats set join_seq = member_count`.execute(db)
  await db.schema.createIndex('chat_members_position').unique().on('chat_members').columns(['chat_id', 'position']).execute()
  // admins and owners of a chat without scanning its members
  await db.schema.createIndex('chat_members_role').on('chat_members').columns(['chat_id', 'role', 'position']).execute()

  // members per bucket of 1,024 positions: a page finds its bucket by summing a few hundred counts
  await db.schema
    .createTable('member_buckets')
    .addColumn('chat_id', ref(d), (c) => c.notNull().references('chats.id').onDelete('cascade'))
    .addColumn('bucket', 'bigint', (c) => c.notNull())
    .addColumn('members', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('member_buckets_pk', ['chat_id', 'bucket'])
    .execute()
  await sql`insert into member_buckets (chat_id, bucket, members)
    select chat_id, position / 1024, count(*) from chat_members
    where chat_id in (select id from chats where chat_type <> 'personal') group by chat_id, position / 1024`.execute(db)

  // A group's or channel's own event log (docs/realtime.md: a channel keeps its own sequence).
  await db.schema
    .createTable('chat_events')
    .addColumn('chat_id', ref(d), (c) => c.notNull().references('chats.id').onDelete('cascade'))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', json(d), (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('chat_events_pk', ['chat_id', 'seq'])
    .execute()

  await id(db.schema.createTable('invite_links'), d)
    .addColumn('chat_id', ref(d), (c) => c.notNull().references('chats.id').onDelete('cascade'))
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', ref(d), (c) => c.references('users.id').onDelete('set null'))
    .addColumn('uses', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('usage_limit', 'bigint')
    .addColumn('expires_at', timestamp)
    .addColumn('revoked_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('invite_links_chat').on('invite_links').columns(['chat_id', 'id']).execute()

  await id(db.schema.createTable('group_topics'), d)
    .addColumn('chat_id', ref(d), (c) => c.notNull().references('chats.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('icon_emoji_id', 'text')
    .addColumn('created_by', ref(d), (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('group_topics_chat').on('group_topics').columns(['chat_id', 'id']).execute()
  await db.schema.alterTable('messages').addColumn('topic_id', ref(d)).execute()
  // a topic's history seeks like the chat's: (topic_id, seq)
  await db.schema
    .createIndex('messages_topic_seq')
    .on('messages')
    .columns(['topic_id', 'seq'])
    .where(sql.ref('topic_id'), 'is not', null)
    .execute()

  // a channel's discussion group: one per channel
  await id(db.schema.createTable('channel_binds'), d)
    .addColumn('channel_id', ref(d), (c) => c.notNull().unique().references('chats.id').onDelete('cascade'))
    .addColumn('group_id', ref(d), (c) => c.notNull().references('chats.id').onDelete('cascade'))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['channel_binds', 'group_topics', 'invite_links', 'chat_events', 'member_buckets']) {
    await db.schema.dropTable(table).execute()
  }
  await db.schema.dropIndex('messages_topic_seq').execute()
  await db.schema.alterTable('messages').dropColumn('topic_id').execute()
  await db.schema.dropIndex('chat_members_role').execute()
  await db.schema.dropIndex('chat_members_position').execute()
  await db.schema.alterTable('chat_members').dropColumn('position').execute()
  await db.schema.dropIndex('chats_invite_code').execute()
  for (const column of ['invite_code', 'is_forum', 'is_verified', 'event_seq', 'join_seq', 'member_count', 'owner_id']) {
    await db.schema.alterTable('chats').dropColumn(column).execute()
  }
}
