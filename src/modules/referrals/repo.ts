import type { Db } from '../../db/database.js'

export async function insert(db: Db, inviterId: number, invitedId: number, now: number) {
  await db.insertInto('referrals').values({ inviter_id: inviterId, invited_user_id: invitedId, created_at: now }).execute()
}

export async function invitedCount(db: Db, inviterId: number): Promise<number> {
  const row = await db.selectFrom('referrals').select((eb) => eb.fn.countAll<number>().as('n')).where('inviter_id', '=', inviterId).executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function inviterOf(db: Db, invitedId: number): Promise<number | null> {
  const row = await db.selectFrom('referrals').select('inviter_id').where('invited_user_id', '=', invitedId).executeTakeFirst()
  return row?.inviter_id ?? null
}
