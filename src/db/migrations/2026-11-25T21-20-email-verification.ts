import type { Kysely } from 'kysely'
import { dialectOf, id, ref, timestamp } from './columns.js'

/** Email confirmation links: one live token per user, for the address it was sent to (hashed, 24 h, single use). */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await id(db.schema.createTable('email_verifications'), d)
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    // the address the link went to: it confirms that address only, not one changed to later
    .addColumn('email', 'text', (c) => c.notNull())
    // SHA-256 of the token (256-bit random); the token itself is only in the mail
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', timestamp, (c) => c.notNull())
    .addColumn('used_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('email_verifications_user').on('email_verifications').columns(['user_id', 'created_at']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('email_verifications').execute()
}
