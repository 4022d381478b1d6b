/**
 * Account moderation. Every action writes its ModLog row in the same transaction as the change
 * (docs/architecture.md); a ban deactivates the user and every one of their sessions at once.
 * Each action checks that its caller is a platform admin itself: the route hook (requireAdmin) is
 * not the only guard, so a future route, job or CLI command cannot call one unchecked.
 */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import type { UserRow } from '../../db/tables.js'
import { conflict, notFound } from '../../http/errors.js'
import { isoOrNull } from '../../lib/time.js'
import { CLOSE } from '../../realtime/close-codes.js'
import * as twoFactor from '../auth/index.js'
import { sendMail } from '../mail/index.js'
import * as sessions from '../sessions/index.js'
import { isPremium, presentAdminUser } from '../users/index.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'
import { assertPlatformAdmin as assertAdmin } from '../../policies/accounts.js'
import { recordModeration } from '../modlog/index.js'

export async function listUsers(ctx: AppContext, admin: UserRow, filter: users.UserFilter, page: number, perPage: number) {
  assertAdmin(admin)
  const { rows, total } = await users.listUsers(ctx, filter, page, perPage)
  const now = ctx.clock.now()
  return { items: rows.map((u) => presentAdminUser(u, now)), total }
}

/** One user as a moderator sees them: the admin view plus sessions, reports against them, premium and warnings. */
export async function userDetail(ctx: AppContext, admin: UserRow, targetId: number) {
  assertAdmin(admin)
  const user = await users.getUser(ctx, targetId)
  const now = ctx.clock.now()
  const [sessionList, reports] = await Promise.all([
    sessions.listSessions(ctx, targetId, null, 1, 1),
    repo.reportsAgainst(ctx.db, targetId),
  ])
  return {
    ...presentAdminUser(user, now),
    is_system: user.is_system === 1,
    warnings: user.warnings,
    sessions_count: sessionList.total,
    reports: reports,
    premium: { is_premium: isPremium(user, now), expires_at: isoOrNull(user.premium_expires_at) },
    two_factor_enabled: twoFactor.isTwoFactorEnabled(user),
  }
}

/** The system account is the platform itself: nobody moderates it. */
function assertNotSystem(user: UserRow) {
  if (user.is_system === 1) throw conflict('The system account cannot be moderated')
}

/**
 * Inside the caller's transaction: deactivates the account and ends every session of it. The
 * caller closes its sockets (closeSockets) once the transaction has committed.
 */
export async function suspendIn(db: Db, admin: UserRow, targetId: number): Promise<UserRow> {
  assertAdmin(admin)
  if (targetId === admin.id) throw conflict('You cannot ban yourself')
  const target = await users.findByIdIn(db, targetId)
  if (!target || target.deleted_at !== null) throw notFound('User not found')
  assertNotSystem(target)
  const updated = await users.updateUser(db, targetId, { is_active: 0, is_online: 0 })
  await sessions.revokeAllSessions(db, targetId)
  return updated
}

/** After a suspension has committed: the user's sockets close on every instance. */
export function afterSuspension(ctx: AppContext, targetId: number) {
  sessions.closeSockets(ctx, targetId, undefined, CLOSE.accountSuspended)
}

export async function ban(ctx: AppContext, admin: UserRow, targetId: number, reason: string | undefined) {
  assertAdmin(admin)
  const user = await ctx.db.transaction().execute(async (trx) => {
    const updated = await suspendIn(trx, admin, targetId)
    await recordModeration(trx, admin, 'user.ban', targetId, { reason: reason?.trim() || null }, ctx.clock.now())
    return updated
  })
  afterSuspension(ctx, targetId)
  ctx.log.info({ adminId: admin.id, action: 'user.ban', targetId }, 'moderation action')
  return presentAdminUser(user, ctx.clock.now())
}

export async function unban(ctx: AppContext, admin: UserRow, targetId: number) {
  assertAdmin(admin)
  const user = await ctx.db.transaction().execute(async (trx) => {
    const target = await users.findByIdIn(trx, targetId)
    if (!target || target.deleted_at !== null) throw notFound('User not found')
    assertNotSystem(target)
    const updated = await users.updateUser(trx, targetId, { is_active: 1 })
    await recordModeration(trx, admin, 'user.unban', targetId, null, ctx.clock.now())
    return updated
  })
  ctx.log.info({ adminId: admin.id, action: 'user.unban', targetId }, 'moderation action')
  return presentAdminUser(user, ctx.clock.now())
}

/**
 * Grants or revokes the admin role. An admin cannot revoke their own, and the last active admin
 * cannot be demoted (409). The active admins' rows are locked first on PostgreSQL, so two admins
 * demoting each other at once cannot both succeed (SQLite runs one write transaction at a time).
 */
export async function setRole(ctx: AppContext, admin: UserRow, targetId: number, isAdmin: boolean) {
  assertAdmin(admin)
  if (targetId === admin.id && !isAdmin) throw conflict('You cannot revoke your own admin role')
  const action = isAdmin ? 'user.grant_admin' : 'user.revoke_admin'
  const user = await ctx.db.transaction().execute(async (trx) => {
    if (!isAdmin && ctx.config.dialect === 'postgres') await repo.lockActiveAdmins(trx)
    const target = await users.findByIdIn(trx, targetId)
    if (!target || target.deleted_at !== null) throw notFound('User not found')
    assertNotSystem(target)
    const updated = await users.updateUser(trx, targetId, { is_admin: isAdmin ? 1 : 0 })
    if (!isAdmin && (await users.countActiveAdmins(trx)) === 0) throw conflict('The last admin cannot be demoted')
    await recordModeration(trx, admin, action, targetId, { is_admin: isAdmin }, ctx.clock.now())
    return updated
  })
  ctx.log.info({ adminId: admin.id, action, targetId }, 'moderation action')
  return presentAdminUser(user, ctx.clock.now())
}

/**
 * Turns a user's two-factor off (they lost their device): the secret, a pending setup and the
 * recovery codes go; they sign in with the password alone until they set it up again. 409 when it
 * was not on.
 */
export async function resetTwoFactor(ctx: AppContext, admin: UserRow, targetId: number) {
  assertAdmin(admin)
  const user = await ctx.db.transaction().execute(async (trx) => {
    const target = await users.findByIdIn(trx, targetId)
    if (!target || target.deleted_at !== null) throw notFound('User not found')
    if (!(await twoFactor.resetTwoFactor(trx, targetId))) throw conflict('Two-factor authentication is not on for this user')
    await recordModeration(trx, admin, 'user.2fa_reset', targetId, null, ctx.clock.now())
    return users.findByIdIn(trx, targetId)
  })
  ctx.log.info({ adminId: admin.id, action: 'user.2fa_reset', targetId }, 'moderation action')
  return presentAdminUser(user!, ctx.clock.now())
}

/** Sends a test mail through the configured transport (503 mail_unavailable when it fails); logged once sent. */
export async function sendTestMail(ctx: AppContext, admin: UserRow, to: string) {
  assertAdmin(admin)
  const { messageId } = await sendMail(ctx, {
    to,
    kind: 'test',
    data: { note: `Sent at the request of ${admin.username}. Mail from Tern works.` },
  })
  await recordModeration(ctx.db, admin, 'mail.test', null, { to, message_id: messageId }, ctx.clock.now())
  return { sent: true, message_id: messageId, transport: ctx.config.smtpUrl ? ('smtp' as const) : ('log' as const) }
}
