/** /api/bots: bot apps and their commands, for their owners (Tern's envelope, bearer session). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okItems, okItemsSchema, okSchema } from '../../http/envelope.js'
import { IdParams } from '../../http/schemas.js'
import { BotToken, BotView, CommandBody, CommandView, RegisterBotBody, RegisteredBot } from './schemas.js'
import * as bots from './service.js'

const secured = { tags: ['bots'], security: [{ bearer: [] }] }

export const botRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/register',
    {
      schema: {
        summary: 'Register a bot I own; its token is in this answer only',
        ...secured,
        body: RegisterBotBody,
        response: { 200: okSchema(RegisteredBot) },
      },
    },
    async (request) => ok(await bots.register(ctx, request.user, request.body)),
  )

  app.get(
    '/me',
    {
      schema: { summary: 'The bots I own (without tokens)', ...secured, response: { 200: okItemsSchema(BotView) } },
    },
    async (request) => okItems(await bots.listMine(ctx, request.user)),
  )

  app.post(
    '/:id/token',
    {
      schema: {
        summary: "Replace my bot's token (the old one stops working at once)",
        ...secured,
        params: IdParams,
        response: { 200: okSchema(BotToken) },
      },
    },
    async (request) => ok(await bots.regenerateToken(ctx, request.user, request.params.id)),
  )

  app.post(
    '/:id/command',
    {
      schema: {
        summary: 'Define or update a command of my bot',
        ...secured,
        params: IdParams,
        body: CommandBody,
        response: { 200: okSchema(CommandView) },
      },
    },
    async (request) => ok(await bots.defineCommand(ctx, request.user, request.params.id, request.body)),
  )
}
