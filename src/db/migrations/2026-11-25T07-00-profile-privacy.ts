import { sql, type Kysely } from 'kysely'
import { dialectOf } from './columns.js'

/**
 * Profiles and privacy: a profile link, one phone number per account (normalised to E.164 before
 * it is stored), and who sees a user's last seen, phone and avatar (everyone | contacts | nobody).
 * The never-written JSON `privacy_settings` column gives way to the three typed ones.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const audience = (name: string, fallback: string) =>
    db.schema
      .alterTable('users')
      .addColumn(name, 'text', (c) => c.notNull().defaultTo(fallback).check(sql`${sql.ref(name)} in ('everyone', 'contacts', 'nobody')`))
      .execute()
  await audience('privacy_last_seen', 'everyone')
  await audience('privacy_phone', 'contacts')
  await audience('privacy_avatar', 'everyone')
  await db.schema.alterTable('users').addColumn('link', 'text').execute()
  await db.schema.alterTable('users').dropColumn('privacy_settings').execute()
  await db.schema.createIndex('users_phone_unique').unique().on('users').column('phone').where(sql.ref('phone'), 'is not', null).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('users_phone_unique').execute()
  await db.schema.alterTable('users').addColumn('privacy_settings', dialectOf(db) === 'sqlite' ? 'text' : 'jsonb').execute()
  for (const column of ['link', 'privacy_avatar', 'privacy_phone', 'privacy_last_seen']) await db.schema.alterTable('users').dropColumn(column).execute()
}
