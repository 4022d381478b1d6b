import type { Kysely } from 'kysely'
import { dialectOf, id, ref, timestamp } from './columns.js'

/** Accounts at OpenID Connect providers, each tied to one Tern user: (provider, subject) is the identity. */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await id(db.schema.createTable('identity_provider_accounts'), d)
    // the provider's id in OAUTH_PROVIDERS
    .addColumn('provider', 'text', (c) => c.notNull())
    // the provider's `sub` claim
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    // the email the provider gave when the identity was first seen (informational)
    .addColumn('email', 'text')
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('last_login_at', timestamp)
    .addUniqueConstraint('identity_provider_accounts_provider_subject', ['provider', 'subject'])
    .execute()
  await db.schema.createIndex('identity_provider_accounts_user').on('identity_provider_accounts').column('user_id').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('identity_provider_accounts').execute()
}
