/**
 * What an operator watches: `/metrics` (Prometheus text, lib/metrics.ts) and `/ready` (the database
 * answers, Redis answers when configured, every migration is applied). `/health` (alive) is in
 * modules/stats.
 *
 * /metrics is never open to the world: on the main listener it asks for `Authorization: Bearer
 * <METRICS_TOKEN>`; with METRICS_PORT it is served by a listener of its own (METRICS_HOST, loopback
 * by default) and not on the main one. With neither set it answers 404 saying how to turn it on.
 */
import { timingSafeEqual, createHash } from 'node:crypto'
import http from 'node:http'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../context.js'
import { ping } from '../db/dialect.js'
import { appliedMigrations, updateLogRows } from '../db/health.js'
import { migrations } from '../db/migrations/index.js'
import { bearerToken } from './auth.js'
import { ErrorResponse } from './envelope.js'
import { errorBody } from './errors.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest()

type Check = 'ok' | 'off' | 'error'

async function readiness(ctx: AppContext): Promise<{ database: Check; redis: Check; migrations: Check | 'pending' }> {
  const database = await ping(ctx.db).then(
    () => 'ok' as const,
    () => 'error' as const,
  )
  const redis = ctx.redis
    ? await Promise.race([
        ctx.redis.ping().then(
          () => 'ok' as const,
          () => 'error' as const,
        ),
        new Promise<'error'>((resolve) => setTimeout(() => resolve('error'), 2000).unref()),
      ])
    : ('off' as const)
  let applied: Check | 'pending' = 'error'
  if (database === 'ok') {
    try {
      const done = await appliedMigrations(ctx.db)
      applied = Object.keys(migrations).every((name) => done.has(name)) ? 'ok' : 'pending'
    } catch {
      applied = 'pending'
    }
  }
  return { database, redis, migrations: applied }
}

const Ready = Type.Object({
  success: Type.Boolean(),
  status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
  data: Type.Object({
    status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
    database: Type.String(),
    redis: Type.String(),
    migrations: Type.String(),
  }),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
})

export const observabilityRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const { metrics, config } = ctx
  metrics.sources.updateLogRows = () => updateLogRows(ctx.db, ctx.dialect)

  app.get(
    '/ready',
    {
      schema: {
        summary: 'Whether this instance can serve: the database answers, Redis answers (when configured), every migration is applied',
        tags: ['service'],
        response: { 200: Ready, 503: Ready },
      },
    },
    async (request, reply) => {
      const checks = await readiness(ctx)
      const ready = checks.database === 'ok' && checks.redis !== 'error' && checks.migrations === 'ok'
      if (ready) return { success: true, status: 'ready' as const, data: { status: 'ready' as const, ...checks } }
      request.log.warn({ checks }, 'not ready')
      const failed = Object.entries(checks)
        .filter(([, state]) => state !== 'ok' && state !== 'off')
        .map(([name, state]) => `${name} ${state}`)
      return reply.code(503).send({
        ...errorBody('internal_error', `Not ready: ${failed.join(', ')}`),
        status: 'not_ready' as const,
        data: { status: 'not_ready' as const, ...checks },
      })
    },
  )

  const token = config.metricsToken ? sha256(config.metricsToken) : null
  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics (Authorization: Bearer METRICS_TOKEN)',
        tags: ['service'],
        security: [{ bearer: [] }],
        response: {
          200: { description: 'Prometheus text exposition', content: { 'text/plain': { schema: Type.String() } } },
          401: ErrorResponse,
          404: ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      if (!token) {
        const where =
          config.metricsPort !== null
            ? `on its own listener (METRICS_PORT ${config.metricsPort})`
            : 'only when METRICS_TOKEN or METRICS_PORT is set'
        return reply.code(404).send(errorBody('not_found', `Metrics are served ${where}`))
      }
      const given = bearerToken(request)
      if (!given || !timingSafeEqual(sha256(given), token)) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer realm="metrics"')
          .send(errorBody('unauthorized', 'Metrics need Authorization: Bearer <METRICS_TOKEN>'))
      }
      return reply.type(metrics.contentType).send(await metrics.text())
    },
  )

  if (config.metricsPort === null) return
  // its own listener: started with the main one, closed with it
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('GET /metrics\n')
      return
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      (err: unknown) => {
        ctx.log.error({ err }, 'metrics: collecting failed')
        res.writeHead(500, { 'content-type': 'text/plain' }).end('collecting metrics failed\n')
      },
    )
  })
  app.addHook('onListen', async () => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(config.metricsPort!, config.metricsHost, () => {
        server.off('error', reject)
        const address = server.address()
        ctx.log.info({ address }, 'metrics listener ready')
        resolve()
      })
    })
  })
  app.addHook('onClose', async () => {
    if (server.listening) await new Promise((resolve) => server.close(resolve))
  })
}
