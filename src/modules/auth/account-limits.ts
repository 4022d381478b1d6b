/**
 * Per-account limits on guessing (LOGIN_ACCOUNT_RATE_LIMIT, default 10 per 15 minutes), whatever
 * the client IP: wrong passwords per sign-in name, and wrong second-factor codes (TOTP or recovery)
 * per account. Past the limit every try is 429 `rate_limited` with Retry-After until the window
 * ends — a right password too, or the lock would tell a guesser when it guessed right.
 *
 * Passwords are counted per name as typed (lower-cased), not per account: a name nobody has is
 * counted and locked exactly like a real one, and a username and an email are counted apart, so the
 * lock tells an anonymous caller neither that a name exists nor which names belong together. Codes
 * are counted per account (the caller already got past the password).
 *
 * Each try is counted before the secret is compared, so guesses sent in parallel cannot outrun
 * the limit; a try that turns out right is given back. Counters are fixed windows that start at
 * the first counted try: in-process, or in Redis (shared by every instance) when REDIS_URL is set.
 * Names are kept only as SHA-256 hashes.
 */
import { createHash } from 'node:crypto'
import type { AppContext } from '../../context.js'
import { rateLimitedFor } from '../../http/errors.js'
import { windowCounts } from '../../lib/window-counts.js'

export const passwordKey = (login: string) => `password:${login.trim().toLowerCase()}`
export const secondFactorKey = (userId: number) => `second-factor:${userId}`

const hashed = (key: string) => createHash('sha256').update(key).digest('base64url')

const locked = (retryMs: number) => rateLimitedFor(retryMs, 'Too many failed sign-in attempts for this account')

/** Counts one try; a 429 when the window's tries are used up. */
async function reserve(ctx: AppContext, key: string): Promise<void> {
  const wait = await windowCounts(ctx, 'login-fail').take(hashed(key), ctx.config.loginAccountRateLimit)
  if (wait !== null) throw locked(wait)
}

/** Gives back a try that was right (or never compared a secret). */
const giveBack = (ctx: AppContext, key: string) => windowCounts(ctx, 'login-fail').giveBack(hashed(key))

/**
 * Runs one guess under the account's limit: `check` answers whether the secret was right. A wrong
 * one stays counted; a right one, or a check that throws (nothing was compared, e.g. a dead
 * ticket), is given back. 429 before `check` runs when the account is locked.
 */
export async function guarded(ctx: AppContext, key: string, check: () => Promise<boolean>): Promise<boolean> {
  await reserve(ctx, key)
  let right = false
  try {
    right = await check()
    return right
  } catch (error) {
    right = true
    throw error
  } finally {
    if (right) await giveBack(ctx, key)
  }
}
