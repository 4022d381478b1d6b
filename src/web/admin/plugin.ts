/**
 * The admin panel at /admin: server-rendered pages in their own encapsulated scope, with their own
 * cookie session (`tern_admin`, Path=/admin, SameSite=Strict: it authenticates nothing outside
 * the panel, and the JSON API keeps bearer auth), a CSRF token on every form
 * (@fastify/csrf-protection, its secret in an HttpOnly cookie), a strict CSP (scripts and styles
 * from this origin only, nothing inline) and HTML error pages instead of the API envelope.
 */
import csrf from '@fastify/csrf-protection'
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { AppContext } from '../../context.js'
import { cookieValue, useCookies } from '../../http/auth.js'
import { AppError, forbidden } from '../../http/errors.js'
import type { RateLimiters } from '../../http/rate-limit.js'
import * as sessions from '../../modules/sessions/index.js'
import { useForms } from '../forms.js'
import { pageError } from '../page-errors.js'
import { siteHeaders } from '../site.js'
import { ADMIN_CSS, ADMIN_JS } from './assets.js'
import { broadcastPages } from './broadcasts.js'
import { ADMIN_COOKIE, CSRF_COOKIE, panelCookie } from './cookies.js'
import { adminPage, PANEL, sendPage, viewOf } from './layout.js'
import { insightPages } from './insights.js'
import { html } from './markup.js'
import { modLogPages } from './modlog.js'
import { promoPages } from './promos.js'
import { reportPages } from './reports.js'
import { loginRoutes, logoutRoute } from './session.js'
import { userPages } from './users.js'
import { isPlatformAdmin } from '../../policies/accounts.js'

export interface PanelOptions {
  ctx: AppContext
  limiters: RateLimiters
}

function errorPage() {
  return (error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    const { status, message } = pageError(error, request, reply, 'this panel')
    const body = html`<p class="error" role="alert">${message}</p>
<p><a href="${PANEL}">Back to the overview</a>${request.method === 'POST' ? html` · go back to the form and reload it` : ''}</p>`
    return sendPage(reply, adminPage(viewOf(request, reply), `Error ${status}`, body), status)
  }
}

/**
 * onRequest for every page but login and the assets: the `tern_admin` cookie's session, of an
 * admin. No session: to the login page. A session of someone no longer admin: 403.
 */
function requirePanelAdmin(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const token = cookieValue(request.headers.cookie ?? '', ADMIN_COOKIE)
    const found = token ? await sessions.authenticate(ctx, token) : null
    if (!found) {
      if (request.method === 'GET' || request.method === 'HEAD') return reply.redirect(`${PANEL}/login`, 303)
      throw new AppError(401, 'unauthorized', 'Your admin session has ended; sign in again.')
    }
    request.user = found.user
    request.sessionId = found.sessionId
    if (!isPlatformAdmin(found.user)) throw forbidden('Administrators only. This account is not a platform administrator.')
    if (ctx.config.adminRequire2fa && !found.twoFactorVerified) {
      throw forbidden('Two-factor authentication is required for administrators: sign in again with a code.')
    }
  }
}

/**
 * preValidation of every POST (before the schema strips `_csrf`): a browser's own statement that
 * the form came from another site (Sec-Fetch-Site, which also covers a sibling subdomain that could
 * plant a CSRF cookie), then the token.
 */
export const adminPanel: FastifyPluginAsync<PanelOptions> = async (app, { ctx, limiters }) => {
  await useCookies(app)
  await app.register(csrf, {
    cookieKey: CSRF_COOKIE,
    cookieOpts: panelCookie(ctx),
    getToken: (request) =>
      (request.body as { _csrf?: string } | undefined)?._csrf ?? (request.headers['x-csrf-token'] as string | undefined),
  })
  // the pages' CSP; nothing the panel shows belongs in a cache (users' emails, reports)
  const headers = siteHeaders(ctx.config.publicBaseUrl)
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers)
    done()
  })
  useForms(app, 'Forms are accepted only from the panel itself.')
  app.setErrorHandler(errorPage())
  app.setNotFoundHandler((request, reply) =>
    sendPage(
      reply,
      adminPage(
        viewOf(request, reply),
        'Not found',
        html`<p>No page at <code>${request.url.split('?')[0]}</code>. <a href="${PANEL}">Back to the overview</a></p>`,
      ),
      404,
    ),
  )

  app.get('/assets/admin.css', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'no-cache').type('text/css; charset=utf-8').send(ADMIN_CSS),
  )
  app.get('/assets/admin.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'no-cache').type('text/javascript; charset=utf-8').send(ADMIN_JS),
  )

  await app.register(loginRoutes, { ctx, limiters })
  await app.register(async (pages) => {
    pages.addHook('onRequest', requirePanelAdmin(ctx))
    await pages.register(logoutRoute, { ctx })
    await pages.register(insightPages, { ctx })
    await pages.register(userPages, { ctx })
    await pages.register(reportPages, { ctx })
    await pages.register(broadcastPages, { ctx })
    await pages.register(modLogPages, { ctx })
    await pages.register(promoPages, { ctx })
  })
}
