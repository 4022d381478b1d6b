/**
 * The panel's own sign-in: username or email and password through the auth service (the same
 * checks and rate limit as the API's login), then the TOTP code when the account has two-factor
 * on. Only a platform admin gets the `tern_admin` cookie; anyone else's new session is revoked.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { Type, type Static } from 'typebox'
import type { AppContext } from '../../context.js'
import { AppError } from '../../http/errors.js'
import type { RateLimiters } from '../../http/rate-limit.js'
import type { AuthResult } from '../../modules/auth/index.js'
import * as auth from '../../modules/auth/index.js'
import * as sessions from '../../modules/sessions/index.js'
import * as users from '../../modules/users/index.js'
import { ADMIN_COOKIE, CSRF_COOKIE, panelCookie } from './cookies.js'
import { adminPage, csrfField, notice, PANEL, sendPage, viewOf, type View } from './layout.js'
import { html, type Markup } from './markup.js'
import { isPlatformAdmin } from '../../policies/accounts.js'

const LoginForm = Type.Object(
  { login: Type.String({ maxLength: 254 }), password: Type.String({ maxLength: 256 }) },
  { additionalProperties: false },
)

const TotpForm = Type.Object(
  { ticket: Type.String({ maxLength: 128 }), code: Type.String({ maxLength: 32 }) },
  { additionalProperties: false },
)

const NOT_ADMIN = 'This account is not a platform administrator.'
const NEEDS_2FA = 'Administrators must sign in with two-factor authentication here: turn it on in the app first.'

function loginPage(view: View, options: { error?: string; login?: string; notice?: Markup } = {}): string {
  return adminPage(
    view,
    'Sign in',
    html`${options.notice ?? ''}${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<form method="post" action="${PANEL}/login" class="stack">
${csrfField(view)}
<label for="login">Username or email
<input id="login" name="login" type="text" autocomplete="username" required maxlength="254" value="${options.login ?? ''}" autofocus></label>
<label for="password">Password
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="256"></label>
<div><button type="submit">Sign in</button></div>
</form>
<p class="muted">Administrators only. This is separate from signing in to the apps.</p>`,
  )
}

const client = (request: FastifyRequest) => ({ ipAddress: request.ip, userAgent: request.headers['user-agent'] ?? null })

/**
 * An admin's session becomes the panel's cookie; anyone else's is ended at once, and so is an
 * admin's without a second factor when ADMIN_REQUIRE_2FA is on.
 */
async function finish(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, result: AuthResult, withSecondFactor: boolean) {
  const refusal = !result.user.is_admin ? NOT_ADMIN : ctx.config.adminRequire2fa && !withSecondFactor ? NEEDS_2FA : null
  if (refusal) {
    const found = await sessions.authenticate(ctx, result.session_token)
    if (found) await sessions.revokeSession(ctx, found.user.id, found.sessionId)
    request.log.info({ userId: result.user.user_id, refusal }, 'admin panel: sign-in refused')
    return sendPage(reply, loginPage(viewOf(request, reply), { error: refusal }), 403)
  }
  reply.setCookie(ADMIN_COOKIE, result.session_token, panelCookie(ctx))
  // a fresh CSRF secret for the signed-in session (the next page sets it)
  reply.clearCookie(CSRF_COOKIE, panelCookie(ctx))
  request.log.info({ userId: result.user.user_id }, 'admin panel: signed in')
  return reply.redirect(PANEL, 303)
}

export const loginRoutes: FastifyPluginAsync<{ ctx: AppContext; limiters: RateLimiters }> = async (app, { ctx, limiters }) => {
  app.get('/login', { schema: { hide: true } }, async (request, reply) => {
    const token = request.cookies[ADMIN_COOKIE]
    const found = token ? await sessions.authenticate(ctx, token) : null
    if (found && isPlatformAdmin(found.user)) return reply.redirect(PANEL, 303)
    const signedOut = notice((request.query as { notice?: string }).notice, { signed_out: 'You are signed out.' })
    return sendPage(reply, loginPage(viewOf(request, reply), { notice: signedOut }))
  })

  app.post<{ Body: Static<typeof LoginForm> }>(
    '/login',
    { schema: { hide: true, body: LoginForm }, onRequest: limiters.login },
    async (request, reply) => {
      const { login, password } = request.body
      const view = viewOf(request, reply)
      if (!login.trim() || !password)
        return sendPage(reply, loginPage(view, { error: 'Enter your username or email and your password.', login }), 400)
      // a session, or with two-factor on a ticket for the code
      let result: AuthResult | auth.TotpRequired
      try {
        result = await auth.login(ctx, { login: login.trim(), password, device: 'Admin panel' }, client(request))
      } catch (error) {
        if (error instanceof AppError && error.statusCode === 401) {
          return sendPage(reply, loginPage(view, { error: 'Wrong username, email or password, or the account is suspended.', login }), 401)
        }
        throw error
      }
      if ('next' in result) {
        // the password was right: whether the account is an admin is no secret from its owner
        const user = await users.findByLogin(ctx, login.trim())
        if (!user || !isPlatformAdmin(user)) return sendPage(reply, loginPage(view, { error: NOT_ADMIN }), 403)
        return sendPage(reply, totpPage(view, result.ticket))
      }
      return finish(ctx, request, reply, result, false)
    },
  )

  app.post<{ Body: Static<typeof TotpForm> }>(
    '/login/totp',
    { schema: { hide: true, body: TotpForm }, onRequest: limiters.login },
    async (request, reply) => {
      const { ticket, code } = request.body
      let result: AuthResult
      try {
        result = await auth.finishTotp(ctx, ticket, code.replace(/\s+/g, ''), client(request))
      } catch (error) {
        if (error instanceof AppError && (error.statusCode === 401 || error.statusCode === 400)) {
          return sendPage(reply, totpPage(viewOf(request, reply), ticket, error.message), 401)
        }
        throw error
      }
      return finish(ctx, request, reply, result, true)
    },
  )
}

function totpPage(view: View, ticket: string, error?: string): string {
  return adminPage(
    view,
    'Two-factor code',
    html`${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="${PANEL}/login/totp" class="stack">
${csrfField(view)}
<input type="hidden" name="ticket" value="${ticket}">
<label for="code">The 6-digit code from your authenticator app, or a recovery code
<input id="code" name="code" type="text" autocomplete="one-time-code" maxlength="32" required autofocus></label>
<div><button type="submit">Verify</button></div>
</form>
<p><a href="${PANEL}/login">Start over</a></p>`,
  )
}

export const logoutRoute: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post('/logout', { schema: { hide: true } }, async (request, reply) => {
    try {
      await sessions.revokeSession(ctx, request.user.id, request.sessionId)
    } catch (error) {
      // ended meanwhile (another tab signed out): the cookies go all the same
      if (!(error instanceof AppError && error.statusCode === 404)) throw error
    }
    reply.clearCookie(ADMIN_COOKIE, panelCookie(ctx))
    reply.clearCookie(CSRF_COOKIE, panelCookie(ctx))
    return reply.redirect(`${PANEL}/login?notice=signed_out`, 303)
  })
}
