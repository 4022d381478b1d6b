/**
 * Account moderation. Every action writes its ModLog row in the same transaction as the change
 * (docs/architecture.md); a ban deactivates the user and every one of their sessions at once.
 * Each action checks that its caller is a platform admin itself: the route hook (requireAdmin) is
 * not the only guard, so a future route, job or CLI command cannot call one unchecked.
 */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import { fromJson } from '../../db/json.js'
import type { UserRow } from '../../db/tables.js'
import { forbidden } from '../../http/errors.js'
import { iso } from '../../lib/time.js'
import { CLOSE } from '../../realtime/close-codes.js'
import * as sessions from '../sessions/service.js'
import { presentAdminUser } from '../users/present.js'
import * as users from '../users/service.js'
import * as repo from './repo.js'

/** 403 unless `user` is a platform admin (an active account: a banned one has no session to get here). */
export function assertAdmin(user: UserRow) {
  if (user.is_admin !== 1 || user.is_active !== 1) throw forbidden('Admin access required')
}

/** Writes a ModLog row inside the caller's transaction (every moderation action, in any module, records itself here). */
export async function recordModeration(db: Db, admin: UserRow, action: string, targetId: number | null, details: unknown, now: number) {
  assertAdmin(admin)
  await repo.insertModLog(db, { admin_id: admin.id, action, target_id: targetId, details, created_at: now })
}

export async function listUsers(ctx: AppContext, admin: UserRow, q: string | undefined, page: number, perPage: number) {
  assertAdmin(admin)
  const { rows, total } = await users.listUsers(ctx, q, page, perPage)
  const now = ctx.clock.now()
  return { items: rows.map((u) => presentAdminUser(u, now)), total }
}

async function moderate(
  ctx: AppContext,
  admin: UserRow,
  targetId: number,
  action: string,
  details: unknown,
  change: Parameters<typeof users.updateUser>[2],
  alsoRevokeSessions = false,
) {
  assertAdmin(admin)
  const user = await ctx.db.transaction().execute(async (trx) => {
    const updated = await users.updateUser(trx, targetId, change)
    if (alsoRevokeSessions) await sessions.revokeAllSessions(trx, targetId)
    await recordModeration(trx, admin, action, targetId, details, ctx.clock.now())
    return updated
  })
  if (alsoRevokeSessions) sessions.closeSockets(ctx, targetId, undefined, CLOSE.accountSuspended)
  ctx.log.info({ adminId: admin.id, action, targetId }, 'moderation action')
  return presentAdminUser(user, ctx.clock.now())
}

export async function ban(ctx: AppContext, admin: UserRow, targetId: number, reason: string | undefined) {
  if (targetId === admin.id) throw forbidden('You cannot ban yourself')
  return moderate(ctx, admin, targetId, 'user.ban', { reason: reason ?? null }, { is_active: 0, is_online: 0 }, true)
}

export async function unban(ctx: AppContext, admin: UserRow, targetId: number) {
  return moderate(ctx, admin, targetId, 'user.unban', null, { is_active: 1 })
}

export async function setRole(ctx: AppContext, admin: UserRow, targetId: number, isAdmin: boolean) {
  if (targetId === admin.id && !isAdmin) throw forbidden('You cannot revoke your own admin role')
  return moderate(ctx, admin, targetId, isAdmin ? 'user.grant_admin' : 'user.revoke_admin', { is_admin: isAdmin }, {
    is_admin: isAdmin ? 1 : 0,
  })
}

export async function listModLog(ctx: AppContext, admin: UserRow, page: number, perPage: number, filter: repo.ModLogFilter = {}) {
  assertAdmin(admin)
  const { rows, total } = await repo.listModLogs(ctx.db, page, perPage, filter)
  const items = rows.map((r) => ({
    id: r.id,
    admin_id: r.admin_id,
    admin_username: r.admin_username,
    action: r.action,
    target_id: r.target_id,
    details: fromJson<Record<string, unknown>>(r.details),
    created_at: iso(r.created_at),
  }))
  return { items, total }
}
