import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { validationError } from '../../http/errors.js'
import { PageQuery, Timestamp } from '../../http/schemas.js'
import { emptyBodyAsObject } from '../../http/validation.js'
import * as saved from './service.js'
import { RemoveOptions, SavedBody, SavedMessage } from './schemas.js'

const secured = { tags: ['saved'], security: [{ bearer: [] }] }

export const savedRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/saved/add',
    {
      schema: {
        summary: 'Save a message',
        ...secured,
        body: SavedBody,
        response: { 200: okSchema(Type.Object({ message_id: Type.Integer(), saved_at: Timestamp })) },
      },
    },
    async (request) => ok(await saved.add(ctx, request.user, request.body.message_id)),
  )

  app.delete(
    '/saved/remove',
    {
      schema: {
        summary: 'Unsave a message',
        ...secured,
        querystring: RemoveOptions,
        body: RemoveOptions,
        response: { 200: okSchema(Type.Object({ message_id: Type.Integer(), removed: Type.Boolean() })) },
      },
      preValidation: emptyBodyAsObject,
    },
    async (request) => {
      const messageId = request.query.message_id ?? request.body.message_id
      if (messageId === undefined) throw validationError('message_id is required')
      return ok(await saved.remove(ctx, request.user, messageId))
    },
  )

  app.get(
    '/saved',
    {
      schema: { summary: 'My saved messages', ...secured, querystring: PageQuery, response: { 200: okPageSchema(SavedMessage) } },
    },
    async (request) => {
      const { page, per_page: perPage } = request.query
      const { items, total } = await saved.list(ctx, request.user, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )
}
