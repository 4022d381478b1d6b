/**
 * V1 generation helpers: JSON helpers of the cookie session and signing out (/logout). They call the same
 * services as the bearer API. The pages (/, /login, /register, /join…) are web/pages.ts; the
 * admin panel at /admin is its own plugin (web/admin/plugin.ts), with its own cookie and a CSRF
 * token on every form.
 */
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../context.js'
import { SESSION_COOKIE, cookieToken, optionalUser, useCookies } from '../http/auth.js'
import { CSRF_HEADER, csrfTokenFor, csrfTokenMatches } from '../http/csrf.js'
import { ErrorResponse, ok, okSchema } from '../http/envelope.js'
import { forbidden, unauthorized } from '../http/errors.js'
import { Me } from '../http/schemas.js'
import { escapeHtml } from '../lib/html.js'
import * as auth from '../modules/auth/index.js'
import * as sessions from '../modules/sessions/index.js'
import { callPage } from './call-page.js'
import { page } from './layout.js'

export const ADMIN_PANEL_PATH = '/admin'

export const WebSession = Type.Object({
  user: Type.Object({ id: Type.Integer({ description: 'the same as user_id' }), ...Me.properties }),
  csrf_token: Type.String({ description: 'send it as X-CSRF-Token on every cookie-authenticated request but GET, HEAD and OPTIONS' }),
})

export const webRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  await useCookies(app)
  // GET /call: the call page and its script (web/call-page.ts)
  await app.register(callPage, { ctx })

  app.get(
    '/api/get_user_id',
    {
      schema: {
        summary: 'The session’s user id in X-User-Id (204)',
        tags: ['service'],
        security: [{ bearer: [] }],
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const found = await optionalUser(ctx, request)
      if (!found) throw unauthorized('No session')
      return reply.header('x-user-id', String(found.user.id)).code(204).send(null)
    },
  )

  app.get(
    '/api/web/session',
    {
      schema: {
        summary: 'The web client’s cookie session: who is signed in, and the CSRF token its requests carry',
        description:
          'Only the `tern_session` cookie counts here (a bearer token is not looked at). 401 when there is no live cookie session.',
        tags: ['service'],
        response: { 200: okSchema(WebSession), 401: ErrorResponse },
      },
    },
    async (request) => {
      const token = cookieToken(request)
      const found = token ? await sessions.authenticate(ctx, token) : null
      if (!found) throw unauthorized(token ? 'Session is invalid or expired' : 'Authentication required')
      const me = await auth.me(ctx, found.user.id)
      return ok({ user: { id: me.user_id, ...me }, csrf_token: csrfTokenFor(ctx, found.sessionId) })
    },
  )

  // Signing out changes something, so it is a POST with the session's CSRF token: a GET (a link,
  // an image, a cross-site navigation) only shows the page with the button.
  app.get(
    '/logout',
    {
      schema: {
        summary: 'The sign-out page: a button that posts to /logout (a GET signs nobody out)',
        tags: ['service'],
      },
    },
    async (request, reply) => {
      const token = cookieToken(request)
      const found = token ? await sessions.authenticate(ctx, token) : null
      if (!found) {
        // nothing to end: a dead cookie is only dropped
        reply.clearCookie(SESSION_COOKIE, { path: '/' })
        return reply.redirect('/')
      }
      const body = `<h1>Sign out of Tern?</h1>
<p class="muted">Signed in as @${escapeHtml(found.user.username)}. Signing out ends this browser's session; other devices stay signed in.</p>
<form method="post" action="/logout"><input type="hidden" name="_csrf" value="${escapeHtml(csrfTokenFor(ctx, found.sessionId))}">
<button type="submit">Sign out</button> <a href="/app">Back to Tern</a></form>`
      return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page('Sign out · Tern', body))
    },
  )

  await app.register(async (forms) => {
    forms.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)))
    })
    forms.withTypeProvider<TypeBoxTypeProvider>().post(
      '/logout',
      {
        schema: {
          summary: 'End the cookie session, mark the user offline and go to the landing page',
          description:
            "A form post (or JSON) with `_csrf`, the session's CSRF token (the sign-out page carries it; also accepted as X-CSRF-Token). A cross-site post is refused.",
          tags: ['service'],
          body: Type.Optional(Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 128 })) })),
        },
      },
      async (request, reply) => {
        const site = request.headers['sec-fetch-site']
        if (site === 'cross-site' || site === 'same-site') throw forbidden("Sign out from Tern's own page")
        const token = cookieToken(request)
        const found = token ? await sessions.authenticate(ctx, token) : null
        if (found) {
          const header = request.headers[CSRF_HEADER]
          const sent = request.body?._csrf ?? (typeof header === 'string' ? header : '')
          if (!csrfTokenMatches(ctx, found.sessionId, sent)) throw forbidden('The sign-out form is stale: open /logout again')
          await auth.logout(ctx, found.user.id, found.sessionId)
        }
        reply.clearCookie(SESSION_COOKIE, { path: '/' })
        return reply.redirect('/', 303)
      },
    )
  })
}
