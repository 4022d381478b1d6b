/**
 * Group and channel membership. Every member has a position (join order); member_buckets counts
 * members per bucket of BUCKET positions, so page N of the member list sums a few hundred bucket
 * counts to find where it starts and then skips fewer than BUCKET rows: the same cost at page 1
 * and at page 10,000 of a 200,000-member group (docs/performance.md), instead of an OFFSET over the list.
 */
import { sql } from 'kysely'
import type { Db } from '../../db/database.js'
import { offsetOf } from '../../db/page.js'

export const BUCKET = 1024

/** Adds a member in the chat's next position; the caller checked they are not one already. */
export async function add(db: Db, chatId: number, userId: number, role: string, now: number): Promise<void> {
  const chat = await db
    .updateTable('chats')
    .set({ join_seq: sql`join_seq + 1`, member_count: sql`member_count + 1` })
    .where('id', '=', chatId)
    .returning(['join_seq', 'message_seq'])
    .executeTakeFirstOrThrow()
  const position = chat.join_seq
  await db
    .insertInto('chat_members')
    // nothing sent before the join counts as unread
    .values({ chat_id: chatId, user_id: userId, role, joined_at: now, read_seq: chat.message_seq, last_activity_at: now, position })
    .execute()
  await db
    .insertInto('member_buckets')
    .values({ chat_id: chatId, bucket: Math.floor(position / BUCKET), members: 1 })
    .onConflict((oc) => oc.columns(['chat_id', 'bucket']).doUpdateSet({ members: sql`member_buckets.members + 1` }))
    .execute()
}

/** Removes a member; whether they were one. */
export async function remove(db: Db, chatId: number, userId: number): Promise<boolean> {
  const gone = await db
    .deleteFrom('chat_members')
    .where('chat_id', '=', chatId)
    .where('user_id', '=', userId)
    .returning('position')
    .executeTakeFirst()
  if (!gone) return false
  await db.updateTable('chats').set({ member_count: sql`member_count - 1` }).where('id', '=', chatId).execute()
  await db
    .updateTable('member_buckets')
    .set({ members: sql`members - 1` })
    .where('chat_id', '=', chatId)
    .where('bucket', '=', Math.floor(gone.position / BUCKET))
    .execute()
  return true
}

export async function roleOf(db: Db, chatId: number, userId: number): Promise<string | null> {
  const row = await db
    .selectFrom('chat_members')
    .select('role')
    .where('chat_id', '=', chatId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return row?.role ?? null
}

export async function setRole(db: Db, chatId: number, userId: number, role: string): Promise<void> {
  await db.updateTable('chat_members').set({ role }).where('chat_id', '=', chatId).where('user_id', '=', userId).execute()
}

const memberColumns = ['m.role', 'm.joined_at', 'm.position'] as const

/** Page `page` of a chat's members in join order, with their user rows. */
export async function page(db: Db, chatId: number, page: number, perPage: number) {
  let skip = offsetOf(page, perPage)
  const buckets = await db
    .selectFrom('member_buckets')
    .select(['bucket', 'members'])
    .where('chat_id', '=', chatId)
    .orderBy('bucket')
    .execute()
  const start = buckets.find((b) => {
    if (skip < b.members) return true
    skip -= b.members
    return false
  })
  if (!start) return []
  let query = db
    .selectFrom('chat_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .selectAll('u')
    .select(memberColumns)
    .where('m.chat_id', '=', chatId)
    .where('m.position', '>=', start.bucket * BUCKET)
    .orderBy('m.position')
    .limit(perPage)
  if (skip > 0) query = query.offset(skip)
  return query.execute()
}

/** The chat's owner and admins (served by chat_members_role), owner first. */
export function staff(db: Db, chatId: number) {
  return db
    .selectFrom('chat_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.username', 'm.role'])
    .where('m.chat_id', '=', chatId)
    .where('m.role', 'in', ['owner', 'admin'])
    .orderBy('m.role', 'desc')
    .orderBy('m.position')
    .execute()
}

/** The longest-standing member with the given role, other than `except` (a leaving owner's heir). */
export function eldest(db: Db, chatId: number, role: string, except: number) {
  return db
    .selectFrom('chat_members')
    .select('user_id')
    .where('chat_id', '=', chatId)
    .where('role', '=', role)
    .where('user_id', '<>', except)
    .orderBy('position')
    .limit(1)
    .executeTakeFirst()
}
