import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { validationError } from '../../http/errors.js'
import { PageQuery } from '../../http/schemas.js'
import { emptyBodyAsObject } from '../../http/validation.js'
import * as music from './service.js'
import { AddTrack, RemoveTrack, Track } from './schemas.js'

const secured = { tags: ['music'], security: [{ bearer: [] }] }

export const musicRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/music/add',
    {
      schema: { summary: 'Add an audio file to my music library', ...secured, body: AddTrack, response: { 200: okSchema(Track) } },
    },
    async (request) => ok(await music.add(ctx, request.user, request.body)),
  )

  app.delete(
    '/music/remove',
    {
      schema: {
        summary: 'Remove a track from my library',
        ...secured,
        querystring: RemoveTrack,
        body: RemoveTrack,
        response: { 200: okSchema(Type.Object({ id: Type.Integer(), removed: Type.Boolean() })) },
      },
      preValidation: emptyBodyAsObject,
    },
    async (request) => {
      const id = request.query.id ?? request.body.id
      if (id === undefined) throw validationError('id is required')
      return ok(await music.remove(ctx, request.user, id))
    },
  )

  app.get(
    '/music',
    {
      schema: { summary: 'My music library, newest first', ...secured, querystring: PageQuery, response: { 200: okPageSchema(Track) } },
    },
    async (request) => {
      const { page, per_page: perPage } = request.query
      const { items, total } = await music.list(ctx, request.user, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )
}
