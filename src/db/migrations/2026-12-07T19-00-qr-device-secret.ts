import type { Kysely } from 'kysely'

/**
 * A QR login code is bound to the device that generated it: generate answers a second secret
 * beside the token (the token is in the picture, the secret never is), and status and login
 * need it. Stored as its SHA-256 like the token. Codes live two minutes, so codes made before
 * this (no secret) simply expire.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('qr_login_tokens').addColumn('secret_hash', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('qr_login_tokens').dropColumn('secret_hash').execute()
}
