import type { Kysely } from 'kysely'

/**
 * Addresses set before users.email_set_at existed count as set now, not at sign-up: an account
 * that never confirmed its address keeps it for a full UNCONFIRMED_EMAIL_TTL_DAYS after the
 * upgrade instead of losing it at once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.updateTable('users').set({ email_set_at: Date.now() }).where('email', 'is not', null).where('email_set_at', 'is', null).execute()
}

export async function down(): Promise<void> {
  // the times it wrote cannot be told from real ones; nothing to undo
}
