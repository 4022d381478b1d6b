import type { Db } from '../../db/database.js'
import { paged } from '../../db/page.js'

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
  // biome-ignore lint/suspicious/noExplicitAny: one filter for the page's and the count's builders, whose where() types differ
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
      .$call(paged(page, perPage))
      .execute(),
    filtered(db.selectFrom('mod_logs as m'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}
