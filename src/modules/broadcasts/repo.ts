import type { Db } from '../../db/database.js'
import type { BroadcastRow } from '../../db/tables.js'
import { paged } from '../../db/page.js'

/** Who a broadcast reaches: active accounts other than the system one, up to `lastUserId`. */
function recipients(db: Db, systemId: number, lastUserId: number) {
  return db
    .selectFrom('users')
    .where('is_active', '=', 1)
    .where('deleted_at', 'is', null)
    .where('id', '<>', systemId)
    .where('id', '<=', lastUserId)
}

export async function countRecipients(db: Db, systemId: number, lastUserId: number): Promise<number> {
  const row = await recipients(db, systemId, lastUserId)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The next recipients after `afterId`, in id order (the primary key). */
export async function nextRecipients(db: Db, systemId: number, lastUserId: number, afterId: number, limit: number): Promise<number[]> {
  const rows = await recipients(db, systemId, lastUserId).select('id').where('id', '>', afterId).orderBy('id').limit(limit).execute()
  return rows.map((r) => r.id)
}

export async function maxUserId(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.max<number>('id').as('id'))
    .executeTakeFirst()
  return Number(row?.id ?? 0)
}

export function insert(db: Db, values: { admin_id: number; content: string; total: number; last_user_id: number; created_at: number }) {
  return db
    .insertInto('broadcasts')
    .values({ ...values, status: 'queued' })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function find(db: Db, id: number): Promise<BroadcastRow | undefined> {
  return db.selectFrom('broadcasts').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The oldest broadcast not yet finished (broadcasts_status). */
export function nextUnfinished(db: Db): Promise<BroadcastRow | undefined> {
  return db.selectFrom('broadcasts').selectAll().where('status', 'in', ['running', 'queued']).orderBy('id').limit(1).executeTakeFirst()
}

export async function list(db: Db, page: number, perPage: number) {
  const [rows, count] = await Promise.all([
    db.selectFrom('broadcasts').selectAll().orderBy('id', 'desc').$call(paged(page, perPage)).execute(),
    db
      .selectFrom('broadcasts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

export async function markRunning(db: Db, id: number, now: number) {
  await db
    .updateTable('broadcasts')
    .set({ status: 'running', started_at: now })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .execute()
}

/** Records a batch: `sent` more, the cursor moved on. */
export async function advance(db: Db, id: number, sent: number, cursor: number) {
  await db
    .updateTable('broadcasts')
    .set((eb) => ({ sent: eb('sent', '+', sent), cursor_user_id: cursor }))
    .where('id', '=', id)
    .execute()
}

export async function finish(db: Db, id: number, now: number) {
  await db.updateTable('broadcasts').set({ status: 'done', finished_at: now }).where('id', '=', id).execute()
}
