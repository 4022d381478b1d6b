/**
 * Premium: what grants it and until when. Every grant extends premium_expires_at from the later of
 * now and the current expiry, and writes a premium order (the user's premium history) in the same
 * transaction. Plans, payments and promo codes come with the premium issue and use the same grant.
 */
import type { Db } from '../../db/database.js'
import * as repo from './repo.js'

const DAY_MS = 86_400_000

export interface Grant {
  days: number
  plan: string
  amount: number
  currency: string
  provider: string
}

/** Extends the user's premium by `grant.days` and records the order; answers the new expiry. Call inside a transaction. */
export async function grantPremium(db: Db, userId: number, grant: Grant, now: number): Promise<number> {
  const current = await repo.lockExpiry(db, userId)
  const until = Math.max(now, current ?? 0) + grant.days * DAY_MS
  await repo.setExpiry(db, userId, until)
  await repo.insertOrder(db, {
    user_id: userId,
    plan: grant.plan,
    amount: grant.amount,
    currency: grant.currency,
    status: 'paid',
    provider: grant.provider,
    premium_until: until,
    created_at: now,
  })
  return until
}

export const ordersOf = repo.ordersOf
