import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { okItems, okItemsSchema } from '../../http/envelope.js'
import { notFound } from '../../http/errors.js'
import { findSticker } from './catalogue.js'
import * as stickers from './service.js'
import { Pack } from './schemas.js'

/** V2/stickers: the packs, and whether I may send from each. */
export const stickerRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))
  app.get(
    '/stickers',
    {
      schema: {
        summary: 'Sticker packs (send one as a message’s emoji_file)',
        tags: ['stickers'],
        security: [{ bearer: [] }],
        response: { 200: okItemsSchema(Pack) },
      },
    },
    async (request) => okItems(stickers.packs(ctx, request.user)),
  )
}

/** The sticker images (public: a message's reader sees a sticker whatever their own plan). */
export const stickerImageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/stickers/:pack/:file',
    { schema: { hide: true, params: Type.Object({ pack: Type.String({ maxLength: 40 }), file: Type.String({ maxLength: 40 }) }) } },
    async (request, reply) => {
      const found = findSticker(`stickers/${request.params.pack}/${request.params.file}`)
      if (!found) throw notFound('No such sticker')
      return reply
        .header('Content-Type', 'image/svg+xml')
        .header('Cache-Control', 'public, max-age=604800, immutable')
        .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
        .send(found.sticker.svg)
    },
  )
}
