/**
 * Login tickets: a login whose first step passed (password, emailed code) and which waits for a
 * second factor. The ticket is 256-bit random and stored only as its SHA-256; it lives 5
 * minutes, takes at most 5 codes and opens one session. Which user and which step come from the
 * server's row, never from the client.
 */
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { unauthorized } from '../../http/errors.js'
import { hashToken, newToken } from '../../lib/tokens.js'
import * as users from '../users/index.js'
import { guarded, secondFactorKey } from './account-limits.js'
import * as repo from './repo.js'
import { isTwoFactorEnabled, useSecondFactor } from './two-factor.js'
import { isUsable } from '../../policies/accounts.js'

export const TICKET_LIFETIME_MS = 5 * 60_000
const MAX_CODES_PER_TICKET = 5

/** How the first step was passed; becomes the session's method. */
export type FirstStep = 'password' | 'otp' | `oauth:${string}`

export async function issueTicket(ctx: AppContext, userId: number, method: FirstStep, device: string | null): Promise<string> {
  const ticket = newToken()
  const now = ctx.clock.now()
  await repo.insertTicket(ctx.db, {
    ticket_hash: hashToken(ticket),
    user_id: userId,
    stage: 'totp',
    method,
    device: device?.slice(0, 128) ?? null,
    expires_at: now + TICKET_LIFETIME_MS,
    created_at: now,
  })
  return ticket
}

const deadTicket = () => unauthorized('This sign-in ticket is unknown, used or expired: sign in again')

/**
 * Uses a ticket with a TOTP or recovery code. Answers the user and how the login began, once the
 * code is accepted and the ticket used up (both in one transaction: a ticket lost to a race gives
 * the code back). 401 for a bad ticket or code; the fifth wrong code ends the ticket.
 */
export async function redeemTicket(
  ctx: AppContext,
  ticket: string,
  code: string,
): Promise<{ user: UserRow; method: FirstStep; device: string | null }> {
  if (typeof ticket !== 'string' || ticket.length < 20 || ticket.length > 128) throw deadTicket()
  const now = ctx.clock.now()
  const row = await repo.findTicket(ctx.db, hashToken(ticket))
  if (row?.stage !== 'totp' || row.used_at !== null || row.expires_at <= now) throw deadTicket()
  let user: UserRow | undefined
  // wrong codes also count per account, across tickets and IPs (account-limits.ts)
  const accepted = await guarded(ctx, secondFactorKey(row.user_id), async () => {
    if (!(await repo.reserveTicketAttempt(ctx.db, row.id, now, MAX_CODES_PER_TICKET))) {
      throw unauthorized('Too many wrong codes for this sign-in: sign in again')
    }
    const found = await users.findById(ctx, row.user_id)
    // 2FA turned off meanwhile (an admin's reset): the ticket is void, not a way around the password
    if (!found || !isUsable(found) || !isTwoFactorEnabled(found)) throw deadTicket()
    user = found
    return ctx.db.transaction().execute(async (trx) => {
      if (!(await useSecondFactor(trx, ctx.config, found, code, now))) return false
      if (!(await repo.claimTicket(trx, row.id, now))) throw deadTicket()
      return true
    })
  })
  if (!accepted || !user) throw unauthorized('The code is not valid (or was used already)')
  return { user, method: row.method as FirstStep, device: row.device }
}
