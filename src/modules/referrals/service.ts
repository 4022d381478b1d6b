/**
 * Referrals: a user shares `{base_url}/join?ref=<username>`; whoever joins says once who invited
 * them; every REFERRAL_THRESHOLD invited users grant the inviter REWARD_DAYS of premium (a premium
 * order with provider `referral`).
 */
import type { AppContext } from '../../context.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { UserRow } from '../../db/tables.js'
import { inTransaction } from '../../events/outbox.js'
import { conflict, notFound, validationError } from '../../http/errors.js'
import * as premium from '../premium/service.js'
import * as users from '../users/service.js'
import * as repo from './repo.js'

export const REFERRAL_THRESHOLD = 10
export const REWARD_DAYS = 30

export async function mine(ctx: AppContext, me: UserRow) {
  return {
    invite_url: `${ctx.config.publicBaseUrl}/join?ref=${encodeURIComponent(me.username)}`,
    invited_count: await repo.invitedCount(ctx.db, me.id),
    threshold: REFERRAL_THRESHOLD,
  }
}

/** I say who invited me (their username as `ref`, or their id), once. */
export async function invitedBy(ctx: AppContext, me: UserRow, input: { ref?: string; user_id?: number }) {
  if ((input.ref === undefined) === (input.user_id === undefined)) throw validationError('Name who invited you: ref (their username) or user_id')
  const inviter = input.ref !== undefined ? await users.findByLogin(ctx, input.ref) : await users.findById(ctx, input.user_id!)
  if (!inviter || inviter.deleted_at !== null || inviter.is_active !== 1 || (input.ref !== undefined && inviter.username.toLowerCase() !== input.ref.toLowerCase())) {
    throw notFound('No such user to have invited you')
  }
  if (inviter.id === me.id) throw validationError('You cannot invite yourself')
  if ((await repo.inviterOf(ctx.db, me.id)) !== null) throw conflict('You already said who invited you')
  try {
    await inTransaction(ctx, async (trx, events) => {
      await repo.insert(trx, inviter.id, me.id, events.now)
      const count = await repo.invitedCount(trx, inviter.id)
      if (count % REFERRAL_THRESHOLD === 0) {
        await premium.grantPremium(trx, inviter.id, { days: REWARD_DAYS, plan: 'referral', amount: 0, currency: 'RUB', provider: 'referral' }, events.now)
      }
    })
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('You already said who invited you')
    throw error
  }
  return { inviter_id: inviter.id }
}
