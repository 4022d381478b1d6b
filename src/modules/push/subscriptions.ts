/**
 * A subscription belongs to the session that registered it: the sessions module calls these in
 * the same transaction that ends sessions (logout, revoke, ban). Kept apart from service.ts so the
 * sessions module does not depend on the rest of push.
 */
import type { Db } from '../../db/database.js'
import * as repo from './repo.js'

export const forgetSession = (db: Db, sessionId: number) => repo.deleteOfSession(db, sessionId)
export const forgetUser = (db: Db, userId: number) => repo.deleteAllOfUser(db, userId)
