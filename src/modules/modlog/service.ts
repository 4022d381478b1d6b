/**
 * The moderation log: every moderation action, in any module, writes its row here in the same
 * transaction as the change it records; admins read it newest first.
 */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import { fromJson } from '../../db/json.js'
import type { UserRow } from '../../db/tables.js'
import { iso } from '../../lib/time.js'
import { assertPlatformAdmin } from '../../policies/accounts.js'
import * as repo from './repo.js'

/** Writes a ModLog row inside the caller's transaction (every moderation action, in any module, records itself here). */
export async function recordModeration(db: Db, admin: UserRow, action: string, targetId: number | null, details: unknown, now: number) {
  assertPlatformAdmin(admin)
  await repo.insertModLog(db, { admin_id: admin.id, action, target_id: targetId, details, created_at: now })
}

export async function listModLog(ctx: AppContext, admin: UserRow, page: number, perPage: number, filter: repo.ModLogFilter = {}) {
  assertPlatformAdmin(admin)
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
