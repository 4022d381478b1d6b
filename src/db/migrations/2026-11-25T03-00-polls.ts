import type { Kysely } from 'kysely'
import { dialectOf, flag, id, json, ref, timestamp } from './columns.js'

/** Polls: posted as a message of their chat (`messages.poll_id`), with one row per vote. */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await id(db.schema.createTable('polls'), d)
    .addColumn('chat_id', ref(d), (c) => c.notNull().references('chats.id').onDelete('cascade'))
    .addColumn('creator_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('question', 'text', (c) => c.notNull())
    // the options' texts, in order (a vote names its option by index)
    .addColumn('options', json(d), (c) => c.notNull())
    .addColumn('is_multiple', flag, (c) => c.notNull().defaultTo(0))
    .addColumn('is_anonymous', flag, (c) => c.notNull().defaultTo(1))
    .addColumn('closed_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema
    .createTable('poll_votes')
    .addColumn('poll_id', ref(d), (c) => c.notNull().references('polls.id').onDelete('cascade'))
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('option_index', 'integer', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('poll_votes_pk', ['poll_id', 'user_id', 'option_index'])
    .execute()
  // the counts (and voters) per option
  await db.schema.createIndex('poll_votes_option').on('poll_votes').columns(['poll_id', 'option_index', 'created_at']).execute()
  await db.schema.alterTable('messages').addColumn('poll_id', ref(d)).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').dropColumn('poll_id').execute()
  await db.schema.dropTable('poll_votes').execute()
  await db.schema.dropTable('polls').execute()
}
