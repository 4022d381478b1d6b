import type { Insertable } from 'kysely'
import type SQLite from 'better-sqlite3'
import type { Db } from '../../db/database.js'
import { statement } from '../../db/sqlite-hot.js'
import type { UserSessionsTable } from '../../db/tables.js'

export function insertSession(db: Db, session: Omit<Insertable<UserSessionsTable>, 'last_activity' | 'is_active'>) {
  return db
    .insertInto('user_sessions')
    .values({ ...session, last_activity: session.created_at })
    .returning(['id'])
    .executeTakeFirstOrThrow()
}

/** The session and its user, in one round trip, by token hash. */
export function findByTokenHash(db: Db, tokenHash: string) {
  return db
    .selectFrom('user_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .selectAll('u')
    .select([
      's.id as session_id',
      's.is_active as session_is_active',
      's.last_activity as session_last_activity',
    ])
    .where('s.token_hash', '=', tokenHash)
    .executeTakeFirst()
}

const BY_TOKEN_HASH = `select u.*, s.id as session_id, s.is_active as session_is_active, s.last_activity as session_last_activity
  from user_sessions s join users u on u.id = s.user_id where s.token_hash = ?`

/**
 * findByTokenHash on SQLite's hot path: every authenticated request runs it, synchronously on the
 * query-only connection (committed sessions only, no wait for the main connection).
 */
export function findByTokenHashHot(reader: SQLite.Database, tokenHash: string) {
  return statement(reader, BY_TOKEN_HASH).get(tokenHash) as SessionWithUser | undefined
}
export type SessionWithUser = NonNullable<Awaited<ReturnType<typeof findByTokenHash>>>

/** Bumps last_activity of a session (called at most once a minute per session). */
export async function touch(db: Db, sessionId: number, now: number) {
  await db.updateTable('user_sessions').set({ last_activity: now }).where('id', '=', sessionId).execute()
}

/** Active, unexpired sessions of a user, most recently used first. */
export async function listActive(db: Db, userId: number, notBefore: number, page: number, perPage: number) {
  const base = db
    .selectFrom('user_sessions')
    .where('user_id', '=', userId)
    .where('is_active', '=', 1)
    .where('last_activity', '>', notBefore)
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('last_activity', 'desc')
      .orderBy('id', 'desc')
      .limit(perPage)
      .offset((page - 1) * perPage)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

/** Deactivates one session of a user; returns whether an active one was found. */
export async function deactivate(db: Db, userId: number, sessionId: number): Promise<boolean> {
  const result = await db
    .updateTable('user_sessions')
    .set({ is_active: 0 })
    .where('id', '=', sessionId)
    .where('user_id', '=', userId)
    .where('is_active', '=', 1)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function deactivateAllOfUser(db: Db, userId: number): Promise<number> {
  const result = await db
    .updateTable('user_sessions')
    .set({ is_active: 0 })
    .where('user_id', '=', userId)
    .where('is_active', '=', 1)
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}
