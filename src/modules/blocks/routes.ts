import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { PageQuery, Peer } from '../../http/schemas.js'
import * as blocks from './service.js'
import { BlockBody, BlockState } from './schemas.js'

const secured = { tags: ['blocking'], security: [{ bearer: [] }] }

export const blockRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/block',
    {
      schema: { summary: 'Block a user', ...secured, body: BlockBody, response: { 200: okSchema(BlockState) } },
    },
    async (request) => ok(await blocks.setBlocked(ctx, request.user, request.body.user_id, true, request.body.reason)),
  )

  app.post(
    '/unblock',
    {
      schema: { summary: 'Unblock a user', ...secured, body: BlockBody, response: { 200: okSchema(BlockState) } },
    },
    async (request) => ok(await blocks.setBlocked(ctx, request.user, request.body.user_id, false)),
  )

  app.get(
    '/blocked',
    {
      schema: { summary: 'The users I blocked', ...secured, querystring: PageQuery, response: { 200: okPageSchema(Peer) } },
    },
    async (request) => {
      const { page, per_page: perPage } = request.query
      const { items, total } = await blocks.list(ctx, request.user, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )
}
