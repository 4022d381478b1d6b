/** The reports queue in the admin area (mounted under /api/admin with the admin's other routes). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { requireAdmin } from '../../http/auth.js'
import { ok, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { IdParams } from '../../http/schemas.js'
import * as moderation from './moderation.js'
import { ActionBody, AdminReport, ReportsQuery, ResolveBody } from './schemas.js'

const secured = { tags: ['admin'], security: [{ bearer: [] }] }

export const reportsAdminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireAdmin(ctx))

  app.get(
    '/reports',
    {
      schema: {
        summary: 'The reports queue, newest first (admin)',
        ...secured,
        querystring: ReportsQuery,
        response: { 200: okPageSchema(AdminReport) },
      },
    },
    async (request) => {
      const { status, page, per_page: perPage } = request.query
      const { items, total } = await moderation.queue(ctx, request.user, status, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )

  app.post(
    '/reports/:id/resolve',
    {
      schema: {
        summary: 'Close a report as resolved or dismissed, with a note (admin)',
        ...secured,
        params: IdParams,
        body: ResolveBody,
        response: { 200: okSchema(AdminReport) },
      },
    },
    async (request) => ok(await moderation.close(ctx, request.user, request.params.id, request.body.status, request.body.note)),
  )

  app.post(
    '/reports/:id/action',
    {
      schema: {
        summary: 'Act on a report and resolve it: ban the user, delete the message for everyone, or warn the user (admin)',
        ...secured,
        params: IdParams,
        body: ActionBody,
        response: { 200: okSchema(AdminReport) },
      },
    },
    async (request) => ok(await moderation.act(ctx, request.user, request.params.id, request.body.action, request.body.note)),
  )
}
