import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okItems, okItemsSchema, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import * as search from './service.js'
import { Found, FoundMessages, GlobalQuery, MessagesQuery, RecentSearch } from './schemas.js'

const secured = { tags: ['search'], security: [{ bearer: [] }] }

export const searchRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.get(
    '/search/global',
    {
      schema: {
        summary: 'Find people by username or display name',
        ...secured,
        querystring: GlobalQuery,
        response: { 200: okPageSchema(Found) },
      },
    },
    async (request) => {
      const { q, page, per_page: perPage } = request.query
      const { items, total } = await search.searchGlobal(ctx, request.user, q, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )

  app.get(
    '/search/messages',
    {
      schema: {
        summary: 'Find messages in my chats by words, newest first',
        ...secured,
        querystring: MessagesQuery,
        response: { 200: okSchema(FoundMessages) },
      },
    },
    async (request) => ok(await search.searchMessages(ctx, request.user, request.query)),
  )

  app.get(
    '/search/history',
    {
      schema: { summary: 'My recent searches, newest first', ...secured, response: { 200: okItemsSchema(RecentSearch) } },
    },
    async (request) => okItems(await search.history(ctx, request.user)),
  )

  app.delete(
    '/search/history',
    {
      schema: { summary: 'Clear my recent searches', ...secured, response: { 200: okSchema(Type.Object({ cleared: Type.Boolean() })) } },
    },
    async (request) => ok(await search.clearHistory(ctx, request.user)),
  )
}
