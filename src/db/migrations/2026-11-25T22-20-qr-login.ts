import type { Kysely } from 'kysely'
import { dialectOf, flag, id, ref, timestamp } from './columns.js'

/**
 * QR login: a code shown by a device that wants to sign in, scanned and approved by a signed-in
 * device. The token (256-bit) is stored only as its SHA-256; a row lives 2 minutes and opens one
 * session. `status` is pending, scanned, authorized or used (expired is read from expires_at).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await id(db.schema.createTable('qr_login_tokens'), d)
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    // the device that asked (shown to the one that scans): its own description, address and agent
    .addColumn('device', 'text')
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    // who scanned it (request), and the session that approved it (authorize)
    .addColumn('user_id', ref(d), (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('authorized_session_id', ref(d))
    .addColumn('two_factor_verified', flag, (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', timestamp, (c) => c.notNull())
    .addColumn('scanned_at', timestamp)
    .addColumn('authorized_at', timestamp)
    .addColumn('used_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('qr_login_tokens_expires').on('qr_login_tokens').column('expires_at').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('qr_login_tokens').execute()
}
