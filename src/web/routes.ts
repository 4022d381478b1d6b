/**
 * V1 generation helpers: JSON helpers of the cookie session and GET /logout. They call the same
 * services as the bearer API. The pages (/, /login, /register, /join…) are web/pages.ts; the
 * admin panel at /admin is its own plugin (web/admin/plugin.ts), with its own cookie and a CSRF
 * token on every form.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../context.js'
import { SESSION_COOKIE, cookieToken, optionalUser, useCookies } from '../http/auth.js'
import { csrfTokenFor } from '../http/csrf.js'
import { ErrorResponse, ok, okSchema } from '../http/envelope.js'
import { unauthorized } from '../http/errors.js'
import { Me } from '../http/schemas.js'
import * as auth from '../modules/auth/service.js'
import * as sessions from '../modules/sessions/service.js'
import { callPage } from './call-page.js'

export const ADMIN_PANEL_PATH = '/admin'

export const WebSession = Type.Object({
  user: Type.Object({ id: Type.Integer({ description: 'the same as user_id' }), ...Me.properties }),
  csrf_token: Type.String({ description: 'send it as X-CSRF-Token on every cookie-authenticated request but GET, HEAD and OPTIONS' }),
})

export const webRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  await useCookies(app)
  // GET /call: the call page and its script (web/call-page.ts)
  await app.register(callPage, { ctx })

  app.get('/api/get_user_id', {
    schema: { summary: 'The session’s user id in X-User-Id (204)', tags: ['service'], security: [{ bearer: [] }], response: { 204: Type.Null() } },
  }, async (request, reply) => {
    const found = await optionalUser(ctx, request)
    if (!found) throw unauthorized('No session')
    return reply.header('x-user-id', String(found.user.id)).code(204).send(null)
  })

  app.get('/api/web/session', {
    schema: {
      summary: 'The web client’s cookie session: who is signed in, and the CSRF token its requests carry',
      description: 'Only the `tern_session` cookie counts here (a bearer token is not looked at). 401 when there is no live cookie session.',
      tags: ['service'],
      response: { 200: okSchema(WebSession), 401: ErrorResponse },
    },
  }, async (request) => {
    const token = cookieToken(request)
    const found = token ? await sessions.authenticate(ctx, token) : null
    if (!found) throw unauthorized(token ? 'Session is invalid or expired' : 'Authentication required')
    const me = await auth.me(ctx, found.user.id)
    return ok({ user: { id: me.user_id, ...me }, csrf_token: csrfTokenFor(ctx, found.sessionId) })
  })

  app.get('/logout', { schema: { summary: 'End the cookie session, mark the user offline and go to the landing page', tags: ['service'] } }, async (request, reply) => {
    const token = cookieToken(request)
    const found = token ? await sessions.authenticate(ctx, token) : null
    if (found) await auth.logout(ctx, found.user.id, found.sessionId)
    reply.clearCookie(SESSION_COOKIE, { path: '/' })
    return reply.redirect('/')
  })
}
