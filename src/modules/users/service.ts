/** Accounts: the users table's owner. Other modules create and change users only through here. */
import { hash, verify } from '@node-rs/argon2'
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { UserRow } from '../../db/tables.js'
import { conflict, notFound } from '../../http/errors.js'
import * as repo from './repo.js'
import { bumpDaily, dayOf, dayStart } from '../../db/counters.js'
import { SYSTEM_USERNAME } from './system.js'

/** Usernames that would be confused with built-in peers or the platform's own account. */
const RESERVED_USERNAMES = new Set(['saved_messages', SYSTEM_USERNAME])

// argon2id (algorithm 2; the library exports a const enum) at OWASP's minimum: 19 MiB, 2 passes, 1 lane.
const ARGON2 = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

export const hashPassword = (password: string) => hash(password, ARGON2)

/** A real hash of nothing in particular, verified when a login names no user (equal timing). */
let decoyHash: Promise<string> | null = null

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (!passwordHash) {
    decoyHash ??= hashPassword('decoy password for timing')
    await verify(await decoyHash, password)
    return false
  }
  try {
    return await verify(passwordHash, password)
  } catch {
    return false
  }
}

export interface NewAccount {
  username: string
  password: string
  email?: string | null
  displayName?: string | null
  isAdmin?: boolean
}

/** Creates an account; 409 when the username or email is taken (checked again by the unique index). */
export async function createUser(ctx: AppContext, account: NewAccount): Promise<UserRow> {
  if (RESERVED_USERNAMES.has(account.username.toLowerCase())) throw conflict('This username is reserved')
  if (await repo.isTaken(ctx.db, 'username', account.username)) throw conflict('This username is taken')
  if (account.email && (await repo.isTaken(ctx.db, 'email', account.email))) {
    throw conflict('This email is already registered')
  }
  const passwordHash = await hashPassword(account.password)
  try {
    return await ctx.db.transaction().execute((trx) =>
      repo.insertUser(trx, {
        username: account.username,
        email: account.email ?? null,
        display_name: account.displayName?.trim() || account.username,
        password_hash: passwordHash,
        is_admin: account.isAdmin ? 1 : 0,
        email_set_at: account.email ? ctx.clock.now() : null,
        created_at: ctx.clock.now(),
      }),
    )
  } catch (error) {
    // Two registrations raced past the checks above; the unique index decides.
    if (isUniqueViolation(error)) throw conflict('This username or email is taken')
    throw error
  }
}

export async function getUser(ctx: AppContext, id: number, db: Db = ctx.db): Promise<UserRow> {
  const user = await repo.findById(db, id)
  if (!user || user.deleted_at !== null) throw notFound('User not found')
  return user
}

export const findByLogin = (ctx: AppContext, login: string) => repo.findByLogin(ctx.db, login)
export const findById = (ctx: AppContext, id: number) => repo.findById(ctx.db, id)
export const findByUsername = (ctx: AppContext, username: string) => repo.findByUsername(ctx.db, username)
/** The same, inside a transaction. */
export const findByIdIn = (db: Db, id: number) => repo.findById(db, id)
export type UserFilter = repo.UserFilter
export const listUsers = (ctx: AppContext, filter: UserFilter, page: number, perPage: number) =>
  repo.listUsers(ctx.db, filter, ctx.clock.now(), page, perPage)

/** Sets fields on a user inside the caller's transaction; 404 when the user does not exist. */
export async function updateUser(db: Db, id: number, changes: Parameters<typeof repo.updateUser>[2]) {
  const user = await repo.updateUser(db, id, changes)
  if (!user) throw notFound('User not found')
  return user
}

/**
 * Records that the user was active now (session opened or used). The first time on a UTC day it
 * also counts the user among that day's active users: the conditional update lets only one of
 * two concurrent touches count them.
 */
export async function touchActivity(db: Db, userId: number, now: number, previous: number | null): Promise<void> {
  if (previous === null || previous < dayStart(now)) {
    if (await repo.touchFirstToday(db, userId, now, dayStart(now))) return bumpDaily(db, dayOf(now), 'active_users')
  }
  await repo.updateUser(db, userId, { last_activity: now })
}

/** Marks a user offline now (logout). */
export async function markOffline(ctx: AppContext, userId: number): Promise<void> {
  await repo.updateUser(ctx.db, userId, { is_online: 0, last_seen: ctx.clock.now() })
}

/** Creates the admin account, or makes an existing one admin with this password. */
export async function ensureAdmin(ctx: AppContext, username: string, password: string): Promise<UserRow> {
  const existing = await repo.findByLogin(ctx.db, username)
  if (!existing) return createUser(ctx, { username, password, isAdmin: true })
  const passwordMatches = await verifyPassword(existing.password_hash, password)
  return updateUser(ctx.db, existing.id, {
    is_admin: 1,
    is_active: 1,
    ...(passwordMatches ? {} : { password_hash: await hashPassword(password) }),
  })
}

/**
 * A bot's account inside the caller's transaction (bots/service.ts): is_bot, no password, so
 * nobody signs in as it. 409 when the username is reserved or taken (the unique index decides a race).
 */
export async function insertBotAccount(db: Db, bot: { username: string; displayName: string; bio: string; now: number }): Promise<UserRow> {
  if (RESERVED_USERNAMES.has(bot.username.toLowerCase())) throw conflict('This username is reserved')
  if (await repo.isTaken(db, 'username', bot.username)) throw conflict('This username is taken')
  return repo.insertUser(db, {
    username: bot.username,
    email: null,
    display_name: bot.displayName,
    password_hash: null,
    bio: bot.bio,
    is_bot: 1,
    created_at: bot.now,
  })
}

/** Whether a username may be given to a new account: not reserved, not taken (case-insensitively). */
export async function isUsernameFree(db: Db, username: string): Promise<boolean> {
  return !RESERVED_USERNAMES.has(username.toLowerCase()) && !(await repo.isTaken(db, 'username', username))
}

/** Whether an email belongs to an account (case-insensitively). */
export const isEmailTaken = (db: Db, email: string) => repo.isTaken(db, 'email', email)

/**
 * An account opened by an external identity provider (auth/oauth.ts), inside the caller's
 * transaction: no password. 409 when the username is reserved or taken (the unique index decides a race).
 */
export async function insertExternalAccount(
  db: Db,
  account: { username: string; email: string | null; emailVerified: boolean; displayName: string; now: number },
): Promise<UserRow> {
  if (!(await isUsernameFree(db, account.username))) throw conflict('This username is taken')
  try {
    return await repo.insertUser(db, {
      username: account.username,
      email: account.email,
      email_verified: account.emailVerified ? 1 : 0,
      display_name: account.displayName,
      password_hash: null,
      created_at: account.now,
    })
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('This username or email is taken')
    throw error
  }
}

/**
 * Who has an email address now: nobody (`free`), an account that confirmed it (`confirmed`), or
 * one that has not yet (`unconfirmed`). An unconfirmed address set more than
 * UNCONFIRMED_EMAIL_TTL_DAYS ago has lapsed: it is taken off its account here, and the address is
 * free. `exceptUserId`'s own address counts as free.
 */
export async function emailStanding(ctx: AppContext, email: string, exceptUserId?: number): Promise<'free' | 'unconfirmed' | 'confirmed'> {
  const holder = await repo.findByEmail(ctx.db, email)
  if (!holder || holder.id === exceptUserId) return 'free'
  if (holder.email_verified === 1) return 'confirmed'
  const lapsedBefore = ctx.clock.now() - ctx.config.unconfirmedEmailTtlDays * 86_400_000
  if ((holder.email_set_at ?? holder.created_at) < lapsedBefore) {
    await repo.dropUnconfirmedEmail(ctx.db, email, lapsedBefore)
    // another account may have confirmed or set it meanwhile
    return (await repo.findByEmail(ctx.db, email)) ? 'unconfirmed' : 'free'
  }
  return 'unconfirmed'
}

/** Takes an unconfirmed address off whichever account has it, inside the caller's transaction (its owner confirmed it). */
export const dropUnconfirmedEmail = (db: Db, email: string) => repo.dropUnconfirmedEmail(db, email)

/**
 * Soft-deletes an account inside the caller's transaction: deleted_at is set, every personal field
 * erased (email, phone, avatar, bio, display name, password hash, two-factor secrets, birthday,
 * status, link), the username replaced by a placeholder and the old one held back until
 * `releaseUsernameAt` (null: released at once). False when it was deleted already.
 */
export async function eraseAccount(db: Db, user: UserRow, now: number, releaseUsernameAt: number | null): Promise<boolean> {
  const erased = await repo.eraseRow(db, user.id, now)
  if (!erased) return false
  if (releaseUsernameAt !== null) await repo.reserveUsername(db, user.username, user.id, releaseUsernameAt)
  return true
}
