/** /api/bots/{id}/webhook and the delivery log, for the bot's owner (Tern's envelope, bearer session). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { Id, IdParams, Nullable, PageQuery, Timestamp } from '../../http/schemas.js'
import * as webhooks from './webhooks.js'

const secured = { tags: ['bots'], security: [{ bearer: [] }] }

const WebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    secret: Type.Optional(Type.String({ maxLength: 100 })),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

const WebhookView = Type.Object({
  bot_id: Type.Integer(),
  url: Type.String(),
  /** `whsec_<base64>`: the key to verify deliveries with */
  secret: Type.String(),
  is_active: Type.Boolean(),
  verified_at: Nullable(Timestamp),
})

const SendBody = Type.Object({ data: Type.Unknown() }, { additionalProperties: false })
const DeliveryId = Type.Object({ delivery_id: Type.Integer() })

const DeliveryView = Type.Object({
  id: Type.Integer(),
  kind: Type.String(),
  update_id: Nullable(Type.Integer()),
  status: Type.String(),
  attempts: Type.Integer(),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  next_attempt_at: Nullable(Timestamp),
  created_at: Timestamp,
  delivered_at: Nullable(Timestamp),
})

const DeliveryParams = Type.Object({ id: Id, delivery_id: Id }, { additionalProperties: false })

export const webhookRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/:id/webhook',
    {
      schema: {
        summary: "Set my bot's webhook; the signing secret is in the answer",
        ...secured,
        params: IdParams,
        body: WebhookBody,
        response: { 200: okSchema(WebhookView) },
      },
    },
    async (request) => ok(await webhooks.setWebhook(ctx, request.user, request.params.id, request.body)),
  )

  app.post(
    '/:id/webhook/send',
    {
      schema: {
        summary: "Queue data for my bot's webhook",
        ...secured,
        params: IdParams,
        body: SendBody,
        response: { 200: okSchema(DeliveryId) },
      },
    },
    async (request) => ok(await webhooks.sendCustom(ctx, request.user, request.params.id, request.body.data)),
  )

  app.get(
    '/:id/deliveries',
    {
      schema: {
        summary: "My bot's webhook deliveries, newest first",
        ...secured,
        params: IdParams,
        querystring: PageQuery,
        response: { 200: okPageSchema(DeliveryView) },
      },
    },
    async (request) => {
      const { page, per_page: perPage } = request.query
      const { items, total } = await webhooks.listDeliveries(ctx, request.user, request.params.id, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )

  app.post(
    '/:id/deliveries/:delivery_id/redeliver',
    {
      schema: {
        summary: 'Queue a copy of a delivered or failed delivery',
        ...secured,
        params: DeliveryParams,
        response: { 200: okSchema(DeliveryId) },
      },
    },
    async (request) => ok(await webhooks.redeliver(ctx, request.user, request.params.id, request.params.delivery_id)),
  )
}
