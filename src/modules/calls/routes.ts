import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { IdParams, PageQuery } from '../../http/schemas.js'
import * as calls from './service.js'
import { CallHistoryItem, CallView, StartCallBody } from './schemas.js'

const secured = { tags: ['calls'], security: [{ bearer: [] }] }

export const callRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  for (const path of ['/calls/start', '/calls/make']) {
    app.post(
      path,
      {
        schema: {
          summary:
            'Call a user: the call rings on their devices (403 blocked; 409 conflict when you are in a call, or when they are: busy, they get a missed call)',
          ...secured,
          body: StartCallBody,
          response: { 200: okSchema(CallView) },
        },
      },
      async (request) => ok(await calls.start(ctx, request.user, request.body.receiver_id, request.body.call_type)),
    )
  }

  app.post(
    '/calls/:id/answer',
    {
      schema: { summary: 'Answer a ringing call (the callee only)', ...secured, params: IdParams, response: { 200: okSchema(CallView) } },
    },
    async (request) => ok(await calls.answer(ctx, request.user, request.params.id)),
  )

  app.post(
    '/calls/:id/end',
    {
      schema: {
        summary: 'End, decline or cancel a call (either party)',
        ...secured,
        params: IdParams,
        response: { 200: okSchema(CallView) },
      },
    },
    async (request) => ok(await calls.end(ctx, request.user, request.params.id)),
  )

  app.get(
    '/calls/history',
    {
      schema: { summary: 'My calls, newest first', ...secured, querystring: PageQuery, response: { 200: okPageSchema(CallHistoryItem) } },
    },
    async (request) => {
      const { page, per_page: perPage } = request.query
      const { items, total } = await calls.history(ctx, request.user, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )

  app.get(
    '/calls/:id',
    {
      schema: { summary: 'One of my calls', ...secured, params: IdParams, response: { 200: okSchema(CallView) } },
    },
    async (request) => ok(await calls.get(ctx, request.user, request.params.id)),
  )
}
