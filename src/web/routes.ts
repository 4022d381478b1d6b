/**
 * V1 generation helpers: cookie-session pages and JSON helpers. They call the same services as the
 * bearer API. The admin panel at /admin is its own plugin (web/admin/plugin.ts), with its own
 * cookie and a CSRF token on every form.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../context.js'
import { SESSION_COOKIE, cookieToken, optionalUser, useCookies } from '../http/auth.js'
import { unauthorized } from '../http/errors.js'
import * as auth from '../modules/auth/service.js'
import * as sessions from '../modules/sessions/service.js'
import * as stats from '../modules/stats/service.js'
import { page } from './layout.js'

export const ADMIN_PANEL_PATH = '/admin'

export const webRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  await useCookies(app)
  app.get('/', { schema: { summary: 'The landing page (the admin panel on an admin. host)', hide: true } }, async (request, reply) => {
    if ((request.headers.host ?? '').toLowerCase().startsWith('admin.')) return reply.redirect(ADMIN_PANEL_PATH)
    const figures = await stats.publicStats(ctx)
    return reply.type('text/html; charset=utf-8').send(
      page(
        'Tern',
        `<h1>Tern</h1>
<p>An open-source messaging server: personal chats, groups, channels, stories, calls and bots.</p>
<p class="muted">${figures.users} registered ${figures.users === 1 ? 'user' : 'users'}.</p>
<ul>
  <li><a href="/docs">API documentation</a> (<a href="/openapi.json">OpenAPI 3</a>)</li>
  <li>Bearer API at <code>/api.v2/api</code>; real-time gateway at <code>/api.v2/api/ws</code></li>
  <li><a href="/health">Health</a> · <a href="/stats">Statistics</a></li>
</ul>`,
      ),
    )
  })

  app.get('/api/get_user_id', {
    schema: { summary: 'The session’s user id in X-User-Id (204)', tags: ['service'], security: [{ bearer: [] }], response: { 204: Type.Null() } },
  }, async (request, reply) => {
    const found = await optionalUser(ctx, request)
    if (!found) throw unauthorized('No session')
    return reply.header('x-user-id', String(found.user.id)).code(204).send(null)
  })

  app.get('/logout', { schema: { summary: 'End the cookie session and go to the landing page', tags: ['service'] } }, async (request, reply) => {
    const token = cookieToken(request)
    const found = token ? await sessions.authenticate(ctx, token) : null
    if (found) await auth.logout(ctx, found.user.id, found.sessionId)
    reply.clearCookie(SESSION_COOKIE, { path: '/' })
    return reply.redirect('/')
  })
}
