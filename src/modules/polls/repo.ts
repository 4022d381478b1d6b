import type { Insertable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { PollRow, PollsTable } from '../../db/tables.js'

export function insert(db: Db, row: Insertable<PollsTable>): Promise<PollRow> {
  return db.insertInto('polls').values(row).returningAll().executeTakeFirstOrThrow()
}

/** The poll with its message (the poll is gone with it when the message is deleted for everyone). */
export function find(db: Db, id: number) {
  return db
    .selectFrom('polls as p')
    .innerJoin('messages as m', 'm.poll_id', 'p.id')
    .selectAll('p')
    .select(['m.id as message_id', 'm.deleted_for_all'])
    .where('p.id', '=', id)
    .executeTakeFirst()
}
export type PollWithMessage = NonNullable<Awaited<ReturnType<typeof find>>>

/** Locks the poll's row for a vote or a close (PostgreSQL), so votes and the close take turns. */
export async function lock(db: Db, id: number) {
  await db
    .updateTable('polls')
    .set((eb) => ({ is_multiple: eb.ref('is_multiple') }))
    .where('id', '=', id)
    .execute()
}

export async function close(db: Db, id: number, now: number) {
  await db.updateTable('polls').set({ closed_at: now }).where('id', '=', id).where('closed_at', 'is', null).execute()
}

/** Replaces the user's votes with these options. */
export async function setVotes(db: Db, pollId: number, userId: number, options: readonly number[], now: number) {
  await db.deleteFrom('poll_votes').where('poll_id', '=', pollId).where('user_id', '=', userId).execute()
  if (options.length > 0) {
    await db
      .insertInto('poll_votes')
      .values(options.map((option) => ({ poll_id: pollId, user_id: userId, option_index: option, created_at: now })))
      .execute()
  }
}

export async function counts(db: Db, pollId: number) {
  const [perOption, voters] = await Promise.all([
    db
      .selectFrom('poll_votes')
      .select(['option_index', (eb) => eb.fn.countAll<number>().as('n')])
      .where('poll_id', '=', pollId)
      .groupBy('option_index')
      .execute(),
    db
      .selectFrom('poll_votes')
      .select((eb) => eb.fn.count<number>('user_id').distinct().as('n'))
      .where('poll_id', '=', pollId)
      .executeTakeFirstOrThrow(),
  ])
  return { perOption: new Map(perOption.map((r) => [r.option_index, Number(r.n)])), voters: Number(voters.n) }
}

export async function myVotes(db: Db, pollId: number, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('poll_votes')
    .select('option_index')
    .where('poll_id', '=', pollId)
    .where('user_id', '=', userId)
    .orderBy('option_index')
    .execute()
  return rows.map((r) => r.option_index)
}

/** The newest `limit` voters of one option. */
export function voters(db: Db, pollId: number, option: number, limit: number) {
  return db
    .selectFrom('poll_votes as v')
    .innerJoin('users as u', 'u.id', 'v.user_id')
    .select(['u.id as user_id', 'u.username', 'u.display_name'])
    .where('v.poll_id', '=', pollId)
    .where('v.option_index', '=', option)
    .orderBy('v.created_at', 'desc')
    .orderBy('v.user_id', 'desc')
    .limit(limit)
    .execute()
}
