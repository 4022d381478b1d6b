import type { Kysely } from 'kysely'
import { dialectOf, id, ref, timestamp } from './columns.js'

/**
 * Referrals (who invited whom; each user is invited once) and premium orders, the history of what
 * granted a user premium (here: ten invited users; later purchases and promo codes).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await id(db.schema.createTable('referrals'), d)
    .addColumn('inviter_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('invited_user_id', ref(d), (c) => c.notNull().unique().references('users.id').onDelete('cascade'))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('referrals_inviter').on('referrals').columns(['inviter_id']).execute()

  await id(db.schema.createTable('premium_orders'), d)
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('plan', 'text', (c) => c.notNull())
    // whole roubles
    .addColumn('amount', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    // the premium_expires_at the order took the user to
    .addColumn('premium_until', timestamp, (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('premium_orders_user').on('premium_orders').columns(['user_id', 'id']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('premium_orders').execute()
  await db.schema.dropTable('referrals').execute()
}
