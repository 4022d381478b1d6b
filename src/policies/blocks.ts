/**
 * Blocks. A block is one way (`blocker` blocked `blocked`); what it stops depends on the
 * direction: a blocked user may not write to, call or see the stories of the one who blocked
 * them; presence and search are hidden both ways.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely'
import type { Db } from '../db/database.js'
import { operand, type Operand } from './sql.js'

/** Whether `blocker` has blocked `blocked`. */
export const blockedBy = (blocker: Operand, blocked: Operand): RawBuilder<SqlBool> =>
  sql<SqlBool>`exists (select 1 from blocked_users bk where bk.user_id = ${operand(blocker)} and bk.blocked_user_id = ${operand(blocked)})`

/** Whether either of the two has blocked the other. */
export const blockedEitherWay = (a: Operand, b: Operand): RawBuilder<SqlBool> => sql<SqlBool>`(${blockedBy(a, b)} or ${blockedBy(b, a)})`

/** `blockedBy`, asked of the database for two users (a primary-key lookup). */
export async function hasBlocked(db: Db, blocker: number, blocked: number): Promise<boolean> {
  const row = await db.selectNoFrom(blockedBy(blocker, blocked).as('hit')).executeTakeFirstOrThrow()
  return Boolean(row.hit)
}

/** Everyone on either side of a block with `userId` (both directions are indexed). */
export async function blockedAround(db: Db, userId: number): Promise<Set<number>> {
  const rows = await db
    .selectFrom('blocked_users')
    .select(['user_id', 'blocked_user_id'])
    .where((eb) => eb.or([eb('user_id', '=', userId), eb('blocked_user_id', '=', userId)]))
    .execute()
  return new Set(rows.map((r) => (r.user_id === userId ? r.blocked_user_id : r.user_id)))
}

/** `blockedEitherWay`, asked of the database for two users. */
export async function isBlockedEitherWay(db: Db, a: number, b: number): Promise<boolean> {
  const row = await db.selectNoFrom(blockedEitherWay(a, b).as('hit')).executeTakeFirstOrThrow()
  return Boolean(row.hit)
}
