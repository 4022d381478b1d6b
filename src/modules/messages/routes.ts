import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okItems, okPage, okSchema } from '../../http/envelope.js'
import { HistoryQuery, MessageView, SendHeaders, SendMessageBody } from './schemas.js'
import * as messages from './service.js'

const secured = { tags: ['messages'], security: [{ bearer: [] }] }

/** History answers a page (with page fields) or a keyset slice (items only). */
const HistoryResult = Type.Object({
  success: Type.Literal(true),
  items: Type.Array(MessageView),
  page: Type.Optional(Type.Integer()),
  per_page: Type.Optional(Type.Integer()),
  total: Type.Optional(Type.Integer()),
  pages: Type.Optional(Type.Integer()),
})

export const messageRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preHandler', requireUser(ctx))

  app.post('/messages/send', {
    schema: { ...secured, body: SendMessageBody, headers: SendHeaders, response: { 200: okSchema(MessageView) } },
  }, async (request) => ok(await messages.send(ctx, request.user, request.body, request.headers['idempotency-key'])))

  app.get('/chat/history', {
    schema: { ...secured, querystring: HistoryQuery, response: { 200: HistoryResult } },
  }, async (request) => {
    const result = await messages.history(ctx, request.user, request.query)
    if (result.keyset) return okItems(result.items)
    return okPage(result.items, { page: result.page, perPage: result.perPage, total: result.total })
  })
}
