import type { Db } from '../../db/database.js'
import { platformAdmin } from '../../policies/accounts.js'

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
