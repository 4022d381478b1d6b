import type { Db } from '../../db/database.js'
import type { CallRow, CallStatus, CallType } from '../../db/tables.js'
import { paged } from '../../db/page.js'

export const LIVE: CallStatus[] = ['ringing', 'answered']

export function find(db: Db, id: number): Promise<CallRow | undefined> {
  return db.selectFrom('calls').selectAll().where('id', '=', id).executeTakeFirst()
}

/** A user's call that is ringing or going on, if any (calls_caller, calls_receiver). */
export async function liveCallOf(db: Db, userId: number): Promise<CallRow | undefined> {
  const [asCaller, asReceiver] = await Promise.all([
    db
      .selectFrom('calls')
      .selectAll()
      .where('caller_id', '=', userId)
      .where('status', 'in', LIVE)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom('calls')
      .selectAll()
      .where('receiver_id', '=', userId)
      .where('status', 'in', LIVE)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst(),
  ])
  return asCaller ?? asReceiver
}

/** Locks both users' rows (PostgreSQL) so two calls cannot start for either of them at once. */
export async function lockUsers(db: Db, ids: number[]) {
  await db.selectFrom('users').select('id').where('id', 'in', ids).orderBy('id').forUpdate().execute()
}

export function insert(db: Db, values: { caller_id: number; receiver_id: number; call_type: CallType; created_at: number }) {
  return db
    .insertInto('calls')
    .values({ ...values, status: 'ringing' })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** A call that never rang: the callee was busy in another call. Recorded as missed for both histories. */
export function insertMissed(db: Db, values: { caller_id: number; receiver_id: number; call_type: CallType; created_at: number }) {
  return db
    .insertInto('calls')
    .values({ ...values, status: 'missed', ended_at: values.created_at, duration: 0 })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Moves a call from `from` to a new state; undefined when it was no longer in `from` (someone else moved it first). */
export function transition(
  db: Db,
  id: number,
  from: CallStatus[],
  changes: { status: CallStatus; answered_at?: number; ended_at?: number; duration?: number },
) {
  return db.updateTable('calls').set(changes).where('id', '=', id).where('status', 'in', from).returningAll().executeTakeFirst()
}

/** Calls still ringing that were placed before `before`, oldest first. */
export function ringingSince(db: Db, before: number, limit: number) {
  return db
    .selectFrom('calls')
    .selectAll()
    .where('status', '=', 'ringing')
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .execute()
}

/** Calls answered before `before` and still going: ended by the safety limit. */
export function answeredSince(db: Db, before: number, limit: number) {
  return db
    .selectFrom('calls')
    .selectAll()
    .where('status', '=', 'answered')
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .execute()
}

/** A page of a user's calls, newest first, with the other party. */
export async function history(db: Db, userId: number, page: number, perPage: number) {
  const mine = db.selectFrom('calls').where((eb) => eb.or([eb('caller_id', '=', userId), eb('receiver_id', '=', userId)]))
  const [rows, count] = await Promise.all([
    mine.selectAll().orderBy('id', 'desc').$call(paged(page, perPage)).execute(),
    mine.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}
