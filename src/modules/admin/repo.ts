import type { Db } from '../../db/database.js'
import { platformAdmin } from '../../policies/accounts.js'

export function insertModLog(
  db: Db,
  entry: { admin_id: number; action: string; target_id: number | null; details: unknown; created_at: number },
) {
  return db
    .insertInto('mod_logs')
    .values({ ...entry, details: entry.details === undefined ? null : JSON.stringify(entry.details) })
    .execute()
}

export interface ModLogFilter {
  adminId?: number
  action?: string
  targetId?: number
}

export async function listModLogs(db: Db, page: number, perPage: number, filter: ModLogFilter = {}) {
  const filtered = <Q extends { where: (...args: any[]) => Q }>(query: Q) => {
    let q = query
    if (filter.adminId !== undefined) q = q.where('m.admin_id', '=', filter.adminId)
    if (filter.action !== undefined) q = q.where('m.action', '=', filter.action)
    if (filter.targetId !== undefined) q = q.where('m.target_id', '=', filter.targetId)
    return q
  }
  const [rows, count] = await Promise.all([
    filtered(db.selectFrom('mod_logs as m'))
      .leftJoin('users as a', 'a.id', 'm.admin_id')
      .select(['m.id', 'm.admin_id', 'a.username as admin_username', 'm.action', 'm.target_id', 'm.details', 'm.created_at'])
      .orderBy('m.id', 'desc')
      .limit(perPage)
      .offset((page - 1) * perPage)
      .execute(),
    filtered(db.selectFrom('mod_logs as m')).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

/** Locks the active admins' rows (PostgreSQL) so concurrent demotions see each other. */
export async function lockActiveAdmins(db: Db) {
  await db.selectFrom('users').select('id').where(platformAdmin('users')).forUpdate().execute()
}

/** The reports naming a user: how many in all and how many wait (reports_reported_user). */
export async function reportsAgainst(db: Db, userId: number) {
  const rows = await db
    .selectFrom('reports')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('reported_user_id', '=', userId)
    .groupBy('status')
    .execute()
  let total = 0
  let pending = 0
  for (const row of rows) {
    total += Number(row.n)
    if (row.status === 'pending') pending += Number(row.n)
  }
  return { total, pending }
}
