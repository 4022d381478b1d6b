import type { Kysely } from 'kysely'
import { dialectOf, id, ref, timestamp } from './columns.js'

/**
 * Sign-in codes mailed by login_v3 `send_otp`: one row per address (the newest code), kept also
 * for addresses without an account so those answer and throttle alike. The code is stored as an
 * HMAC under the server key.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await id(db.schema.createTable('login_codes'), d)
    // the address as typed, lower-cased
    .addColumn('email_key', 'text', (c) => c.notNull().unique())
    // null: no account has this address (the code is never sent)
    .addColumn('user_id', ref(d), (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', timestamp, (c) => c.notNull())
    .addColumn('used_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('login_codes_expires').on('login_codes').column('expires_at').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('login_codes').execute()
}
