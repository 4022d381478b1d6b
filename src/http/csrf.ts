/**
 * The CSRF token of a cookie session (the web client's `tern_session`): HMAC-SHA256 of the
 * session's id under the server key (SECRET_KEY, or `<DATA_DIR>/secret.key`; auth/secret-box.ts),
 * base64url. It is stateless, the same on every instance that shares the key, and changes with
 * the session: a new sign-in gets a new one, and an ended session's token is worth nothing.
 * Only a page of this origin can read it (GET /api/web/session answers it to the cookie's owner;
 * no CORS grants that to another site), and the API wants it back in `X-CSRF-Token` on every
 * cookie-authenticated request that may change something (http/auth.ts).
 */
import { timingSafeEqual } from 'node:crypto'
import type { AppContext } from '../context.js'
import { keyedHash } from '../modules/auth/index.js'

export const CSRF_HEADER = 'x-csrf-token'

export function csrfTokenFor(ctx: AppContext, sessionId: number): string {
  return Buffer.from(keyedHash(ctx.config, 'web session csrf', String(sessionId)), 'hex').toString('base64url')
}

export function csrfTokenMatches(ctx: AppContext, sessionId: number, sent: string): boolean {
  const expected = Buffer.from(csrfTokenFor(ctx, sessionId))
  const given = Buffer.from(sent)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
