import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import { CreatePoll, PollParams, PollResults, VoteBody } from './schemas.js'
import * as polls from './service.js'

const secured = { tags: ['polls'], security: [{ bearer: [] }] }
const Results = { 200: okSchema(PollResults) }

export const pollRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/poll/create',
    {
      schema: { summary: 'Post a poll in a chat I may post in', ...secured, body: CreatePoll, response: Results },
    },
    async (request) => ok(await polls.create(ctx, request.user, request.body)),
  )

  app.post(
    '/poll/:id/vote',
    {
      schema: {
        summary: 'Vote (again: replaces my vote; [] takes it back)',
        ...secured,
        params: PollParams,
        body: VoteBody,
        response: Results,
      },
    },
    async (request) => ok(await polls.vote(ctx, request.user, request.params.id, request.body)),
  )

  app.get(
    '/poll/:id/results',
    {
      schema: { summary: "A poll's results and my votes", ...secured, params: PollParams, response: Results },
    },
    async (request) => ok(await polls.results(ctx, request.user, request.params.id)),
  )

  app.post(
    '/poll/:id/close',
    {
      schema: { summary: 'Close a poll (its creator or a chat admin)', ...secured, params: PollParams, response: Results },
    },
    async (request) => ok(await polls.close(ctx, request.user, request.params.id)),
  )
}
