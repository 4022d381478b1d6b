import type { Db } from '../../db/database.js'
import { paged } from '../../db/page.js'

export async function block(db: Db, userId: number, blockedId: number, reason: string | null, now: number) {
  await db
    .insertInto('blocked_users')
    .values({ user_id: userId, blocked_user_id: blockedId, reason, created_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'blocked_user_id']).doNothing())
    .execute()
}

export async function unblock(db: Db, userId: number, blockedId: number) {
  await db.deleteFrom('blocked_users').where('user_id', '=', userId).where('blocked_user_id', '=', blockedId).execute()
}

export async function listBlocked(db: Db, userId: number, page: number, perPage: number) {
  const [rows, count] = await Promise.all([
    db
      .selectFrom('blocked_users as b')
      .innerJoin('users as u', 'u.id', 'b.blocked_user_id')
      .selectAll('u')
      .where('b.user_id', '=', userId)
      .orderBy('b.created_at', 'desc')
      .orderBy('u.id', 'desc')
      .$call(paged(page, perPage))
      .execute(),
    db
      .selectFrom('blocked_users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}
