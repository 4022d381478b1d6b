/**
 * Email confirmation: registering with an email, changing it, or asking again mails a link
 * `{base_url}/verify-email?token=…`. The token is 256-bit random, stored only as its SHA-256,
 * lives 24 hours, works once, and confirms only the address it was sent to (a link to an old
 * address does nothing after a change). The page and `POST V2/auth/verify-email` both use it.
 *
 * Nobody can hold an address they do not own for long: an unconfirmed address lapses after
 * UNCONFIRMED_EMAIL_TTL_DAYS (then anyone may register with it or take it), and meanwhile its
 * real owner may claim it: registering with it, or changing to it, mails a claiming link instead
 * (the address is not the account's yet), and opening that link moves the address to the account
 * that confirmed it, taking it off the one that had it unconfirmed. A confirmed address is never
 * taken (409).
 */
import type { AppContext } from '../../context.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { EmailVerificationRow, UserRow } from '../../db/tables.js'
import { conflict, forbidden, rateLimitedFor, validationError } from '../../http/errors.js'
import { hashToken, newToken } from '../../lib/tokens.js'
import { sendMail } from '../mail/index.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'

const LINK_LIFETIME_MS = 24 * 3_600_000
/** the wait before another link may be asked for */
const RESEND_MS = 60_000

const badLink = () => validationError('This confirmation link is invalid, used or expired: ask for a new one')

/**
 * Mails a new confirmation link for the user's current address, or with `claim` for an address
 * another account has unconfirmed; 503 mail_unavailable when it cannot be sent.
 */
export async function sendVerification(ctx: AppContext, user: UserRow, claim?: string): Promise<void> {
  const email = claim ?? user.email
  if (!email) throw validationError('The account has no email address')
  const token = newToken()
  const now = ctx.clock.now()
  const row = await repo.putEmailVerification(ctx.db, {
    user_id: user.id,
    email,
    token_hash: hashToken(token),
    expires_at: now + LINK_LIFETIME_MS,
    created_at: now,
    claim: claim === undefined ? 0 : 1,
  })
  const link = `${ctx.config.publicBaseUrl}/verify-email?token=${token}`
  try {
    await sendMail(ctx, { to: email, kind: 'verify_email', data: { link } })
  } catch (error) {
    await repo.deleteEmailVerification(ctx.db, row.id)
    throw error
  }
}

/**
 * After registration: the link goes out without holding the answer up, and a mail that cannot be
 * sent only leaves a log line (the user asks again with verify-email/resend).
 */
export function sendVerificationLater(ctx: AppContext, user: UserRow, claim?: string): void {
  if (!user.email && claim === undefined) return
  sendVerification(ctx, user, claim).catch((error: unknown) => {
    ctx.log.warn({ userId: user.id, code: (error as { code?: string }).code }, 'the email confirmation link was not sent')
  })
}

/** verify-email/resend: a new link for my address; 409 when it is confirmed already, 429 within a minute of the last. */
export async function resendVerification(ctx: AppContext, userId: number): Promise<{ sent: true; email: string }> {
  const user = await users.getUser(ctx, userId)
  if (!user.email) throw conflict('The account has no email address')
  if (user.email_verified === 1) throw conflict('The email address is confirmed already')
  const now = ctx.clock.now()
  const last = await repo.lastEmailVerificationAt(ctx.db, user.id)
  if (last !== undefined && last + RESEND_MS > now) throw rateLimitedFor(last + RESEND_MS - now)
  await sendVerification(ctx, user)
  return { sent: true, email: user.email }
}

/** Confirms the address a link was sent to. 400 for an unknown, used or expired link. */
export async function verifyEmail(ctx: AppContext, token: string): Promise<{ email_verified: true; email: string }> {
  if (typeof token !== 'string' || token.length < 20 || token.length > 128) throw badLink()
  const now = ctx.clock.now()
  const row = await repo.findEmailVerification(ctx.db, hashToken(token))
  if (!row || row.used_at !== null || row.expires_at <= now) throw badLink()
  if (row.claim === 1) return claimEmail(ctx, row, now)
  const user = await users.findById(ctx, row.user_id)
  if (!user || user.deleted_at !== null || user.email === null || user.email.toLowerCase() !== row.email.toLowerCase()) throw badLink()
  if (!(await repo.claimEmailVerification(ctx.db, row.id, now))) throw badLink()
  await users.updateUser(ctx.db, user.id, { email_verified: 1 })
  return { email_verified: true, email: user.email }
}

/**
 * A claiming link opened: the address was reached, so it is this account's, confirmed; whichever
 * account had it unconfirmed loses it, in the same transaction. 409 when an account confirmed it
 * meanwhile.
 */
async function claimEmail(ctx: AppContext, row: EmailVerificationRow, now: number): Promise<{ email_verified: true; email: string }> {
  const user = await users.findById(ctx, row.user_id)
  if (!user || user.deleted_at !== null) throw badLink()
  try {
    await ctx.db.transaction().execute(async (trx) => {
      if (!(await repo.claimEmailVerification(trx, row.id, now))) throw badLink()
      await users.dropUnconfirmedEmail(trx, row.email)
      await users.updateUser(trx, user.id, { email: row.email, email_verified: 1, email_set_at: now })
    })
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('Another account has confirmed this email address')
    throw error
  }
  return { email_verified: true, email: row.email }
}

/**
 * Whether a used link's address is confirmed now: the page says so instead of an error when a
 * mail scanner opened the link first.
 */
export async function wasConfirmedBy(ctx: AppContext, token: string): Promise<boolean> {
  if (typeof token !== 'string' || token.length < 20 || token.length > 128) return false
  const row = await repo.findEmailVerification(ctx.db, hashToken(token))
  if (!row || row.used_at === null) return false
  const user = await users.findById(ctx, row.user_id)
  return !!user && user.email_verified === 1 && user.email?.toLowerCase() === row.email.toLowerCase()
}

/**
 * Changes my email address (my password again, when the account has one): the new address is
 * unconfirmed until its link is opened. 409 when another account has it.
 */
export async function changeEmail(
  ctx: AppContext,
  userId: number,
  input: { email: string; password?: string },
): Promise<{ email: string; email_verified: false; verification_sent: boolean }> {
  const user = await users.getUser(ctx, userId)
  if (user.password_hash !== null && !(await users.verifyPassword(user.password_hash, input.password ?? ''))) {
    throw forbidden('The password is wrong')
  }
  if (user.email !== null && user.email.toLowerCase() === input.email.toLowerCase() && user.email_verified === 1) {
    throw conflict('This is your email address already')
  }
  const standing = await users.emailStanding(ctx, input.email, user.id)
  if (standing === 'confirmed') throw conflict('This email is already registered')
  if (standing === 'unconfirmed') {
    // another account has it unconfirmed: it becomes mine once I open the link mailed to it
    let sent = true
    try {
      await sendVerification(ctx, user, input.email)
    } catch (error) {
      if ((error as { code?: string }).code !== 'mail_unavailable') throw error
      sent = false
    }
    return { email: input.email, email_verified: false, verification_sent: sent }
  }
  let changed: UserRow
  try {
    changed = await users.updateUser(ctx.db, user.id, { email: input.email, email_verified: 0, email_set_at: ctx.clock.now() })
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('This email is already registered')
    throw error
  }
  let sent = true
  try {
    await sendVerification(ctx, changed)
  } catch (error) {
    if ((error as { code?: string }).code !== 'mail_unavailable') throw error
    sent = false
  }
  return { email: input.email, email_verified: false, verification_sent: sent }
}
