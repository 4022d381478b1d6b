import type { Db } from '../../db/database.js'
import { blockedBy } from '../../policies/blocks.js'
import { col } from '../../policies/sql.js'
import { paged } from '../../db/page.js'

/** Adds the contact; a second add of the same contact fails on the unique index (409). */
export async function insert(db: Db, ownerId: number, contactId: number, displayName: string | null, now: number) {
  await db
    .insertInto('contacts')
    .values({ owner_id: ownerId, contact_user_id: contactId, display_name: displayName, created_at: now })
    .execute()
  return find(db, ownerId, contactId)
}

export function find(db: Db, ownerId: number, contactId: number) {
  return withUser(db).where('c.owner_id', '=', ownerId).where('c.contact_user_id', '=', contactId).executeTakeFirst()
}

/** Adds those of `contactIds` that are not contacts yet; answers the ones it added. */
export async function insertMissing(db: Db, ownerId: number, contactIds: readonly number[], now: number): Promise<Set<number>> {
  const rows = await db
    .insertInto('contacts')
    .values(contactIds.map((id) => ({ owner_id: ownerId, contact_user_id: id, display_name: null, created_at: now })))
    .onConflict((oc) => oc.columns(['owner_id', 'contact_user_id']).doNothing())
    .returning('contact_user_id')
    .execute()
  return new Set(rows.map((row) => row.contact_user_id))
}

/** These contacts of the owner, by name. */
export function findMany(db: Db, ownerId: number, contactIds: readonly number[]) {
  return withUser(db)
    .where('c.owner_id', '=', ownerId)
    .where('c.contact_user_id', 'in', contactIds)
    .orderBy((eb) => eb.fn.coalesce('c.display_name', 'u.display_name'))
    .orderBy('u.id')
    .execute()
}

export async function remove(db: Db, ownerId: number, contactId: number): Promise<boolean> {
  const result = await db.deleteFrom('contacts').where('owner_id', '=', ownerId).where('contact_user_id', '=', contactId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** Contacts with their users, and the blocks between owner and contact (either way). */
function withUser(db: Db) {
  return db
    .selectFrom('contacts as c')
    .innerJoin('users as u', 'u.id', 'c.contact_user_id')
    .selectAll('u')
    .select([
      'c.display_name as custom_name',
      'c.created_at as added_at',
      blockedBy(col('c.owner_id'), col('c.contact_user_id')).as('blocked_by_me'),
      blockedBy(col('c.contact_user_id'), col('c.owner_id')).as('blocked_by_them'),
    ])
}
export type ContactWithUser = NonNullable<Awaited<ReturnType<typeof find>>>

/** A page of the owner's contacts, by name. */
export async function list(db: Db, ownerId: number, page: number, perPage: number) {
  const [rows, count] = await Promise.all([
    withUser(db)
      .where('c.owner_id', '=', ownerId)
      .orderBy((eb) => eb.fn.coalesce('c.display_name', 'u.display_name'))
      .orderBy('u.id')
      .$call(paged(page, perPage))
      .execute(),
    db
      .selectFrom('contacts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('owner_id', '=', ownerId)
      .executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

/** Whether `ownerId` has `userId` among their contacts (a unique-index lookup). */
export async function has(db: Db, ownerId: number, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('contacts')
    .select('id')
    .where('owner_id', '=', ownerId)
    .where('contact_user_id', '=', userId)
    .executeTakeFirst()
  return row !== undefined
}

/** The people `userId` has as contacts. */
export async function contactIds(db: Db, userId: number): Promise<number[]> {
  const rows = await db.selectFrom('contacts').select('contact_user_id').where('owner_id', '=', userId).execute()
  return rows.map((r) => r.contact_user_id)
}

/** The people who have `userId` as a contact. */
export async function ownersOf(db: Db, userId: number): Promise<number[]> {
  const rows = await db.selectFrom('contacts').select('owner_id').where('contact_user_id', '=', userId).execute()
  return rows.map((r) => r.owner_id)
}

/** How many contacts `userId` has, and how many have them. */
export async function counts(db: Db, userId: number) {
  const [following, followers] = await Promise.all([
    db
      .selectFrom('contacts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('owner_id', '=', userId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('contacts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('contact_user_id', '=', userId)
      .executeTakeFirstOrThrow(),
  ])
  return { following: Number(following.n), followers: Number(followers.n) }
}
