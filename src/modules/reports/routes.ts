import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import * as reports from './service.js'
import { ReportBody, ReportView } from './schemas.js'

export const reportRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/report',
    {
      schema: {
        summary: 'Report a user or a message to the moderators',
        tags: ['reports'],
        security: [{ bearer: [] }],
        body: ReportBody,
        response: { 200: okSchema(ReportView) },
      },
    },
    async (request) => ok(await reports.report(ctx, request.user, request.body)),
  )
}
