import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okItems, okItemsSchema, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { Id, Peer, Timestamp, pageQuery } from '../../http/schemas.js'
import { MessageView } from '../messages/index.js'
import * as search from './service.js'

const secured = { tags: ['search'], security: [{ bearer: [] }] }

const GlobalQuery = Type.Object(
  {
    q: Type.String({ maxLength: 64 }),
    ...pageQuery(50).properties,
  },
  { additionalProperties: false },
)
const MessagesQuery = Type.Object(
  {
    q: Type.String({ maxLength: 256 }),
    chat_id: Type.Optional(Id),
    before_id: Type.Optional(Id),
    limit: Type.Integer({ minimum: 1, maximum: 50, default: 20 }),
  },
  { additionalProperties: false },
)
const FoundMessages = Type.Object({ items: Type.Array(MessageView), next_before_id: Type.Union([Type.Integer(), Type.Null()]) })
const Found = Type.Object({ ...Peer.properties, bio: Type.String(), is_contact: Type.Boolean() })
const RecentSearch = Type.Object({ search_query: Type.String(), search_type: Type.String(), created_at: Timestamp })

export const searchRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.get('/search/global', {
    schema: { summary: 'Find people by username or display name', ...secured, querystring: GlobalQuery, response: { 200: okPageSchema(Found) } },
  }, async (request) => {
    const { q, page, per_page: perPage } = request.query
    const { items, total } = await search.searchGlobal(ctx, request.user, q, page, perPage)
    return okPage(items, { page, perPage, total })
  })

  app.get('/search/messages', {
    schema: { summary: 'Find messages in my chats by words, newest first', ...secured, querystring: MessagesQuery, response: { 200: okSchema(FoundMessages) } },
  }, async (request) => ok(await search.searchMessages(ctx, request.user, request.query)))

  app.get('/search/history', {
    schema: { summary: 'My recent searches, newest first', ...secured, response: { 200: okItemsSchema(RecentSearch) } },
  }, async (request) => okItems(await search.history(ctx, request.user)))

  app.delete('/search/history', {
    schema: { summary: 'Clear my recent searches', ...secured, response: { 200: okSchema(Type.Object({ cleared: Type.Boolean() })) } },
  }, async (request) => ok(await search.clearHistory(ctx, request.user)))
}
