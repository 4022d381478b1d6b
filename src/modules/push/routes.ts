import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { requireAdmin, requireUser } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import { PublicKey, Registered, RegisterBody, Removed, SendBody, SendResult, UnregisterBody } from './schemas.js'
import * as push from './service.js'

const secured = { tags: ['push'], security: [{ bearer: [] }] }

/** Mounted under each API prefix (`V2/push/*`) and at `/api` (`/api/push/*`). */
export const pushRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/push/register',
    {
      preValidation: requireUser(ctx),
      schema: {
        summary: 'Register this device for push: a Web Push subscription or a native token',
        ...secured,
        body: RegisterBody,
        response: { 200: okSchema(Registered) },
      },
    },
    async (request) => ok(await push.register(ctx, request.user, request.sessionId, request.body)),
  )

  app.delete(
    '/push/register',
    {
      preValidation: requireUser(ctx),
      schema: {
        summary: 'Remove one of my push subscriptions (by id, endpoint or push_token)',
        ...secured,
        body: UnregisterBody,
        response: { 200: okSchema(Removed) },
      },
    },
    async (request) => ok(await push.unregister(ctx, request.user, request.body)),
  )

  app.get(
    '/push/vapid-public-key',
    {
      schema: {
        summary: "The server's VAPID public key (applicationServerKey for PushManager.subscribe)",
        tags: ['push'],
        response: { 200: okSchema(PublicKey) },
      },
    },
    async () => ok(push.publicKey(ctx)),
  )

  app.post(
    '/push/send',
    {
      preHandler: requireAdmin(ctx),
      schema: {
        summary: "Admin: send a notification to a user's devices now",
        ...secured,
        body: SendBody,
        response: { 200: okSchema(SendResult) },
      },
    },
    async (request) => ok(await push.adminSend(ctx, request.user, request.body)),
  )
}
