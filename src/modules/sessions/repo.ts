import { sql, type Insertable } from 'kysely'
import type SQLite from 'better-sqlite3'
import type { Db } from '../../db/database.js'
import { statement } from '../../db/sqlite-hot.js'
import type { UserRow, UserSessionsTable } from '../../db/tables.js'
import { paged } from '../../db/page.js'

export function insertSession(db: Db, session: Omit<Insertable<UserSessionsTable>, 'last_activity' | 'is_active'>) {
  return db
    .insertInto('user_sessions')
    .values({ ...session, last_activity: session.created_at })
    .returning(['id'])
    .executeTakeFirstOrThrow()
}

/** A session, by token hash, with its user. */
export interface SessionWithUser {
  sessionId: number
  sessionIsActive: number
  sessionLastActivity: number
  /** 1 when a second factor finished the session's login */
  sessionTwoFactorVerified: number
  user: UserRow
}

/**
 * The sessions of many token hashes, each with its user, in one round trip (PostgreSQL: read for a
 * whole event-loop turn's requests at once, token-lookups.ts). One SQL text whatever the count, so
 * it is prepared once.
 */
export async function findByTokenHashes(db: Db, tokenHashes: string[]): Promise<Map<string, SessionWithUser>> {
  const rows = await db
    .selectFrom('user_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .selectAll('u')
    .select([
      's.token_hash as session_token_hash',
      's.id as session_id',
      's.is_active as session_is_active',
      's.last_activity as session_last_activity',
      's.two_factor_verified as session_two_factor_verified',
    ])
    .where('s.token_hash', '=', sql<string>`any(${tokenHashes}::text[])`)
    .execute()
  const found = new Map<string, SessionWithUser>()
  for (const { session_token_hash, session_id, session_is_active, session_last_activity, session_two_factor_verified, ...user } of rows) {
    found.set(session_token_hash, {
      sessionId: session_id,
      sessionIsActive: session_is_active,
      sessionLastActivity: session_last_activity,
      sessionTwoFactorVerified: session_two_factor_verified,
      user,
    })
  }
  return found
}

const SESSION_BY_TOKEN_HASH = 'select id, user_id, is_active, last_activity, two_factor_verified from user_sessions where token_hash = ?'
const USER_BY_ID = 'select * from users where id = ?'

/**
 * A token hash's session and user on SQLite's hot path: every authenticated request runs it,
 * synchronously on the query-only connection (committed sessions only, no wait for the main
 * connection). Two indexed reads: the user row comes out whole, where splitting it off a joined
 * row (object rest) cost as much as both reads.
 */
export function findByTokenHashHot(reader: SQLite.Database, tokenHash: string): SessionWithUser | undefined {
  const session = statement(reader, SESSION_BY_TOKEN_HASH).get(tokenHash) as
    | { id: number; user_id: number; is_active: number; last_activity: number; two_factor_verified: number }
    | undefined
  if (!session) return undefined
  const user = statement(reader, USER_BY_ID).get(session.user_id) as UserRow | undefined
  if (!user) return undefined
  return {
    sessionId: session.id,
    sessionIsActive: session.is_active,
    sessionLastActivity: session.last_activity,
    sessionTwoFactorVerified: session.two_factor_verified,
    user,
  }
}

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
    base.selectAll().orderBy('last_activity', 'desc').orderBy('id', 'desc').$call(paged(page, perPage)).execute(),
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

/** Deactivates every active session of a user but one; the ids it deactivated. */
export async function deactivateOthersOfUser(db: Db, userId: number, keepSessionId: number): Promise<number[]> {
  const rows = await db
    .updateTable('user_sessions')
    .set({ is_active: 0 })
    .where('user_id', '=', userId)
    .where('is_active', '=', 1)
    .where('id', '!=', keepSessionId)
    .returning('id')
    .execute()
  return rows.map((row) => row.id)
}
