import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okItems, okItemsSchema, okPage, okSchema } from '../../http/envelope.js'
import { IdParams } from '../../http/schemas.js'
import { emptyBodyAsObject } from '../../http/validation.js'
import * as actions from './actions.js'
import {
  CancelResult,
  ChatQuery,
  DeleteOptions,
  DeleteResult,
  EditBody,
  ForwardBody,
  HistoryQuery,
  HistoryResult,
  MessageView,
  ReactionBody,
  ReactionResult,
  ReadResult,
  ScheduleBody,
  SendHeaders,
  SendMessageBody,
  TypingBody,
} from './schemas.js'
import * as scheduled from './scheduled.js'
import * as messages from './service.js'

const secured = { tags: ['messages'], security: [{ bearer: [] }] }

export const messageRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/messages/send',
    {
      schema: {
        summary: 'Send a message to a chat or a user (idempotent with client_message_id)',
        ...secured,
        body: SendMessageBody,
        headers: SendHeaders,
        response: { 200: okSchema(MessageView) },
      },
    },
    async (request) => ok(await messages.send(ctx, request.user, request.body, { idempotencyKey: request.headers['idempotency-key'] })),
  )

  app.get(
    '/chat/history',
    {
      schema: {
        summary: 'A chat’s messages, newest first (pages or keyset)',
        ...secured,
        querystring: HistoryQuery,
        response: { 200: HistoryResult },
      },
    },
    async (request) => {
      const result = await messages.history(ctx, request.user, request.query)
      if (result.keyset) return okItems(result.items)
      return okPage(result.items, { page: result.page, perPage: result.perPage, total: result.total })
    },
  )

  app.post(
    '/messages/:id/edit',
    {
      schema: { summary: 'Edit my message', ...secured, params: IdParams, body: EditBody, response: { 200: okSchema(MessageView) } },
    },
    async (request) => ok(await actions.edit(ctx, request.user, request.params.id, request.body.content)),
  )

  app.delete(
    '/messages/:id',
    {
      schema: {
        summary: 'Delete a message for me, or for everyone',
        ...secured,
        params: IdParams,
        querystring: DeleteOptions,
        body: DeleteOptions,
        response: { 200: okSchema(DeleteResult) },
      },
      preValidation: emptyBodyAsObject,
    },
    async (request) => {
      const forAll = request.query.for_all ?? request.body.for_all ?? false
      return ok(await actions.remove(ctx, request.user, request.params.id, forAll))
    },
  )

  app.post(
    '/messages/:id/read',
    {
      schema: { summary: 'Mark a chat read up to this message', ...secured, params: IdParams, response: { 200: okSchema(ReadResult) } },
    },
    async (request) => ok(await actions.read(ctx, request.user, request.params.id)),
  )

  app.post(
    '/messages/:id/reaction',
    {
      schema: {
        summary: 'Set or remove my reaction (one emoji)',
        ...secured,
        params: IdParams,
        body: ReactionBody,
        response: { 200: okSchema(ReactionResult) },
      },
    },
    async (request) => ok(await actions.react(ctx, request.user, request.params.id, request.body.emoji)),
  )

  app.post(
    '/messages/:id/scheduled',
    {
      schema: {
        summary: 'Reschedule, send now or cancel a pending message',
        ...secured,
        params: IdParams,
        body: ScheduleBody,
        response: { 200: okSchema(Type.Union([MessageView, CancelResult])) },
      },
    },
    async (request) => ok(await scheduled.update(ctx, request.user, request.params.id, request.body)),
  )

  app.get(
    '/messages/scheduled',
    {
      schema: {
        summary: 'My pending (scheduled) messages in a chat',
        ...secured,
        querystring: ChatQuery,
        response: { 200: okItemsSchema(MessageView) },
      },
    },
    async (request) => okItems(await scheduled.listPending(ctx, request.user, request.query.chat_id)),
  )

  for (const path of ['/messages/forward', '/forward']) {
    app.post(
      path,
      {
        schema: {
          summary: 'Forward a message into another chat of mine',
          ...secured,
          body: ForwardBody,
          response: { 200: okSchema(MessageView) },
        },
      },
      async (request) => ok(await actions.forward(ctx, request.user, request.body.message_id, request.body.target_chat_id)),
    )
  }

  app.post(
    '/chat/typing',
    {
      schema: { summary: 'Say that I am typing, or stopped', ...secured, body: TypingBody, response: { 200: okSchema(TypingBody) } },
    },
    async (request) => ok(await actions.typing(ctx, request.user, request.body.chat_id, request.body.is_typing)),
  )
}
