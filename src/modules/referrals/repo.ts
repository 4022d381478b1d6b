import type { Db } from '../../db/database.js'

export async function insert(db: Db, inviterId: number, invitedId: number, now: number) {
  await db.insertInto('referrals').values({ inviter_id: inviterId, invited_user_id: invitedId, created_at: now }).execute()
}

export async function invitedCount(db: Db, inviterId: number): Promise<number> {
  const row = await db
    .selectFrom('referrals')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('inviter_id', '=', inviterId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function inviterOf(db: Db, invitedId: number): Promise<number | null> {
  const row = await db.selectFrom('referrals').select('inviter_id').where('invited_user_id', '=', invitedId).executeTakeFirst()
  return row?.inviter_id ?? null
}

/** Records when the user first had their link (later calls keep the first time). */
export async function markShared(db: Db, userId: number, now: number) {
  await db
    .insertInto('referral_shares')
    .values({ user_id: userId, shared_at: now })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute()
}

export async function sharedAt(db: Db, userId: number): Promise<number | null> {
  const row = await db.selectFrom('referral_shares').select('shared_at').where('user_id', '=', userId).executeTakeFirst()
  return row ? Number(row.shared_at) : null
}

/** How many users named this inviter since `since`. */
export async function invitedSince(db: Db, inviterId: number, since: number): Promise<number> {
  const row = await db
    .selectFrom('referrals')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('inviter_id', '=', inviterId)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
