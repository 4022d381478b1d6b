import type { Kysely } from 'kysely'
import { dialectOf, flag, id, ref, timestamp } from './columns.js'

/**
 * TOTP two-factor: the pending secret of a setup not yet confirmed and the last time step a code
 * was accepted for (a code works once), both on users next to the secret itself (stored
 * encrypted); single-use recovery codes (hashed); the tickets of logins waiting for their second
 * step (hashed, short-lived); and on each session how it was opened and whether a second factor
 * finished it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await db.schema.alterTable('users').addColumn('two_factor_pending_secret', 'text').execute()
  await db.schema.alterTable('users').addColumn('two_factor_last_step', 'bigint').execute()
  await db.schema.alterTable('user_sessions').addColumn('two_factor_verified', flag, (c) => c.notNull().defaultTo(0)).execute()
  // password, otp, qr, oauth:<provider>
  await db.schema.alterTable('user_sessions').addColumn('method', 'text', (c) => c.notNull().defaultTo('password')).execute()

  await id(db.schema.createTable('two_factor_recovery_codes'), d)
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    // HMAC-SHA256 of the code under the server key; the code itself is shown once, at enable
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('used_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('two_factor_recovery_codes_user').on('two_factor_recovery_codes').columns(['user_id', 'code_hash']).execute()

  await id(db.schema.createTable('login_tickets'), d)
    // SHA-256 of the ticket (256-bit random); the ticket itself is only in the login's answer
    .addColumn('ticket_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    // the step the login waits for (totp): how far it got is the server's record, never the client's word
    .addColumn('stage', 'text', (c) => c.notNull())
    // how the first step was passed (password, otp): the session's method
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('device', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', timestamp, (c) => c.notNull())
    .addColumn('used_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('login_tickets_expires').on('login_tickets').column('expires_at').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('login_tickets').execute()
  await db.schema.dropTable('two_factor_recovery_codes').execute()
  await db.schema.alterTable('user_sessions').dropColumn('method').execute()
  await db.schema.alterTable('user_sessions').dropColumn('two_factor_verified').execute()
  await db.schema.alterTable('users').dropColumn('two_factor_last_step').execute()
  await db.schema.alterTable('users').dropColumn('two_factor_pending_secret').execute()
}
