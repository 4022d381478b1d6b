import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okItems, okItemsSchema, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { validationError } from '../../http/errors.js'
import { emptyBodyAsObject } from '../../http/validation.js'
import * as placement from './placement.js'
import { ArchiveView, ChatListItem, ChatListQuery, CreateChatBody, PinView, PlacementBody, PlacementOptions } from './schemas.js'
import * as chats from './service.js'

const secured = { tags: ['chats'], security: [{ bearer: [] }] }

export const chatRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/chat/create',
    {
      schema: {
        summary: 'Open the personal chat with a user',
        ...secured,
        body: CreateChatBody,
        response: { 200: okSchema(ChatListItem) },
      },
    },
    async (request) => ok(await chats.createPersonal(ctx, request.user, request.body.user_id)),
  )

  app.get(
    '/chat_list',
    {
      schema: {
        summary: 'My chats, most recent first, with unread counts',
        ...secured,
        querystring: ChatListQuery,
        response: { 200: okPageSchema(ChatListItem) },
      },
    },
    async (request) => {
      const { page, per_page: perPage, archived } = request.query
      const { items, total } = await chats.list(ctx, request.user, page, perPage, archived ? 'archived' : 'main')
      return okPage(items, { page, perPage, total })
    },
  )

  /** A DELETE's chat: from the query string, or a JSON body. */
  const target = (
    query: { chat_type?: placement.ChatType; chat_id?: number },
    body: { chat_type?: placement.ChatType; chat_id?: number },
  ) => {
    const chatType = query.chat_type ?? body.chat_type
    const chatId = query.chat_id ?? body.chat_id
    if (chatType === undefined || chatId === undefined) throw validationError('chat_type and chat_id are required')
    return [chatType, chatId] as const
  }
  const unplace = { querystring: PlacementOptions, body: PlacementOptions }

  app.post(
    '/pin',
    {
      schema: {
        summary: `Pin a chat to the top of my chat list (at most ${placement.PIN_LIMIT})`,
        ...secured,
        body: PlacementBody,
        response: { 200: okItemsSchema(PinView) },
      },
    },
    async (request) => okItems(await placement.pin(ctx, request.user, request.body.chat_type, request.body.chat_id)),
  )

  app.delete(
    '/pin',
    {
      schema: { summary: 'Unpin a chat', ...secured, ...unplace, response: { 200: okItemsSchema(PinView) } },
      preValidation: emptyBodyAsObject,
    },
    async (request) => okItems(await placement.unpin(ctx, request.user, ...target(request.query, request.body))),
  )

  app.get(
    '/pins',
    {
      schema: { summary: 'My pinned chats, in chat list order', ...secured, response: { 200: okItemsSchema(PinView) } },
    },
    async (request) => okItems(await placement.pins(ctx, request.user)),
  )

  app.post(
    '/archive',
    {
      schema: {
        summary: 'Archive a chat (it leaves the main chat list)',
        ...secured,
        body: PlacementBody,
        response: { 200: okSchema(ArchiveView) },
      },
    },
    async (request) => ok(await placement.archive(ctx, request.user, request.body.chat_type, request.body.chat_id)),
  )

  app.delete(
    '/archive',
    {
      schema: { summary: 'Take a chat out of the archive', ...secured, ...unplace, response: { 200: okSchema(ArchiveView) } },
      preValidation: emptyBodyAsObject,
    },
    async (request) => ok(await placement.unarchive(ctx, request.user, ...target(request.query, request.body))),
  )
}
