import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { ping } from '../../db/dialect.js'
import { errorBody } from '../../http/errors.js'
import { ok, okSchema } from '../../http/envelope.js'
import { pageHeaders } from '../../http/security-headers.js'
import { page } from '../../web/layout.js'
import * as stats from './service.js'
import { Health, Stats, Unhealthy } from './schemas.js'

/** Whether an Accept header asks for HTML before JSON (a browser does; API clients do not). */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false
  const html = accept.indexOf('text/html')
  if (html < 0) return false
  const json = accept.indexOf('application/json')
  return json < 0 || html < json
}

const number = new Intl.NumberFormat('en')

function statsPage(figures: { users: number; messages: number; channels: number }) {
  const item = (label: string, value: number) => `<div class="figure"><dt>${label}</dt><dd>${number.format(value)}</dd></div>`
  return page(
    'Tern statistics',
    `<h1>Tern statistics</h1>
<dl class="figures">
${item('Users', figures.users)}
${item('Messages', figures.messages)}
${item('Channels', figures.channels)}
</dl>
<p class="muted">The same figures as JSON: <code>GET /stats</code> with <code>Accept: application/json</code>. <a href="/">Home</a></p>`,
  )
}

export const statsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const htmlHeaders = pageHeaders(ctx.config.publicBaseUrl)
  app.get(
    '/health',
    { schema: { summary: 'Whether the server and its database answer', tags: ['service'], response: { 200: Health, 503: Unhealthy } } },
    async (request, reply) => {
      try {
        await ping(ctx.db)
      } catch (err) {
        request.log.error({ err }, 'health check: database unreachable')
        return reply.code(503).send({ ...errorBody('internal_error', 'Database unreachable'), status: 'error' as const })
      }
      return { success: true as const, status: 'ok' as const, data: { status: 'ok' as const, database: 'ok' as const } }
    },
  )

  app.get(
    '/stats',
    {
      schema: {
        summary: 'Public statistics: users, messages, channels (JSON; a page for a browser that asks for text/html)',
        tags: ['service'],
        response: { 200: okSchema(Stats) },
      },
    },
    async (request, reply) => {
      const figures = await stats.publicStats(ctx)
      if (!prefersHtml(request.headers.accept)) return ok(figures)
      return reply
        .headers(htmlHeaders)
        .type('text/html; charset=utf-8')
        .send(statsPage(figures) as never)
    },
  )
}
