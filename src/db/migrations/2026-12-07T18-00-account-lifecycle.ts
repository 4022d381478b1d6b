import type { Kysely } from 'kysely'
import { dialectOf, flag, id, ref, timestamp } from './columns.js'

/**
 * The account's life after sign-up: codes mailed for a password reset or for a step of an account
 * without a password, usernames of deleted accounts held back for a while, when an account's email
 * address was set (an unconfirmed one lapses), and confirmation links that claim an address another
 * account has not confirmed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  // one row per purpose and subject (an address for a reset, a user for a signed-in step): the newest code
  await id(db.schema.createTable('account_codes'), d)
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    // null: no account has the address (a reset code nobody is sent)
    .addColumn('user_id', ref(d), (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', timestamp, (c) => c.notNull())
    .addColumn('used_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addUniqueConstraint('account_codes_purpose_subject', ['purpose', 'subject'])
    .execute()
  await db.schema.createIndex('account_codes_expires').on('account_codes').column('expires_at').execute()

  // a deleted account's former username (lower-cased), unavailable to others until released_at
  await db.schema
    .createTable('username_reservations')
    .addColumn('username_key', 'text', (c) => c.primaryKey())
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id'))
    .addColumn('released_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('username_reservations_released').on('username_reservations').column('released_at').execute()

  // null: set before this column existed (created_at counts instead)
  await db.schema.alterTable('users').addColumn('email_set_at', timestamp).execute()
  // 1: the link claims an address another account has unconfirmed (it is not yet the user's)
  await db.schema.alterTable('email_verifications').addColumn('claim', flag, (c) => c.notNull().defaultTo(0)).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('email_verifications').dropColumn('claim').execute()
  await db.schema.alterTable('users').dropColumn('email_set_at').execute()
  await db.schema.dropTable('username_reservations').execute()
  await db.schema.dropTable('account_codes').execute()
}
