import type { Kysely } from 'kysely'
import { dialectOf, ref, timestamp } from './columns.js'

/**
 * When each user first had their invite link (GET referrals/me): an account may name an inviter
 * only if it was created after that, so accounts older than the link (or made before it was ever
 * shared) cannot be counted. An index on referrals (inviter_id, created_at) counts an inviter's
 * recent referrals against the monthly cap.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db)
  await db.schema
    .createTable('referral_shares')
    .addColumn('user_id', ref(dialect), (c) => c.primaryKey().references('users.id'))
    .addColumn('shared_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('referrals_inviter_created').on('referrals').columns(['inviter_id', 'created_at']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('referrals_inviter_created').execute()
  await db.schema.dropTable('referral_shares').execute()
}
