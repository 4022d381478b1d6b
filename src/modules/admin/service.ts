/**
 * Account moderation. Every action writes its ModLog row in the same transaction as the change
 * (docs/architecture.md); a ban deactivates the user and every one of their sessions at once.
 */
import type { AppContext } from '../../context.js'
import { fromJson } from '../../db/json.js'
import type { UserRow } from '../../db/tables.js'
import { forbidden } from '../../http/errors.js'
import { iso } from '../../lib/time.js'
import { CLOSE } from '../../realtime/close-codes.js'
import * as sessions from '../sessions/service.js'
import { presentAdminUser } from '../users/present.js'
import * as users from '../users/service.js'
import * as repo from './repo.js'

export async function listUsers(ctx: AppContext, q: string | undefined, page: number, perPage: number) {
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
  const user = await ctx.db.transaction().execute(async (trx) => {
    const updated = await users.updateUser(trx, targetId, change)
    if (alsoRevokeSessions) await sessions.revokeAllSessions(trx, targetId)
    await repo.insertModLog(trx, { admin_id: admin.id, action, target_id: targetId, details, created_at: ctx.clock.now() })
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

export async function listModLog(ctx: AppContext, page: number, perPage: number) {
  const { rows, total } = await repo.listModLogs(ctx.db, page, perPage)
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
