/**
 * The Database interface Kysely types queries with: one interface per table, snake_case, grouped by
 * module. Timestamps are epoch milliseconds; flags are 0/1; JSON columns are read with fromJson().
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

type Flag = number
type EpochMs = number

// users module
export interface UsersTable {
  id: Generated<number>
  username: string
  email: string | null
  email_verified: Generated<Flag>
  display_name: string
  password_hash: string | null
  avatar: string | null
  bio: Generated<string>
  status: Generated<string>
  status_emoji: Generated<string>
  phone: string | null
  birthday: string | null
  is_active: Generated<Flag>
  is_admin: Generated<Flag>
  is_bot: Generated<Flag>
  bot_webapp_url: string | null
  is_online: Generated<Flag>
  last_seen: EpochMs | null
  last_activity: EpochMs | null
  premium_expires_at: EpochMs | null
  two_factor_secret: string | null
  privacy_settings: unknown | null
  appearance_settings: unknown | null
  deleted_at: EpochMs | null
  created_at: EpochMs
}
export type UserRow = Selectable<UsersTable>
export type NewUserRow = Insertable<UsersTable>
export type UserUpdate = Updateable<UsersTable>

// sessions module
export interface UserSessionsTable {
  id: Generated<number>
  user_id: number
  token_hash: string
  token_prefix: string
  device: string | null
  ip_address: string | null
  user_agent: string | null
  created_at: EpochMs
  last_activity: EpochMs
  is_active: Generated<Flag>
}
export type SessionRow = Selectable<UserSessionsTable>

// admin module
export interface ModLogsTable {
  id: Generated<number>
  admin_id: number | null
  action: string
  target_id: number | null
  details: string | null
  created_at: EpochMs
}
export type ModLogRow = Selectable<ModLogsTable>

export interface Database {
  users: UsersTable
  user_sessions: UserSessionsTable
  mod_logs: ModLogsTable
}
