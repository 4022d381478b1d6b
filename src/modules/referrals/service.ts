/**
 * Referrals: a user shares `{base_url}/join?ref=<username>`; whoever joins says once who invited
 * them; every REFERRAL_THRESHOLD invited users grant the inviter REWARD_DAYS of premium (a premium
 * order with provider `referral`).
 *
 * So that premium cannot be farmed with made-up or borrowed accounts, a referral counts only when
 * the invited account was created after the inviter first had their link (GET referrals/me), it
 * names its inviter within REFERRAL_WINDOW_DAYS of being created, and the inviter has had fewer
 * than REFERRAL_MONTHLY_CAP referrals in the last 30 days.
 */
import type { AppContext } from '../../context.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { UserRow } from '../../db/tables.js'
import { inTransaction } from '../../events/outbox.js'
import { conflict, forbidden, notFound, validationError } from '../../http/errors.js'
import * as premium from '../premium/index.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'
import { isUsable } from '../../policies/accounts.js'

export const REFERRAL_THRESHOLD = 10
export const REWARD_DAYS = 30

const MONTH_MS = 30 * 86_400_000

export async function mine(ctx: AppContext, me: UserRow) {
  // the link is shared from now on: accounts created from here may name this user
  await repo.markShared(ctx.db, me.id, ctx.clock.now())
  return {
    invite_url: `${ctx.config.publicBaseUrl}/join?ref=${encodeURIComponent(me.username)}`,
    invited_count: await repo.invitedCount(ctx.db, me.id),
    threshold: REFERRAL_THRESHOLD,
  }
}

/** I say who invited me (their username as `ref`, or their id), once. */
export async function invitedBy(ctx: AppContext, me: UserRow, input: { ref?: string; user_id?: number }) {
  if ((input.ref === undefined) === (input.user_id === undefined))
    throw validationError('Name who invited you: ref (their username) or user_id')
  const inviter = input.ref !== undefined ? await users.findByLogin(ctx, input.ref) : await users.findById(ctx, input.user_id!)
  if (!inviter || !isUsable(inviter) || (input.ref !== undefined && inviter.username.toLowerCase() !== input.ref.toLowerCase())) {
    throw notFound('No such user to have invited you')
  }
  if (inviter.id === me.id) throw validationError('You cannot invite yourself')
  if ((await repo.inviterOf(ctx.db, me.id)) !== null) throw conflict('You already said who invited you')
  const now = ctx.clock.now()
  const shared = await repo.sharedAt(ctx.db, inviter.id)
  if (shared === null || me.created_at < shared)
    throw forbidden('Only an account created after its inviter shared their invite link can name them')
  const windowDays = ctx.config.referralWindowDays
  if (now - me.created_at > windowDays * 86_400_000) throw forbidden(`An inviter is named within ${windowDays} days of joining`)
  try {
    await inTransaction(ctx, async (trx, events) => {
      // counted inside the transaction, so concurrent referrals do not pass the cap together (SQLite: one writer; PostgreSQL: the inviter's row is locked first)
      await users.lockUser(trx, inviter.id)
      if ((await repo.invitedSince(trx, inviter.id, events.now - MONTH_MS)) >= ctx.config.referralMonthlyCap) {
        throw conflict('This inviter has had as many referrals as one account may have in 30 days')
      }
      await repo.insert(trx, inviter.id, me.id, events.now)
      const count = await repo.invitedCount(trx, inviter.id)
      if (count % REFERRAL_THRESHOLD === 0) {
        await premium.grantPremium(
          trx,
          inviter.id,
          { days: REWARD_DAYS, plan: 'referral', amount: 0, currency: 'RUB', provider: 'referral' },
          events.now,
        )
      }
    })
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('You already said who invited you')
    throw error
  }
  return { inviter_id: inviter.id }
}
