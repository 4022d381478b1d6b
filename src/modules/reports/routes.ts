import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import { Id } from '../../http/schemas.js'
import * as reports from './service.js'

const ReportBody = Type.Object(
  {
    reported_user_id: Type.Optional(Id),
    reported_message_id: Type.Optional(Id),
    reason: Type.String({ minLength: 1, maxLength: 1000 }),
  },
  { additionalProperties: false },
)
const ReportView = Type.Object({ report_id: Type.Integer(), status: Type.String() })

export const reportRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post('/report', {
    schema: { summary: 'Report a user or a message to the moderators', tags: ['reports'], security: [{ bearer: [] }], body: ReportBody,
      response: { 200: okSchema(ReportView) } },
  }, async (request) => ok(await reports.report(ctx, request.user, request.body)))
}
