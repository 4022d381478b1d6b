import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { IdParams, PageQuery } from '../../http/schemas.js'
import * as sessions from './service.js'
import { SessionItem } from './schemas.js'

export const sessionRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.get(
    '/sessions',
    {
      schema: {
        summary: 'My active sessions (devices)',
        tags: ['sessions'],
        security: [{ bearer: [] }],
        querystring: PageQuery,
        response: { 200: okPageSchema(SessionItem) },
      },
    },
    async (request) => {
      const { page, per_page: perPage } = request.query
      const { items, total } = await sessions.listSessions(ctx, request.user.id, request.sessionId, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )

  app.delete(
    '/sessions/:id',
    {
      schema: {
        summary: 'End one of my sessions and close its sockets',
        tags: ['sessions'],
        security: [{ bearer: [] }],
        params: IdParams,
        response: { 200: okSchema(Type.Object({ message: Type.String() })) },
      },
    },
    async (request) => {
      await sessions.revokeSession(ctx, request.user.id, request.params.id)
      return ok({ message: 'Session revoked' })
    },
  )
}
