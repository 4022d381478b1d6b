import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import { Id, Username } from '../../http/schemas.js'
import * as referrals from './service.js'

const secured = { tags: ['referrals'], security: [{ bearer: [] }] }

export const referralRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.get(
    '/referrals/me',
    {
      schema: {
        summary: 'My invite link and how many joined through it',
        ...secured,
        response: { 200: okSchema(Type.Object({ invite_url: Type.String(), invited_count: Type.Integer(), threshold: Type.Integer() })) },
      },
    },
    async (request) => ok(await referrals.mine(ctx, request.user)),
  )

  app.post(
    '/referrals/invite',
    {
      schema: {
        summary: 'Say who invited me (once)',
        ...secured,
        body: Type.Object({ ref: Type.Optional(Username), user_id: Type.Optional(Id) }, { additionalProperties: false }),
        response: { 200: okSchema(Type.Object({ inviter_id: Type.Integer() })) },
      },
    },
    async (request) => ok(await referrals.invitedBy(ctx, request.user, request.body)),
  )
}
