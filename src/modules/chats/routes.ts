import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { ChatListItem, ChatListQuery, CreateChatBody } from './schemas.js'
import * as chats from './service.js'

const secured = { tags: ['chats'], security: [{ bearer: [] }] }

export const chatRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preHandler', requireUser(ctx))

  app.post('/chat/create', {
    schema: { summary: 'Open the personal chat with a user', ...secured, body: CreateChatBody, response: { 200: okSchema(ChatListItem) } },
  }, async (request) => ok(await chats.createPersonal(ctx, request.user, request.body.user_id)))

  app.get('/chat_list', {
    schema: { summary: 'My chats, most recent first, with unread counts', ...secured, querystring: ChatListQuery, response: { 200: okPageSchema(ChatListItem) } },
  }, async (request) => {
    const { page, per_page: perPage } = request.query
    const { items, total } = await chats.list(ctx, request.user, page, perPage)
    return okPage(items, { page, perPage, total })
  })
}
