/**
 * Premium: plans on sale (PREMIUM_PLANS, prices in kopecks), orders paid through a payment
 * provider (providers.ts), promo codes, the subscription (since when, which plan, renewing or not)
 * and its renewal. Whether a user is premium is always read from users.premium_expires_at at the
 * moment it matters (users/present.ts isPremium), so a late job never leaves a lapsed user premium.
 *
 * Paying an order extends premium from the later of now and the current expiry, inside one
 * transaction that locks the user's row, so concurrent grants add up instead of overwriting each
 * other. An order is settled once: only a pending order can become paid or failed.
 */
import type { AppContext } from '../../context.js'
import type { PremiumPlan } from '../../config.js'
import type { Db } from '../../db/database.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { PremiumOrderRow, PremiumPromoRow, UserRow } from '../../db/tables.js'
import { inTransaction } from '../../events/outbox.js'
import { conflict, notFound, paymentsUnavailable, unauthorized, validationError } from '../../http/errors.js'
import { iso, isoOrNull } from '../../lib/time.js'
import { assertPlatformAdmin as assertAdmin } from '../../policies/accounts.js'
import { recordModeration } from '../modlog/index.js'
import { isPremium } from '../users/index.js'
import * as users from '../users/index.js'
import { providerNamed, WebhookRefused, type PaymentProvider, type PaymentResult } from './providers.js'
import * as repo from './repo.js'
import { keyReused } from '../../http/idempotency.js'

const DAY_MS = 86_400_000
export const CURRENCY = 'RUB'

// ---------------------------------------------------------------- plans

export const presentPlan = (plan: PremiumPlan) => ({ id: plan.id, title: plan.title, months: plan.months, price_rub: plan.price / 100 })

export const plans = (ctx: AppContext) => ctx.config.premiumPlans.map(presentPlan)

function planNamed(ctx: AppContext, id: string): PremiumPlan | undefined {
  return ctx.config.premiumPlans.find((plan) => plan.id === id)
}

/** `epochMs` plus `months` calendar months (the 31st of January plus one month is the end of February). */
export function addMonths(epochMs: number, months: number): number {
  const date = new Date(epochMs)
  const day = date.getUTCDate()
  date.setUTCDate(1)
  date.setUTCMonth(date.getUTCMonth() + months)
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate()
  date.setUTCDate(Math.min(day, lastDay))
  return date.getTime()
}

/** The price after a discount, in whole kopecks (rounded to the customer's favour). */
export const discounted = (price: number, percent: number) => Math.floor((price * (100 - percent)) / 100)

// ---------------------------------------------------------------- buying

export interface Purchase {
  plan: string
  payment_method?: string
  promo_code?: string
}

/**
 * Buys a plan: a pending order, paid through the configured provider (the test provider pays at
 * once; the manual one leaves it pending for an admin). A promo code lowers the amount (a 100% code:
 * an order of 0, paid without a provider). The same Idempotency-Key again answers the first order.
 */
export async function activate(ctx: AppContext, me: UserRow, input: Purchase, idempotencyKey?: string) {
  const plan = planNamed(ctx, input.plan)
  if (!plan) throw validationError(`plan: no such plan (${ctx.config.premiumPlans.map((p) => p.id).join(', ')})`)
  const provider = ctx.config.paymentProvider === null ? null : providerNamed(ctx.config.paymentProvider)!
  // without a provider only an order a promo code makes free can be had
  if (!provider && input.promo_code === undefined) throw paymentsUnavailable()
  const method = input.payment_method ?? provider?.methods[0] ?? null
  if (provider && method !== null && !provider.methods.includes(method))
    throw validationError(`payment_method: the ${provider.name} provider takes ${provider.methods.join(', ')}`)
  if (idempotencyKey !== undefined) {
    const earlier = await repo.findOrderByKey(ctx.db, me.id, idempotencyKey)
    if (earlier) return retried(ctx, earlier, plan.id, input)
  }
  const now = ctx.clock.now()
  let order: PremiumOrderRow
  try {
    order = await inTransaction(ctx, async (trx) => {
      const promo = input.promo_code === undefined ? null : await takePromo(trx, me, input.promo_code, now)
      const amount = promo ? discounted(plan.price, promo.discount_percent) : plan.price
      if (amount > 0 && !provider) throw paymentsUnavailable()
      const row = await repo.insertOrder(trx, {
        user_id: me.id,
        plan: plan.id,
        amount,
        currency: CURRENCY,
        status: 'pending',
        provider: amount === 0 || !provider ? 'promo' : provider.name,
        premium_until: null,
        created_at: now,
        kind: 'purchase',
        months: plan.months,
        payment_method: amount === 0 ? null : method,
        promo_id: promo?.id ?? null,
        idempotency_key: idempotencyKey ?? null,
      })
      if (promo) await repo.insertRedemption(trx, promo.id, me.id, row.id, now)
      return row
    })
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    // a retry raced the first request with the same key, or a second redemption raced the first
    const earlier = idempotencyKey === undefined ? undefined : await repo.findOrderByKey(ctx.db, me.id, idempotencyKey)
    if (earlier) return retried(ctx, earlier, plan.id, input)
    throw conflict('You have already redeemed this code')
  }
  const result: PaymentResult = order.amount === 0 || !provider ? { outcome: 'paid', reference: null } : await provider.createPayment(order)
  return outcome(ctx, await settle(ctx, order, result))
}

/** A promo code: the plan it is for (the first on sale by default) at its discount. */
/** A retry of an order (the same Idempotency-Key): the first order's outcome, if it asked for the same thing. */
function retried(ctx: AppContext, earlier: PremiumOrderRow, planId: string, input: Purchase) {
  const samePromo = (input.promo_code !== undefined) === (earlier.promo_id !== null)
  const sameMethod =
    input.payment_method === undefined || earlier.payment_method === null || input.payment_method === earlier.payment_method
  if (earlier.plan !== planId || !samePromo || !sameMethod) throw keyReused('Idempotency-Key', 'order')
  return outcome(ctx, earlier)
}

export function redeem(ctx: AppContext, me: UserRow, input: { code: string; plan?: string }, idempotencyKey?: string) {
  return activate(ctx, me, { plan: input.plan ?? ctx.config.premiumPlans[0].id, promo_code: input.code }, idempotencyKey)
}

/**
 * One use of a promo code for this user, inside the order's transaction: unknown 404; inactive or
 * expired 400; used up, or already redeemed by this user, 409. The use itself is a conditional
 * update (promo repo claimPromo), so a code is never redeemed more than max_uses times.
 */
async function takePromo(trx: Db, me: UserRow, code: string, now: number): Promise<PremiumPromoRow> {
  const promo = await repo.findPromoByCode(trx, code)
  if (!promo) throw notFound('No such promo code')
  const refuse = (row: PremiumPromoRow) => {
    if (row.is_active !== 1) return validationError('This promo code is no longer active')
    if (row.expires_at !== null && row.expires_at <= now) return validationError('This promo code has expired')
    return conflict('This promo code has been used up')
  }
  if (await repo.hasRedeemed(trx, promo.id, me.id)) throw conflict('You have already redeemed this code')
  if (!(await repo.claimPromo(trx, promo.id, now))) throw refuse((await repo.findPromo(trx, promo.id)) ?? promo)
  return promo
}

/**
 * Applies a provider's answer to a pending order, once: paid extends the user's premium and makes
 * the order's plan their subscription (renewing); failed gives a promo code's use back; pending
 * only records the provider's reference. Answers the order as it now stands.
 */
export async function settle(
  ctx: AppContext,
  order: PremiumOrderRow,
  result: PaymentResult,
  alsoInTransaction?: (trx: Db, now: number) => Promise<void>,
) {
  if (result.outcome === 'pending') {
    return (await repo.settleOrder(ctx.db, order.id, { provider_ref: result.reference })) ?? (await repo.findOrder(ctx.db, order.id))!
  }
  const now = ctx.clock.now()
  const settled = await inTransaction(ctx, async (trx) => {
    if (result.outcome === 'failed') {
      const failed = await repo.settleOrder(trx, order.id, { status: 'failed', provider_ref: result.reference })
      if (failed?.promo_id) {
        await repo.releasePromo(trx, failed.promo_id)
        await repo.deleteRedemption(trx, failed.promo_id, failed.user_id)
      }
      // a renewal that cannot be paid stops renewing: premium runs out at its expiry
      if (failed?.kind === 'renewal') await repo.stopRenewing(trx, failed.user_id, now)
      if (failed) await alsoInTransaction?.(trx, now)
      return failed
    }
    const paid = await repo.settleOrder(trx, order.id, { status: 'paid', provider_ref: result.reference, paid_at: now })
    if (!paid) return undefined
    const until = await extend(trx, paid.user_id, now, (from) => addMonths(from, paid.months), {
      plan: paid.plan,
      payment_method: paid.payment_method,
      auto_renew: paid.amount > 0 ? 1 : 0,
    })
    await alsoInTransaction?.(trx, now)
    return repo.setPremiumUntil(trx, paid.id, until)
  })
  return settled ?? (await repo.findOrder(ctx.db, order.id))!
}

/**
 * Extends the user's premium from the later of now and the current expiry (the user's row locked
 * meanwhile) and records the subscription; premium_since stays while premium runs on. Answers the
 * new expiry. Inside a transaction.
 */
async function extend(
  trx: Db,
  userId: number,
  now: number,
  until: (from: number) => number,
  subscription: { plan?: string; payment_method?: string | null; auto_renew?: 0 | 1 },
): Promise<number> {
  const current = await repo.lockExpiry(trx, userId)
  const running = current !== null && current > now
  const expiry = until(running ? current : now)
  await repo.setExpiry(trx, userId, expiry)
  const existing = await repo.findSubscription(trx, userId)
  await repo.saveSubscription(trx, {
    user_id: userId,
    premium_since: running ? (existing?.premium_since ?? now) : now,
    plan: subscription.plan ?? existing?.plan ?? null,
    payment_method: subscription.payment_method !== undefined ? subscription.payment_method : (existing?.payment_method ?? null),
    auto_renew: subscription.auto_renew ?? existing?.auto_renew ?? 0,
    updated_at: now,
  })
  return expiry
}

export interface Grant {
  days: number
  plan: string
  amount: number
  currency: string
  provider: string
}

/**
 * A reward (ten invited users): `grant.days` more premium and a paid order of the grant's amount
 * (0) with its provider, in the caller's transaction. Answers the new expiry.
 */
export async function grantPremium(db: Db, userId: number, grant: Grant, now: number): Promise<number> {
  const until = await extend(db, userId, now, (from) => from + grant.days * DAY_MS, {})
  await repo.insertOrder(db, {
    user_id: userId,
    plan: grant.plan,
    amount: grant.amount,
    currency: grant.currency,
    status: 'paid',
    provider: grant.provider,
    premium_until: until,
    created_at: now,
    kind: 'referral',
    paid_at: now,
  })
  return until
}

/** What an activation or redemption answers: where the user's premium stands, and the order. */
async function outcome(ctx: AppContext, order: PremiumOrderRow) {
  const user = await users.getUser(ctx, order.user_id)
  return {
    is_premium: isPremium(user, ctx.clock.now()),
    plan: order.plan,
    premium_expires_at: isoOrNull(user.premium_expires_at),
    order_id: order.id,
    order: presentOrder(order),
  }
}

export function presentOrder(order: PremiumOrderRow) {
  return {
    order_id: order.id,
    plan: order.plan,
    kind: order.kind,
    amount: order.amount,
    amount_rub: order.amount / 100,
    currency: order.currency,
    status: order.status,
    provider: order.provider,
    payment_method: order.payment_method,
    premium_until: isoOrNull(order.premium_until),
    created_at: iso(order.created_at),
    paid_at: isoOrNull(order.paid_at),
  }
}

/**
 * A provider's notification about a payment (`POST /premium/webhook/{provider}`): 404 unless the
 * provider takes webhooks and PAYMENT_WEBHOOK_SECRET is set; 401 for a wrong signature, 400 for a
 * wrong body, 404 for an order that is not this provider's. Settles the order once; a repeat
 * answers it as it stands.
 */
export async function webhook(
  ctx: AppContext,
  providerName: string,
  rawBody: string,
  headers: Record<string, string | string[] | undefined>,
) {
  const provider = providerNamed(providerName)
  const secret = ctx.config.paymentWebhookSecret
  if (!provider?.webhook || secret === null) throw notFound('No webhook here')
  let notice: { orderId: number; result: PaymentResult }
  try {
    notice = await provider.webhook(rawBody, headers, secret)
  } catch (error) {
    if (!(error instanceof WebhookRefused)) throw error
    throw error.reason === 'signature' ? unauthorized(error.message) : validationError(error.message)
  }
  const order = await repo.findOrder(ctx.db, notice.orderId)
  if (!order || order.provider !== provider.name) throw notFound('Order not found')
  const settled = order.status === 'pending' ? await settle(ctx, order, notice.result) : order
  return { order_id: settled.id, status: settled.status }
}

// ---------------------------------------------------------------- the subscription

export async function status(ctx: AppContext, me: UserRow) {
  const [user, subscription] = await Promise.all([users.getUser(ctx, me.id), repo.findSubscription(ctx.db, me.id)])
  const premium = isPremium(user, ctx.clock.now())
  return {
    is_premium: premium,
    premium_expires_at: premium ? isoOrNull(user.premium_expires_at) : null,
    plan: premium ? (subscription?.plan ?? null) : null,
    auto_renew: premium && subscription?.auto_renew === 1,
    premium_since: premium ? isoOrNull(subscription?.premium_since ?? null) : null,
    payment_method: premium ? (subscription?.payment_method ?? null) : null,
  }
}

/** Turns auto-renew off (premium runs until it expires); already off: 409. */
export async function cancel(ctx: AppContext, me: UserRow) {
  if (!(await repo.stopRenewing(ctx.db, me.id, ctx.clock.now()))) throw conflict('Auto-renew is already off')
  return status(ctx, me)
}

export async function orders(ctx: AppContext, me: UserRow) {
  return (await repo.ordersOf(ctx.db, me.id)).map(presentOrder)
}

// ---------------------------------------------------------------- renewal

/**
 * The renewal job: each subscription renewing whose premium ends within `leadMs` gets a renewal
 * order for its plan through the configured provider (one at a time; none while one is pending),
 * and is extended when it is paid. A plan no longer on sale, or a failed payment, stops renewing.
 */
export async function renewDue(ctx: AppContext, leadMs: number, signal?: AbortSignal) {
  // without a provider nothing renews (a subscription's next period would be free)
  if (ctx.config.paymentProvider === null) return { renewed: 0, failed: 0 }
  const provider = providerNamed(ctx.config.paymentProvider)!
  let renewed = 0
  let failed = 0
  for (;;) {
    const due = await repo.dueRenewals(ctx.db, ctx.clock.now() + leadMs, 100)
    if (due.length === 0 || signal?.aborted) break
    for (const subscription of due) {
      const outcome = await renewOne(ctx, provider, subscription)
      if (outcome === 'paid') renewed++
      else if (outcome === 'failed') failed++
    }
    if (due.length < 100) break
  }
  if (renewed + failed > 0) ctx.log.info({ renewed, failed }, 'premium renewal: %d renewed, %d failed', renewed, failed)
  return { renewed, failed }
}

async function renewOne(
  ctx: AppContext,
  provider: PaymentProvider,
  subscription: { user_id: number; plan: string | null; payment_method: string | null },
) {
  const now = ctx.clock.now()
  const plan = subscription.plan === null ? undefined : planNamed(ctx, subscription.plan)
  if (!plan) {
    await repo.stopRenewing(ctx.db, subscription.user_id, now)
    return 'stopped'
  }
  const method =
    subscription.payment_method !== null && provider.methods.includes(subscription.payment_method)
      ? subscription.payment_method
      : provider.methods[0]
  const order = await repo.insertOrder(ctx.db, {
    user_id: subscription.user_id,
    plan: plan.id,
    amount: plan.price,
    currency: CURRENCY,
    status: 'pending',
    provider: provider.name,
    premium_until: null,
    created_at: now,
    kind: 'renewal',
    months: plan.months,
    payment_method: method,
  })
  const settled = await settle(ctx, order, await provider.createPayment(order))
  return settled.status
}

// ---------------------------------------------------------------- the admin area

/** The manual provider's confirmation: a pending order becomes paid (ModLog). */
export async function markPaid(ctx: AppContext, admin: UserRow, orderId: number) {
  assertAdmin(admin)
  const order = await repo.findOrder(ctx.db, orderId)
  if (!order) throw notFound('Order not found')
  if (order.status !== 'pending') throw conflict(`The order is ${order.status}, not pending`)
  const provider = providerNamed(order.provider)
  if (!provider) throw conflict(`The order's provider (${order.provider}) is not available`)
  const settled = await settle(ctx, order, await provider.confirm(order), (trx, now) =>
    recordModeration(trx, admin, 'premium.order_paid', order.user_id, { order_id: order.id, amount: order.amount }, now),
  )
  if (settled.status !== 'paid') throw conflict(`The order is ${settled.status}, not pending`)
  return presentOrder(settled)
}

/**
 * Gives a paid order's money back through its provider (admin, ModLog): the order becomes
 * refunded, the premium it bought is taken off the user's expiry (not before now) and auto-renew
 * stops. Not paid, or paid nothing: 409.
 */
export async function refund(ctx: AppContext, admin: UserRow, orderId: number) {
  assertAdmin(admin)
  const order = await repo.findOrder(ctx.db, orderId)
  if (!order) throw notFound('Order not found')
  if (order.status !== 'paid') throw conflict(`The order is ${order.status}, not paid`)
  if (order.amount === 0) throw conflict('Nothing was paid for this order')
  const provider = providerNamed(order.provider)
  if (!provider) throw conflict(`The order's provider (${order.provider}) is not available`)
  if (!(await provider.refund(order)).refunded) throw conflict('The provider did not refund the payment')
  const refunded = await inTransaction(ctx, async (trx, events) => {
    const row = await repo.markRefunded(trx, order.id)
    if (!row) throw conflict('The order is no longer paid')
    const current = await repo.lockExpiry(trx, row.user_id)
    if (current !== null) await repo.setExpiry(trx, row.user_id, Math.max(events.now, addMonths(current, -row.months)))
    await repo.stopRenewing(trx, row.user_id, events.now)
    await recordModeration(trx, admin, 'premium.order_refund', row.user_id, { order_id: row.id, amount: row.amount }, events.now)
    return row
  })
  return presentOrder(refunded)
}

export async function listOrders(ctx: AppContext, admin: UserRow, status: string | undefined, page: number, perPage: number) {
  assertAdmin(admin)
  const { rows, total } = await repo.listOrders(ctx.db, status, page, perPage)
  return { items: rows.map((row) => ({ ...presentOrder(row), user_id: row.user_id })), total }
}

export function presentPromo(promo: PremiumPromoRow) {
  return {
    id: promo.id,
    code: promo.code,
    discount_percent: promo.discount_percent,
    max_uses: promo.max_uses,
    used_count: promo.used_count,
    expires_at: isoOrNull(promo.expires_at),
    is_active: promo.is_active === 1,
    created_at: iso(promo.created_at),
  }
}

export interface NewPromo {
  code: string
  discount_percent: number
  max_uses: number
  expires_at?: number | null
  is_active?: boolean
}

export async function createPromo(ctx: AppContext, admin: UserRow, input: NewPromo) {
  assertAdmin(admin)
  try {
    return presentPromo(
      await inTransaction(ctx, async (trx, events) => {
        const promo = await repo.insertPromo(trx, {
          code: input.code,
          discount_percent: input.discount_percent,
          max_uses: input.max_uses,
          expires_at: input.expires_at ?? null,
          is_active: input.is_active === false ? 0 : 1,
          created_by: admin.id,
          created_at: events.now,
        })
        await recordModeration(
          trx,
          admin,
          'premium.promo_create',
          null,
          { promo_id: promo.id, code: promo.code, discount_percent: promo.discount_percent, max_uses: promo.max_uses },
          events.now,
        )
        return promo
      }),
    )
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('A promo code with this code exists')
    throw error
  }
}

export async function listPromos(ctx: AppContext, admin: UserRow, page: number, perPage: number) {
  assertAdmin(admin)
  const { rows, total } = await repo.listPromos(ctx.db, page, perPage)
  return { items: rows.map(presentPromo), total }
}

/** Deactivates a code (no more redemptions; those made stand); already inactive: 409. */
export async function deactivatePromo(ctx: AppContext, admin: UserRow, id: number) {
  assertAdmin(admin)
  const promo = await repo.findPromo(ctx.db, id)
  if (!promo) throw notFound('Promo code not found')
  if (promo.is_active !== 1) throw conflict('This promo code is already inactive')
  return presentPromo(
    await inTransaction(ctx, async (trx, events) => {
      const row = (await repo.setPromoActive(trx, id, false))!
      await recordModeration(trx, admin, 'premium.promo_deactivate', null, { promo_id: id, code: promo.code }, events.now)
      return row
    }),
  )
}
