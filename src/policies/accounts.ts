/**
 * Whose account counts. A usable account is active (not banned, not a retired bot) and not
 * deleted: only usable accounts can be written to, called, added or found. A platform
 * administrator is a usable account with the admin flag: a banned or deleted admin is nobody's
 * admin.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely'
import type { UserRow } from '../db/tables.js'
import { forbidden } from '../http/errors.js'
import { col } from './sql.js'

export type AccountState = Pick<UserRow, 'is_active' | 'deleted_at'>

export const isUsable = (user: AccountState): boolean => user.is_active === 1 && user.deleted_at === null

/** `isUsable` for queries: the users row under `alias`. */
export const usableAccount = (alias: string): RawBuilder<SqlBool> =>
  sql<SqlBool>`(${col(`${alias}.is_active`)} = 1 and ${col(`${alias}.deleted_at`)} is null)`

export const isPlatformAdmin = (user: AccountState & Pick<UserRow, 'is_admin'>): boolean => user.is_admin === 1 && isUsable(user)

/** `isPlatformAdmin` for queries. */
export const platformAdmin = (alias: string): RawBuilder<SqlBool> =>
  sql<SqlBool>`(${col(`${alias}.is_admin`)} = 1 and ${usableAccount(alias)})`

/** 403 unless `user` is a platform admin. */
export function assertPlatformAdmin(user: AccountState & Pick<UserRow, 'is_admin'>) {
  if (!isPlatformAdmin(user)) throw forbidden('Admin access required')
}
