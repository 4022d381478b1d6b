/**
 * Who is calling: `Authorization: Bearer <token>`, or else the V1 cookie session (`tern_session`,
 * the web client's). A cookie-authenticated request that may change something (any method but
 * GET, HEAD and OPTIONS) must also carry `X-CSRF-Token`, the session's CSRF token
 * (http/csrf.ts, handed out by GET /api/web/session): without it, or with a wrong one, it is
 * 403 before any handler runs, so a page on another site cannot act with a visitor's cookie.
 * Bearer requests need no CSRF token: a browser never attaches one on its own.
 */
import cookie from '@fastify/cookie'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AppContext } from '../context.js'
import type { UserRow } from '../db/tables.js'
import { authenticate, type Authenticated } from '../modules/sessions/index.js'
import { CSRF_HEADER, csrfTokenMatches } from './csrf.js'
import { forbidden, rateLimited, unauthorized } from './errors.js'
import { isPlatformAdmin } from '../policies/accounts.js'

export const SESSION_COOKIE = 'tern_session'

declare module 'fastify' {
  interface FastifyRequest {
    /** the authenticated user; set by requireUser/requireAdmin */
    user: UserRow
    /** the id of the session the request was made with */
    sessionId: number
    /** the session's login was finished by a TOTP or recovery code */
    twoFactorVerified: boolean
  }
}

export function decorateAuth(app: FastifyInstance) {
  app.decorateRequest('user', null as unknown as UserRow)
  app.decorateRequest('sessionId', 0)
  app.decorateRequest('twoFactorVerified', false)
}

/**
 * reply.setCookie/clearCookie in `scope` (an encapsulated plugin): only the scopes that set
 * cookies (the V1 login, the web pages) have them, so the plugin's hooks do not run on every
 * response. @fastify/cookie 11.1.0 (the last on cookie 1.x, which supports Node 20) writes
 * Set-Cookie from its onSend hook, which it adds only with a hook: its onRequest parse is the
 * price, in these scopes only. Authentication reads the V1 session with cookieToken, only when a
 * request has no bearer token.
 */
export async function useCookies(scope: FastifyInstance) {
  await scope.register(cookie, { hook: 'onRequest' })
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header)
    return match ? match[1] : null
  }
  return null
}

/** The V1 session cookie, parsed from the Cookie header only when asked for. */
export function cookieToken(request: FastifyRequest): string | null {
  const header = request.headers.cookie
  return header ? cookieValue(header, SESSION_COOKIE) : null
}

/** One cookie's value from a Cookie header (RFC 6265: `name=value` pairs split by `;`), or null. */
export function cookieValue(header: string, name: string): string | null {
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=')
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue
    let value = pair.slice(eq + 1).trim()
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
    try {
      return decodeURIComponent(value)
    } catch {
      return value
    }
  }
  return null
}

function requestToken(request: FastifyRequest): string | null {
  return bearerToken(request) ?? cookieToken(request)
}

/** Methods a cross-site page can make a browser send but that change nothing (RFC 9110 "safe"). */
export const isSafeMethod = (method: string) => method === 'GET' || method === 'HEAD' || method === 'OPTIONS'

/**
 * Resolves the caller, or null for no or a bad token. A live cookie session on an unsafe method
 * without the right X-CSRF-Token throws 403: the cookie alone proves nothing about who sent it.
 */
export async function optionalUser(ctx: AppContext, request: FastifyRequest): Promise<Authenticated | null> {
  const bearer = bearerToken(request)
  if (bearer) return authenticate(ctx, bearer)
  const token = cookieToken(request)
  if (!token) return null
  const found = await authenticate(ctx, token)
  if (found && !isSafeMethod(request.method)) {
    const sent = request.headers[CSRF_HEADER]
    if (typeof sent !== 'string' || !csrfTokenMatches(ctx, found.sessionId, sent)) {
      throw forbidden(
        `A request signed in by the session cookie must carry its CSRF token in the ${CSRF_HEADER} header (GET /api/web/session gives it)`,
      )
    }
  }
  return found
}

/** preValidation (before the body is checked: 401 comes before 400): unless the request carries a live session of an active user. */
export function requireUser(ctx: AppContext) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const found = await optionalUser(ctx, request)
    if (!found) {
      throw unauthorized(requestToken(request) ? 'Session is invalid or expired' : 'Authentication required')
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const wait = ctx.writeLimits.perUser.take(String(found.user.id))
      if (wait !== null) throw rateLimited(wait)
    }
    request.user = found.user
    request.sessionId = found.sessionId
    request.twoFactorVerified = found.twoFactorVerified
  }
}

/**
 * preValidation: requireUser, then 403 unless the user is a platform admin (and, with
 * ADMIN_REQUIRE_2FA, signed in with a second factor in the current login session).
 */
export function requireAdmin(ctx: AppContext) {
  const user = requireUser(ctx)
  return async (request: FastifyRequest, reply: FastifyReply) => {
    await user(request, reply)
    if (!isPlatformAdmin(request.user)) throw forbidden('Administrators only')
    if (ctx.config.adminRequire2fa && !request.twoFactorVerified) {
      throw forbidden('Two-factor authentication is required for administrators: turn on 2FA, then sign in again with a code')
    }
  }
}
