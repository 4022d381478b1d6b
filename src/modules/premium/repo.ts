import { sql, type Insertable, type Updateable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { PremiumOrdersTable, PremiumPromosTable, PremiumSubscriptionsTable } from '../../db/tables.js'
import { paged } from '../../db/page.js'

/** The user's premium expiry, with their row locked (PostgreSQL) so grants to one user take turns. */
export async function lockExpiry(db: Db, userId: number): Promise<number | null> {
  await db
    .updateTable('users')
    .set((eb) => ({ premium_expires_at: eb.ref('premium_expires_at') }))
    .where('id', '=', userId)
    .execute()
  const row = await db.selectFrom('users').select('premium_expires_at').where('id', '=', userId).executeTakeFirstOrThrow()
  return row.premium_expires_at
}

export async function setExpiry(db: Db, userId: number, until: number) {
  await db.updateTable('users').set({ premium_expires_at: until }).where('id', '=', userId).execute()
}

// ---------------------------------------------------------------- orders

export function insertOrder(db: Db, row: Insertable<PremiumOrdersTable>) {
  return db.insertInto('premium_orders').values(row).returningAll().executeTakeFirstOrThrow()
}

export function findOrder(db: Db, id: number) {
  return db.selectFrom('premium_orders').selectAll().where('id', '=', id).executeTakeFirst()
}

export function findOrderByKey(db: Db, userId: number, key: string) {
  return db.selectFrom('premium_orders').selectAll().where('user_id', '=', userId).where('idempotency_key', '=', key).executeTakeFirst()
}

/** Settles a pending order (paid, failed); undefined when it is no longer pending (settled once only). */
export function settleOrder(db: Db, id: number, changes: Updateable<PremiumOrdersTable>) {
  return db
    .updateTable('premium_orders')
    .set(changes)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst()
}

/** A paid order becomes refunded; undefined when it was not paid (refunded once only). */
export function markRefunded(db: Db, id: number) {
  return db
    .updateTable('premium_orders')
    .set({ status: 'refunded' })
    .where('id', '=', id)
    .where('status', '=', 'paid')
    .returningAll()
    .executeTakeFirst()
}

/** Where paying the order took the user's premium. */
export function setPremiumUntil(db: Db, id: number, until: number) {
  return db.updateTable('premium_orders').set({ premium_until: until }).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
}

export function ordersOf(db: Db, userId: number) {
  return db.selectFrom('premium_orders').selectAll().where('user_id', '=', userId).orderBy('id', 'desc').limit(500).execute()
}

/** A page of everyone's orders, newest first, optionally of one status (the admin area). */
export async function listOrders(db: Db, status: string | undefined, page: number, perPage: number) {
  let query = db.selectFrom('premium_orders')
  if (status) query = query.where('status', '=', status as PremiumOrdersTable['status'])
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('id', 'desc').$call(paged(page, perPage)).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

// ---------------------------------------------------------------- subscriptions

export function findSubscription(db: Db, userId: number) {
  return db.selectFrom('premium_subscriptions').selectAll().where('user_id', '=', userId).executeTakeFirst()
}

export async function saveSubscription(db: Db, row: Insertable<PremiumSubscriptionsTable>) {
  const { user_id: _, ...changes } = row
  await db
    .insertInto('premium_subscriptions')
    .values(row)
    .onConflict((oc) => oc.column('user_id').doUpdateSet(changes))
    .execute()
}

/** Turns auto-renew off; false when it was not on. */
export async function stopRenewing(db: Db, userId: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('premium_subscriptions')
    .set({ auto_renew: 0, updated_at: now })
    .where('user_id', '=', userId)
    .where('auto_renew', '=', 1)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Subscriptions renewing whose premium ends by `before`, without a renewal already pending. */
export function dueRenewals(db: Db, before: number, limit: number) {
  return db
    .selectFrom('premium_subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.user_id', 's.plan', 's.payment_method', 'u.premium_expires_at'])
    .where('s.auto_renew', '=', 1)
    .where('u.premium_expires_at', '<=', before)
    .where('u.is_active', '=', 1)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('premium_orders as o')
            .select('o.id')
            .whereRef('o.user_id', '=', 's.user_id')
            .where('o.kind', '=', 'renewal')
            .where('o.status', '=', 'pending'),
        ),
      ),
    )
    .orderBy('u.premium_expires_at')
    .limit(limit)
    .execute()
}

// ---------------------------------------------------------------- promo codes

export function insertPromo(db: Db, row: Insertable<PremiumPromosTable>) {
  return db.insertInto('premium_promos').values(row).returningAll().executeTakeFirstOrThrow()
}

export function findPromo(db: Db, id: number) {
  return db.selectFrom('premium_promos').selectAll().where('id', '=', id).executeTakeFirst()
}

export function findPromoByCode(db: Db, code: string) {
  return db.selectFrom('premium_promos').selectAll().where(sql`lower(code)`, '=', code.toLowerCase()).executeTakeFirst()
}

export async function listPromos(db: Db, page: number, perPage: number) {
  const [rows, count] = await Promise.all([
    db.selectFrom('premium_promos').selectAll().orderBy('id', 'desc').$call(paged(page, perPage)).execute(),
    db
      .selectFrom('premium_promos')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

export function setPromoActive(db: Db, id: number, active: boolean) {
  return db
    .updateTable('premium_promos')
    .set({ is_active: active ? 1 : 0 })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
}

/**
 * Takes one use of the code, atomically: the row changes only while it is active, unexpired and
 * under max_uses, so concurrent redemptions can never take more than max_uses between them.
 */
export async function claimPromo(db: Db, id: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('premium_promos')
    .set((eb) => ({ used_count: eb('used_count', '+', 1) }))
    .where('id', '=', id)
    .where('is_active', '=', 1)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => eb('used_count', '<', eb.ref('max_uses')))
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** Gives a use back (its payment failed). */
export async function releasePromo(db: Db, id: number) {
  await db
    .updateTable('premium_promos')
    .set((eb) => ({ used_count: eb('used_count', '-', 1) }))
    .where('id', '=', id)
    .where('used_count', '>', 0)
    .execute()
}

export async function insertRedemption(db: Db, promoId: number, userId: number, orderId: number | null, now: number) {
  await db
    .insertInto('premium_promo_redemptions')
    .values({ promo_id: promoId, user_id: userId, order_id: orderId, created_at: now })
    .execute()
}

export async function deleteRedemption(db: Db, promoId: number, userId: number) {
  await db.deleteFrom('premium_promo_redemptions').where('promo_id', '=', promoId).where('user_id', '=', userId).execute()
}

export async function hasRedeemed(db: Db, promoId: number, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('premium_promo_redemptions')
    .select('promo_id')
    .where('promo_id', '=', promoId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return row !== undefined
}
