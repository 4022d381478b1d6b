import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { ping } from '../../db/dialect.js'
import { errorBody } from '../../http/errors.js'
import { ok, okSchema } from '../../http/envelope.js'
import * as users from '../users/service.js'

const Health = Type.Object({
  success: Type.Literal(true),
  // Top-level too, for probes that read `status` without knowing the envelope.
  status: Type.Literal('ok'),
  data: Type.Object({ status: Type.Literal('ok'), database: Type.Literal('ok') }),
})

const Unhealthy = Type.Object({
  success: Type.Literal(false),
  status: Type.Literal('error'),
  error: Type.Object({ code: Type.String(), message: Type.String() }),
})

const Stats = Type.Object({ users: Type.Integer(), online: Type.Integer() })

export const statsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get('/health', { schema: { summary: 'Whether the server and its database answer', tags: ['service'], response: { 200: Health, 503: Unhealthy } } }, async (request, reply) => {
    try {
      await ping(ctx.db)
    } catch (err) {
      request.log.error({ err }, 'health check: database unreachable')
      return reply.code(503).send({ ...errorBody('internal_error', 'Database unreachable'), status: 'error' as const })
    }
    return { success: true as const, status: 'ok' as const, data: { status: 'ok' as const, database: 'ok' as const } }
  })

  app.get('/stats', { schema: { summary: 'Public statistics', tags: ['service'], response: { 200: okSchema(Stats) } } }, async () =>
    ok(await users.countUsers(ctx)),
  )
}
