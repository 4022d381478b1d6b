import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireAdmin, requireUser } from '../../http/auth.js'
import { ok, okItems, okItemsSchema, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { validationError } from '../../http/errors.js'
import { IdParams, PageQuery } from '../../http/schemas.js'
import { emptyBodyAsObject } from '../../http/validation.js'
import { parseInstant } from '../../lib/time.js'
import * as premium from './service.js'
import { IdempotencyHeaders, idempotencyKeyOf } from '../../http/idempotency.js'
import { ActivateBody, AdminOrder, Order, OrdersQuery, Outcome, Plan, Promo, PromoBody, RedeemBody, Status } from './schemas.js'

const tags = ['premium']
const secured = { tags, security: [{ bearer: [] }] }

/** /premium/*: plans (public), activate, redeem, status, cancel, orders. */
export const premiumRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/plans',
    {
      schema: { summary: 'The premium plans on sale, prices in RUB', tags, response: { 200: okItemsSchema(Plan) } },
    },
    async () => okItems(premium.plans(ctx)),
  )

  // the provider signs the raw bytes, so they are kept as they came
  await app.register(async (hooks) => {
    hooks.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => done(null, body))
    hooks.post(
      '/webhook/:provider',
      {
        schema: {
          summary: "A payment provider's notification about a payment (signed; PAYMENT_WEBHOOK_SECRET)",
          tags,
          params: Type.Object({ provider: Type.String({ maxLength: 32 }) }),
          response: { 200: okSchema(Type.Object({ order_id: Type.Integer(), status: Type.String() })) },
        },
      },
      async (request) => {
        const raw = typeof request.body === 'string' ? request.body : ''
        return ok(await premium.webhook(ctx, (request.params as { provider: string }).provider, raw, request.headers))
      },
    )
  })

  await app.register(async (scope) => {
    const signedIn = scope.withTypeProvider<TypeBoxTypeProvider>()
    signedIn.addHook('preValidation', requireUser(ctx))
    await signedIn.register(purchaseRoutes, { ctx })

    signedIn.post(
      '/redeem',
      {
        schema: {
          summary: 'Redeem a promo code for a plan (the first on sale by default)',
          ...secured,
          headers: IdempotencyHeaders,
          body: RedeemBody,
          response: { 200: okSchema(Outcome) },
        },
      },
      async (request) => ok(await premium.redeem(ctx, request.user, request.body, idempotencyKeyOf(request))),
    )

    signedIn.post(
      '/cancel',
      {
        schema: { summary: 'Turn auto-renew off (premium runs until it expires)', ...secured, response: { 200: okSchema(Status) } },
        preValidation: emptyBodyAsObject,
      },
      async (request) => ok(await premium.cancel(ctx, request.user)),
    )

    signedIn.get(
      '/orders',
      {
        schema: { summary: 'My premium orders, newest first', ...secured, response: { 200: okItemsSchema(Order) } },
      },
      async (request) => okItems(await premium.orders(ctx, request.user)),
    )
  })
}

/** status and activate: under /premium and under V2/premium (`v2`: their OpenAPI ids say so). */
export const purchaseRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext; v2?: boolean }> = async (app, { ctx, v2 }) => {
  const id = (name: string) => (v2 ? { operationId: `${name}V2` } : {})
  app.get(
    '/status',
    {
      schema: { summary: 'Where my premium stands', ...id('getPremiumStatus'), ...secured, response: { 200: okSchema(Status) } },
    },
    async (request) => ok(await premium.status(ctx, request.user)),
  )

  app.post(
    '/activate',
    {
      schema: {
        summary: 'Buy a plan through the payment provider (Idempotency-Key: a retry is the same order)',
        ...id('postPremiumActivate'),
        ...secured,
        headers: IdempotencyHeaders,
        body: ActivateBody,
        response: { 200: okSchema(Outcome) },
      },
    },
    async (request) => ok(await premium.activate(ctx, request.user, request.body, idempotencyKeyOf(request))),
  )
}

/** V2/premium/status and V2/premium/activate. */
export const premiumV2Routes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))
  await app.register(purchaseRoutes, { ctx, v2: true, prefix: '/premium' })
}

/** /api/admin/orders and /api/admin/promos. */
export const premiumAdminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireAdmin(ctx))
  const adminTags = { tags: ['admin'], security: [{ bearer: [] }] }

  app.get(
    '/orders',
    {
      schema: {
        summary: 'Premium orders, newest first (admin)',
        ...adminTags,
        querystring: OrdersQuery,
        response: { 200: okPageSchema(AdminOrder) },
      },
    },
    async (request) => {
      const { status, page, per_page: perPage } = request.query
      const { items, total } = await premium.listOrders(ctx, request.user, status, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )

  app.post(
    '/orders/:id/mark-paid',
    {
      schema: {
        summary: 'Mark a pending order paid: the manual provider (admin)',
        ...adminTags,
        params: IdParams,
        response: { 200: okSchema(Order) },
      },
      preValidation: emptyBodyAsObject,
    },
    async (request) => ok(await premium.markPaid(ctx, request.user, request.params.id)),
  )

  app.post(
    '/orders/:id/refund',
    {
      schema: {
        summary: 'Refund a paid order through its provider; its premium is taken off (admin)',
        ...adminTags,
        params: IdParams,
        response: { 200: okSchema(Order) },
      },
      preValidation: emptyBodyAsObject,
    },
    async (request) => ok(await premium.refund(ctx, request.user, request.params.id)),
  )

  app.post(
    '/promos',
    {
      schema: { summary: 'Create a promo code (admin)', ...adminTags, body: PromoBody, response: { 200: okSchema(Promo) } },
    },
    async (request) => {
      const { expires_at: expiresAt, ...rest } = request.body
      const expires = expiresAt == null ? null : parseInstant(expiresAt)
      if (expires !== null && expires <= ctx.clock.now()) throw validationError('expires_at must be in the future')
      return ok(await premium.createPromo(ctx, request.user, { ...rest, expires_at: expires }))
    },
  )

  app.get(
    '/promos',
    {
      schema: {
        summary: 'Promo codes, newest first (admin)',
        ...adminTags,
        querystring: PageQuery,
        response: { 200: okPageSchema(Promo) },
      },
    },
    async (request) => {
      const { page, per_page: perPage } = request.query
      const { items, total } = await premium.listPromos(ctx, request.user, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )

  app.post(
    '/promos/:id/deactivate',
    {
      schema: { summary: 'Deactivate a promo code (admin)', ...adminTags, params: IdParams, response: { 200: okSchema(Promo) } },
      preValidation: emptyBodyAsObject,
    },
    async (request) => ok(await premium.deactivatePromo(ctx, request.user, request.params.id)),
  )
}
