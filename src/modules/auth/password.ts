/**
 * Passwords after sign-up. A signed-in person changes (or, without one, sets) the password after
 * proving it is them (proof.ts): every other session of theirs ends. Someone who forgot it asks
 * for a reset code by email (`password/forgot`, the same answer whether or not the address has an
 * account, the mail sent after the answer) and sets a new one with it (`password/reset`): every
 * session ends. Reset codes: account-codes.ts; limited per client IP and per address.
 */
import { createHash } from 'node:crypto'
import type { AppContext } from '../../context.js'
import { rateLimitedFor, validationError } from '../../http/errors.js'
import { clientKey } from '../../lib/client-key.js'
import { windowCounts } from '../../lib/window-counts.js'
import { CLOSE } from '../../realtime/close-codes.js'
import { sendMail } from '../mail/index.js'
import * as sessions from '../sessions/index.js'
import * as users from '../users/index.js'
import { lifetimeMs, issueCode, redeemCode } from './account-codes.js'
import { proveOwner } from './proof.js'
import { isUsable } from '../../policies/accounts.js'

const emailKey = (email: string) => email.trim().toLowerCase()
const hashed = (key: string) => createHash('sha256').update(key).digest('base64url')

const tooMany = (retryMs: number) => rateLimitedFor(retryMs, 'Too many password reset requests')

/** Changes my password; the other sessions end (with their push subscriptions and sockets). */
export async function changePassword(
  ctx: AppContext,
  userId: number,
  sessionId: number,
  input: { current_password?: string; code?: string; new_password: string },
): Promise<{ changed: true; sessions_ended: number }> {
  const user = await users.getUser(ctx, userId)
  await proveOwner(ctx, user, { password: input.current_password, code: input.code }, 'set_password')
  const passwordHash = await users.hashPassword(input.new_password)
  const ended = await ctx.db.transaction().execute(async (trx) => {
    await users.updateUser(trx, user.id, { password_hash: passwordHash })
    return sessions.revokeOtherSessions(trx, user.id, sessionId)
  })
  for (const id of ended) sessions.closeSockets(ctx, user.id, id, CLOSE.sessionRevoked)
  return { changed: true, sessions_ended: ended.length }
}

/**
 * password/forgot: a reset code and link for the address, when an account has it. The answer is
 * the same either way, and comes before the mail is handed to the SMTP server, so neither its
 * words nor its time tell whether the address has an account.
 */
export async function forgotPassword(ctx: AppContext, email: string, clientIp: string): Promise<{ sent: true; expires_in: number }> {
  const key = emailKey(email)
  const ipWait = await windowCounts(ctx, 'password-reset-ip').take(hashed(clientKey(clientIp)), ctx.config.passwordResetRateLimit)
  if (ipWait !== null) throw tooMany(ipWait)
  const addressWait = await windowCounts(ctx, 'password-reset-address').take(hashed(key), ctx.config.passwordResetEmailRateLimit)
  if (addressWait !== null) throw tooMany(addressWait)
  const found = await users.findByLogin(ctx, key)
  const user = found && found.email !== null && found.email.toLowerCase() === key && isUsable(found) ? found : undefined
  const issued = await issueCode(ctx, 'password_reset', key, user?.id ?? null, ctx.clock.now())
  if (user && issued) {
    const link = `${ctx.config.publicBaseUrl}/reset-password?reset_token=${resetLinkToken(user.email!, issued.code)}`
    const data = { code: issued.code, link, minutes: String(lifetimeMs(ctx) / 60_000) }
    // after this answer has gone: even the mail's first synchronous steps stay out of its timing
    setImmediate(() => {
      sendMail(ctx, { to: user.email!, kind: 'password_reset', data }).catch((error: unknown) => {
        ctx.log.warn({ userId: user.id, code: (error as { code?: string }).code }, 'the password reset mail was not sent')
      })
    })
  }
  return { sent: true, expires_in: lifetimeMs(ctx) / 1000 }
}

/**
 * The reset link's one parameter, `reset_token`: the address and the code together (base64url),
 * so the page can fill both in and the request log masks it like every `…token=`.
 */
export const resetLinkToken = (email: string, code: string) => Buffer.from(`${email}\n${code}`, 'utf8').toString('base64url')

/** The address and code of a reset link's token, or undefined for anything else. */
export function readResetLinkToken(token: string): { email: string; code: string } | undefined {
  if (typeof token !== 'string' || token.length > 400 || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined
  const [email, code, ...rest] = Buffer.from(token, 'base64url').toString('utf8').split('\n')
  if (rest.length > 0 || !email || !code || email.length > 254 || !/^\d{6}$/.test(code)) return undefined
  return { email, code }
}

/**
 * password/reset: a new password with the mailed code. Every session of the account ends. 400 for
 * a wrong, used or expired code (the same for an address without an account).
 */
export async function resetPassword(
  ctx: AppContext,
  input: { email: string; code: string; new_password: string },
): Promise<{ reset: true }> {
  const key = emailKey(input.email)
  const redeemed = await redeemCode(ctx, 'password_reset', key, input.code)
  if (!redeemed.ok) {
    throw validationError(
      redeemed.lastTry
        ? 'Wrong code, and that was the last try: ask for a new one'
        : 'The code is wrong or expired: check it, or ask for a new one',
    )
  }
  const user = await users.findById(ctx, redeemed.userId)
  if (!user || user.deleted_at !== null || user.email === null || user.email.toLowerCase() !== key) {
    throw validationError('The code is wrong or expired: check it, or ask for a new one')
  }
  const passwordHash = await users.hashPassword(input.new_password)
  await ctx.db.transaction().execute(async (trx) => {
    // the code reached the address: it is the account's
    await users.updateUser(trx, user.id, { password_hash: passwordHash, email_verified: 1 })
    await sessions.revokeAllSessions(trx, user.id)
  })
  sessions.closeSockets(ctx, user.id, undefined, CLOSE.sessionRevoked)
  return { reset: true }
}
