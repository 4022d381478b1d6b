import { Type } from 'typebox'
import { Nullable, PageQuery, Timestamp } from '../../http/schemas.js'

/** A promo code's form */
const PROMO_CODE = { pattern: '^[A-Za-z0-9_-]{3,32}$', errorMessage: 'must be 3 to 32 letters, digits, _ or -' }

export const Plan = Type.Object({ id: Type.String(), title: Type.String(), months: Type.Integer(), price_rub: Type.Number() })

export const Order = Type.Object({
  order_id: Type.Integer(),
  plan: Type.String(),
  kind: Type.String(),
  amount: Type.Integer({ description: 'kopecks' }),
  amount_rub: Type.Number(),
  currency: Type.String(),
  status: Type.String(),
  provider: Type.String(),
  payment_method: Nullable(Type.String()),
  premium_until: Nullable(Timestamp),
  created_at: Timestamp,
  paid_at: Nullable(Timestamp),
})

export const Outcome = Type.Object({
  is_premium: Type.Boolean(),
  plan: Type.String(),
  premium_expires_at: Nullable(Timestamp),
  order_id: Type.Integer(),
  order: Order,
})

export const Status = Type.Object({
  is_premium: Type.Boolean(),
  premium_expires_at: Nullable(Timestamp),
  plan: Nullable(Type.String()),
  auto_renew: Type.Boolean(),
  premium_since: Nullable(Timestamp),
  payment_method: Nullable(Type.String()),
})

export const ActivateBody = Type.Object(
  {
    plan: Type.String({ maxLength: 32 }),
    payment_method: Type.Optional(Type.String({ maxLength: 32 })),
    promo_code: Type.Optional(Type.String(PROMO_CODE)),
  },
  { additionalProperties: false },
)

export const RedeemBody = Type.Object(
  { code: Type.String(PROMO_CODE), plan: Type.Optional(Type.String({ maxLength: 32 })) },
  { additionalProperties: false },
)

export const PromoBody = Type.Object(
  {
    code: Type.String(PROMO_CODE),
    discount_percent: Type.Integer({ minimum: 1, maximum: 100 }),
    max_uses: Type.Integer({ minimum: 1, maximum: 10_000_000 }),
    expires_at: Type.Optional(Nullable(Timestamp)),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

export const Promo = Type.Object({
  id: Type.Integer(),
  code: Type.String(),
  discount_percent: Type.Integer(),
  max_uses: Type.Integer(),
  used_count: Type.Integer(),
  expires_at: Nullable(Timestamp),
  is_active: Type.Boolean(),
  created_at: Timestamp,
})

export const OrdersQuery = Type.Object(
  {
    ...PageQuery.properties,
    status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('paid'), Type.Literal('failed'), Type.Literal('refunded')])),
  },
  { additionalProperties: false },
)

export const AdminOrder = Type.Object({ ...Order.properties, user_id: Type.Integer() })
