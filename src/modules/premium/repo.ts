import type { Insertable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { PremiumOrdersTable } from '../../db/tables.js'

/** The user's premium expiry, with their row locked (PostgreSQL) so grants to one user take turns. */
export async function lockExpiry(db: Db, userId: number): Promise<number | null> {
  await db.updateTable('users').set((eb) => ({ premium_expires_at: eb.ref('premium_expires_at') })).where('id', '=', userId).execute()
  const row = await db.selectFrom('users').select('premium_expires_at').where('id', '=', userId).executeTakeFirstOrThrow()
  return row.premium_expires_at
}

export async function setExpiry(db: Db, userId: number, until: number) {
  await db.updateTable('users').set({ premium_expires_at: until }).where('id', '=', userId).execute()
}

export function insertOrder(db: Db, row: Insertable<PremiumOrdersTable>) {
  return db.insertInto('premium_orders').values(row).returningAll().executeTakeFirstOrThrow()
}

export function ordersOf(db: Db, userId: number) {
  return db.selectFrom('premium_orders').selectAll().where('user_id', '=', userId).orderBy('id', 'desc').execute()
}
