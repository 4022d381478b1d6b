import { sql } from 'kysely'
import type { Db } from '../../db/database.js'
import type { NewUserRow, UserRow, UserUpdate } from '../../db/tables.js'
import { bump } from '../../db/counters.js'
import { platformAdmin } from '../../policies/accounts.js'
import { paged } from '../../db/page.js'
import { DELETED_DISPLAY_NAME, deletedUsername } from './present.js'

export function findById(db: Db, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
}

/** A user by username or email, case-insensitively (served by the lower(...) unique indexes). */
export function findByLogin(db: Db, login: string): Promise<UserRow | undefined> {
  const lowered = login.toLowerCase()
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb.or([eb(sql`lower(username)`, '=', lowered), eb(sql`lower(email)`, '=', lowered)]))
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
}

/** A user by username, case-insensitively (users_username_lower). */
export function findByUsername(db: Db, username: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where(sql`lower(username)`, '=', username.toLowerCase()).executeTakeFirst()
}

/**
 * Whether a username or email is taken, case-insensitively (served by the lower(...) indexes). A
 * username held back for a deleted account (username_reservations) is taken too.
 */
export async function isTaken(db: Db, column: 'username' | 'email', value: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where(sql`lower(${sql.ref(column)})`, '=', value.toLowerCase())
    .executeTakeFirst()
  if (row !== undefined || column === 'email') return row !== undefined
  const reserved = await db
    .selectFrom('username_reservations')
    .select('user_id')
    .where('username_key', '=', value.toLowerCase())
    .executeTakeFirst()
  return reserved !== undefined
}

/** The account that has this email address, case-insensitively (users_email_lower), deleted or not. */
export function findByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where(sql`lower(email)`, '=', email.toLowerCase()).executeTakeFirst()
}

/**
 * Takes an unconfirmed address off the account that has it: every such account when `setBefore`
 * is undefined, else only when it was set before then (it lapsed). The number of accounts changed.
 */
export async function dropUnconfirmedEmail(db: Db, email: string, setBefore?: number): Promise<number> {
  let query = db
    .updateTable('users')
    .set({ email: null, email_verified: 0, email_set_at: null })
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .where('email_verified', '=', 0)
  if (setBefore !== undefined) query = query.where((eb) => eb(eb.fn.coalesce('email_set_at', 'created_at'), '<', setBefore))
  const result = await query.executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** Takes lapsed unconfirmed addresses off their accounts, at most `limit` at a time; how many. */
export async function dropLapsedEmails(db: Db, setBefore: number, limit: number): Promise<number> {
  const ids = await db
    .selectFrom('users')
    .select('id')
    .where('email', 'is not', null)
    .where('email_verified', '=', 0)
    .where((eb) => eb(eb.fn.coalesce('email_set_at', 'created_at'), '<', setBefore))
    .limit(limit)
    .execute()
  if (ids.length === 0) return 0
  const result = await db
    .updateTable('users')
    .set({ email: null, email_verified: 0, email_set_at: null })
    .where(
      'id',
      'in',
      ids.map((row) => row.id),
    )
    .where('email_verified', '=', 0)
    .where((eb) => eb(eb.fn.coalesce('email_set_at', 'created_at'), '<', setBefore))
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** Holds a deleted account's former username back until `releasedAt`. */
export async function reserveUsername(db: Db, username: string, userId: number, releasedAt: number) {
  await db
    .insertInto('username_reservations')
    .values({ username_key: username.toLowerCase(), user_id: userId, released_at: releasedAt })
    .onConflict((oc) => oc.column('username_key').doUpdateSet({ user_id: userId, released_at: releasedAt }))
    .execute()
}

/** Gives back the usernames whose time is over; how many. */
export async function releaseUsernames(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('username_reservations').where('released_at', '<=', now).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/**
 * Inserts an account and counts it in the statistics' users counter (the system account is not
 * counted); run it in a transaction.
 */
export async function insertUser(db: Db, user: NewUserRow): Promise<UserRow> {
  const row = await db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow()
  if (row.is_system !== 1) await bump(db, 'users', 1)
  return row
}

export function updateUser(db: Db, id: number, changes: UserUpdate): Promise<UserRow | undefined> {
  return db.updateTable('users').set(changes).where('id', '=', id).returningAll().executeTakeFirst()
}

export interface UserFilter {
  /** matches username or email, case-insensitively */
  q?: string
  isActive?: boolean
  isAdmin?: boolean
  /** premium at `now` */
  isPremium?: boolean
}

/** A page of users, newest first, by the filter. */
export async function listUsers(db: Db, filter: UserFilter, now: number, page: number, perPage: number) {
  let query = db.selectFrom('users').where('deleted_at', 'is', null)
  if (filter.q) {
    const pattern = `%${filter.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    query = query.where((eb) =>
      eb.or([eb(sql`lower(username)`, 'like', sql`${pattern} escape '\\'`), eb(sql`lower(email)`, 'like', sql`${pattern} escape '\\'`)]),
    )
  }
  if (filter.isActive !== undefined) query = query.where('is_active', '=', filter.isActive ? 1 : 0)
  if (filter.isAdmin !== undefined) query = query.where('is_admin', '=', filter.isAdmin ? 1 : 0)
  if (filter.isPremium === true) query = query.where('premium_expires_at', '>', now)
  if (filter.isPremium === false)
    query = query.where((eb) => eb.or([eb('premium_expires_at', 'is', null), eb('premium_expires_at', '<=', now)]))
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('id', 'desc').$call(paged(page, perPage)).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

/** How many active platform admins there are (the last one cannot be demoted or banned). */
export async function countActiveAdmins(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(platformAdmin('users'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** How many users are premium at `now` (a range on users_premium_expires). */
export async function countPremium(db: Db, now: number): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('premium_expires_at', '>', now)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** These users' rows (in no particular order; unknown ids are left out). */
export function findByIds(db: Db, ids: readonly number[]): Promise<UserRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db.selectFrom('users').selectAll().where('id', 'in', ids).execute()
}

/** The users with these (E.164) phone numbers: users_phone_unique. */
export function findByPhones(db: Db, phones: readonly string[]): Promise<UserRow[]> {
  if (phones.length === 0) return Promise.resolve([])
  return db.selectFrom('users').selectAll().where('phone', 'in', phones).execute()
}

/** Where these users stand: online, and when they were last seen (and who may know). */
export function presenceOf(db: Db, ids: number[]) {
  return db.selectFrom('users').select(['id', 'is_online', 'last_seen', 'privacy_last_seen']).where('id', 'in', ids).execute()
}

/** Everyone offline (a single instance starting: nobody can be online from before). */
export async function clearOnlineFlags(db: Db) {
  await db.updateTable('users').set({ is_online: 0 }).where('is_online', '=', 1).execute()
}

/**
 * Records that a TOTP code of this time step was accepted, unless one of this step or a later
 * one already was: false means the code is a replay.
 */
export async function claimTwoFactorStep(db: Db, id: number, step: number): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ two_factor_last_step: step })
    .where('id', '=', id)
    .where('two_factor_secret', 'is not', null)
    .where((eb) => eb.or([eb('two_factor_last_step', 'is', null), eb('two_factor_last_step', '<', step)]))
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Turns two-factor on with the pending secret, unless it is on already or the pending secret changed meanwhile. */
export async function activateTwoFactor(db: Db, id: number, pendingSecret: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ two_factor_secret: pendingSecret, two_factor_pending_secret: null, two_factor_last_step: step })
    .where('id', '=', id)
    .where('two_factor_secret', 'is', null)
    .where('two_factor_pending_secret', '=', pendingSecret)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Turns two-factor off and drops any pending setup; true when it was on. */
export async function clearTwoFactor(db: Db, id: number): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ two_factor_secret: null, two_factor_pending_secret: null, two_factor_last_step: null })
    .where('id', '=', id)
    .where('two_factor_secret', 'is not', null)
    .executeTakeFirst()
  if (Number(result.numUpdatedRows) > 0) return true
  await db
    .updateTable('users')
    .set({ two_factor_pending_secret: null })
    .where('id', '=', id)
    .where('two_factor_pending_secret', 'is not', null)
    .execute()
  return false
}

/**
 * Locks the user's row until the transaction ends (a no-op write: PostgreSQL makes a second
 * writer wait; SQLite has one writer anyway), so limits counted per user hold under concurrency.
 */
export async function lockUser(db: Db, id: number) {
  await db.updateTable('users').set({ id: sql`id` }).where('id', '=', id).execute()
}

/** Counts one more moderator's warning for a user. */
export async function countWarning(db: Db, userId: number): Promise<void> {
  await db
    .updateTable('users')
    .set((eb) => ({ warnings: eb('warnings', '+', 1) }))
    .where('id', '=', userId)
    .execute()
}

/** Sets the user's last activity if it was before `dayStartedAt` (or never): whether this is their first activity of the day. */
export async function touchFirstToday(db: Db, userId: number, now: number, dayStartedAt: number): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ last_activity: now })
    .where('id', '=', userId)
    .where((eb) => eb.or([eb('last_activity', 'is', null), eb('last_activity', '<', dayStartedAt)]))
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Erases an account's personal fields (users/service.ts eraseAccount): false when it was deleted already. */
export async function eraseRow(db: Db, userId: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({
      deleted_at: now,
      username: deletedUsername(userId),
      display_name: DELETED_DISPLAY_NAME,
      email: null,
      email_verified: 0,
      email_set_at: null,
      password_hash: null,
      avatar: null,
      bio: '',
      status: '',
      status_emoji: '',
      phone: null,
      birthday: null,
      link: null,
      bot_webapp_url: null,
      two_factor_secret: null,
      two_factor_pending_secret: null,
      two_factor_last_step: null,
      appearance_settings: null,
      is_online: 0,
      last_seen: null,
    })
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** The system account, the first if there were ever two. */
export function findSystem(db: Db) {
  return db.selectFrom('users').selectAll().where('is_system', '=', 1).orderBy('id').executeTakeFirst()
}
