import type { Kysely } from 'kysely'
import { dialectOf, flag, id, json, ref, timestamp, uniqueLower } from './columns.js'

export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)

  await id(db.schema.createTable('users'), d)
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('email_verified', flag, (c) => c.notNull().defaultTo(0))
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('avatar', 'text')
    .addColumn('bio', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status_emoji', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('phone', 'text')
    .addColumn('birthday', 'text')
    .addColumn('is_active', flag, (c) => c.notNull().defaultTo(1))
    .addColumn('is_admin', flag, (c) => c.notNull().defaultTo(0))
    .addColumn('is_bot', flag, (c) => c.notNull().defaultTo(0))
    .addColumn('bot_webapp_url', 'text')
    .addColumn('is_online', flag, (c) => c.notNull().defaultTo(0))
    .addColumn('last_seen', timestamp)
    .addColumn('last_activity', timestamp)
    .addColumn('premium_expires_at', timestamp)
    .addColumn('two_factor_secret', 'text')
    .addColumn('privacy_settings', json(d))
    .addColumn('appearance_settings', json(d))
    .addColumn('deleted_at', timestamp)
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  // Usernames and emails are unique regardless of case, as in Telegram.
  await uniqueLower(db, 'users_username_lower', 'users', 'username')
  await uniqueLower(db, 'users_email_lower', 'users', 'email')

  await id(db.schema.createTable('user_sessions'), d)
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    // SHA-256 of the token (hex); the token itself is never stored.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    // first characters of the token, for the masked form in the sessions list
    .addColumn('token_prefix', 'text', (c) => c.notNull())
    .addColumn('device', 'text')
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('last_activity', timestamp, (c) => c.notNull())
    .addColumn('is_active', flag, (c) => c.notNull().defaultTo(1))
    .execute()
  await db.schema.createIndex('user_sessions_user').on('user_sessions').columns(['user_id', 'is_active']).execute()

  await id(db.schema.createTable('mod_logs'), d)
    .addColumn('admin_id', ref(d), (c) => c.references('users.id').onDelete('set null'))
    .addColumn('action', 'text', (c) => c.notNull())
    // the target's kind depends on the action (user, report, message…), so no foreign key
    .addColumn('target_id', ref(d))
    .addColumn('details', json(d))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mod_logs').execute()
  await db.schema.dropTable('user_sessions').execute()
  await db.schema.dropTable('users').execute()
}
