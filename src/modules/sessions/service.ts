/**
 * Sessions: bearer tokens (and the V1 cookie, which carries the same kind of token).
 * Tokens are 256-bit random and stored only as SHA-256; lifetime slides by SESSION_TTL_DAYS from
 * the last activity, which is written at most once a minute per session, never on every request.
 */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import type { UserRow } from '../../db/tables.js'
import { notFound } from '../../http/errors.js'
import { CLOSE } from '../../realtime/close-codes.js'
import { iso } from '../../lib/time.js'
import { hashToken, maskToken, newToken } from '../../lib/tokens.js'
import { endVideoSessions } from '../calls/index.js'
import * as push from '../push/index.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'
import { isUsable } from '../../policies/accounts.js'

const TOUCH_INTERVAL_MS = 60_000

export interface SessionInfo {
  device?: string | null
  ipAddress?: string | null
  userAgent?: string | null
  /** how the session is opened: password (the default), otp, qr, oauth:<provider> */
  method?: string
  /** a TOTP or recovery code finished the login */
  twoFactorVerified?: boolean
}

export interface Authenticated {
  user: UserRow
  sessionId: number
  /** the session was finished by a second factor (ADMIN_REQUIRE_2FA) */
  twoFactorVerified: boolean
}

const ttlMs = (ctx: AppContext) => ctx.config.sessionTtlDays * 86_400_000

/** Opens a session for a user; returns the token (the only time it exists in clear). */
export async function createSession(ctx: AppContext, userId: number, info: SessionInfo): Promise<string> {
  const token = newToken()
  const now = ctx.clock.now()
  await repo.insertSession(ctx.db, {
    user_id: userId,
    token_hash: hashToken(token),
    token_prefix: token.slice(0, 6),
    device: info.device?.slice(0, 128) ?? null,
    ip_address: info.ipAddress ?? null,
    user_agent: info.userAgent?.slice(0, 512) ?? null,
    method: info.method ?? 'password',
    two_factor_verified: info.twoFactorVerified ? 1 : 0,
    created_at: now,
  })
  await users.touchActivity(ctx.db, userId, now, null)
  return token
}

/** The user behind a token, or null when the token is unknown, revoked, expired or its user banned. */
export async function authenticate(ctx: AppContext, token: string): Promise<Authenticated | null> {
  if (token.length < 20 || token.length > 128) return null
  return authenticateHash(ctx, hashToken(token))
}

/**
 * authenticate, for a token already checked and hashed: a socket's requests are each looked up
 * again with the hash its upgrade computed (hashing the token per frame cost ~1 % of a send).
 */
export async function authenticateHash(ctx: AppContext, hash: string): Promise<Authenticated | null> {
  const found = ctx.authCache ? ctx.authCache.find(hash) : await ctx.tokenLookups!.find(hash)
  if (!found) return null
  let { user } = found
  if (found.sessionIsActive !== 1 || !isUsable(user)) return null
  const now = ctx.clock.now()
  if (found.sessionLastActivity + ttlMs(ctx) <= now) return null
  if (now - found.sessionLastActivity >= TOUCH_INTERVAL_MS) {
    await repo.touch(ctx.db, found.sessionId, now)
    await users.touchActivity(ctx.db, user.id, now, user.last_activity)
    // the found row may be the auth cache's shared, frozen one (the touch above has dropped it)
    user = { ...user, last_activity: now }
  }
  return { user, sessionId: found.sessionId, twoFactorVerified: found.sessionTwoFactorVerified === 1 }
}

export async function listSessions(ctx: AppContext, userId: number, currentSessionId: number | null, page: number, perPage: number) {
  const { rows, total } = await repo.listActive(ctx.db, userId, ctx.clock.now() - ttlMs(ctx), page, perPage)
  const items = rows.map((s) => ({
    id: s.id,
    session_token: maskToken(s.token_prefix),
    device: s.device,
    ip_address: s.ip_address,
    user_agent: s.user_agent,
    method: s.method,
    is_current: s.id === currentSessionId,
    last_active: iso(s.last_activity),
    created_at: iso(s.created_at),
  }))
  return { items, total }
}

/**
 * Revokes one of the user's own sessions (and closes its sockets); 404 for anyone else's or an
 * inactive one. The session's push subscriptions go in the same transaction.
 */
export async function revokeSession(ctx: AppContext, userId: number, sessionId: number): Promise<void> {
  const revoked = await ctx.db.transaction().execute(async (trx) => {
    if (!(await repo.deactivate(trx, userId, sessionId))) return false
    await push.forgetSession(trx, sessionId)
    return true
  })
  if (!revoked) throw notFound('Session not found')
  closeSockets(ctx, userId, sessionId, CLOSE.sessionRevoked)
}

/**
 * Revokes every session of a user at once (ban), with their push subscriptions, inside the caller's transaction; the caller
 * closes their sockets with closeSockets once it has committed.
 */
export async function revokeAllSessions(db: Db, userId: number): Promise<number> {
  const count = await repo.deactivateAllOfUser(db, userId)
  // every subscription of the user belonged to one of those sessions
  await push.forgetUser(db, userId)
  return count
}

/**
 * Revokes every session of a user but the one given (a password change), with their push
 * subscriptions, inside the caller's transaction; the ids, whose sockets the caller closes with
 * closeSockets once it has committed.
 */
export async function revokeOtherSessions(db: Db, userId: number, keepSessionId: number): Promise<number[]> {
  const ids = await repo.deactivateOthersOfUser(db, userId, keepSessionId)
  for (const id of ids) await push.forgetSession(db, id)
  return ids
}

/**
 * Closes the WebSockets opened with a session (or, without one, every socket of the user) on every
 * instance: the gateway's through the fan-out, the video service's signaling sockets through the
 * video service (which refuses the session's tickets from then on). Call it after the change that
 * ended the session has committed; it never waits and never throws.
 */
export function closeSockets(ctx: AppContext, userId: number, sessionId: number | undefined, why: { code: number; reason: string }) {
  ctx.control.publish('sockets.close', { userId, ...(sessionId === undefined ? {} : { sessionId }), ...why })
  void endVideoSessions(ctx, userId, sessionId, why).catch((err) => ctx.log.warn({ err }, "could not end the session's signaling sockets"))
}
