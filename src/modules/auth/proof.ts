/**
 * "It is really me": what a signed-in person gives again before a step that changes how the
 * account is reached or ends it (a new password, deleting the account). An account with a
 * password gives the password; one without (signed up by emailed code, QR or an identity provider)
 * gives a current TOTP or recovery code when two-factor is on, else a code mailed for the step
 * (requestStepCode). Wrong passwords count against the sign-in name's limit, wrong codes against
 * the account's (account-limits.ts).
 */
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { conflict, forbidden, rateLimitedFor, validationError } from '../../http/errors.js'
import { sendMail } from '../mail/index.js'
import * as users from '../users/index.js'
import { MAX_CODE_ATTEMPTS, codeMadeAt, issueCode, lifetimeMs, redeemCode, withdrawCode } from './account-codes.js'
import { guarded, passwordKey, secondFactorKey } from './account-limits.js'
import { isTwoFactorEnabled, useSecondFactor } from './two-factor.js'

export type StepPurpose = 'set_password' | 'delete_account'

const ACTIONS = new Map<StepPurpose, string>([
  ['set_password', 'set a password for your Tern account'],
  ['delete_account', 'delete your Tern account'],
])

const subjectOf = (userId: number) => `user:${userId}`

/** How this account proves it is its owner: `password`, `totp` or `email_code` (none: it cannot). */
export function proofMethod(user: UserRow): 'password' | 'totp' | 'email_code' | null {
  if (user.password_hash !== null) return 'password'
  if (isTwoFactorEnabled(user)) return 'totp'
  if (user.email !== null) return 'email_code'
  return null
}

/**
 * Mails a code for a step to an account without a password or two-factor. 409 when the account
 * does not need one (it has a password or two-factor) or has no email address; 429 within
 * LOGIN_CODE_RESEND_SECONDS of the last; 503 when the mail cannot be sent.
 */
export async function requestStepCode(ctx: AppContext, userId: number, purpose: StepPurpose) {
  const user = await users.getUser(ctx, userId)
  const method = proofMethod(user)
  if (method === 'password') throw conflict('This account has a password: give it instead of a code')
  if (method === 'totp') throw conflict('This account has two-factor authentication: give a code of the authenticator app instead')
  if (method === null) throw conflict('This account has no email address to send a code to')
  const now = ctx.clock.now()
  const resendMs = ctx.config.loginCodeResendSeconds * 1000
  const issued = await issueCode(ctx, purpose, subjectOf(user.id), user.id, now - resendMs)
  if (!issued) {
    const made = (await codeMadeAt(ctx, purpose, subjectOf(user.id))) ?? now
    throw rateLimitedFor(made + resendMs - now)
  }
  try {
    await sendMail(ctx, {
      to: user.email!,
      kind: 'account_code',
      data: { code: issued.code, action: ACTIONS.get(purpose) ?? 'change your account', minutes: String(lifetimeMs(ctx) / 60_000) },
    })
  } catch (error) {
    await withdrawCode(ctx, issued)
    throw error
  }
  return { sent: true as const, email: user.email!, expires_in: lifetimeMs(ctx) / 1000, resend_in: ctx.config.loginCodeResendSeconds }
}

/**
 * Checks the proof a step was given; 400 when the account's kind of proof is missing, 403 when
 * it is wrong, 429 when the account's guessing limit is used up.
 */
export async function proveOwner(
  ctx: AppContext,
  user: UserRow,
  proof: { password?: string; code?: string },
  purpose: StepPurpose,
): Promise<void> {
  const method = proofMethod(user)
  if (method === 'password') {
    if (!proof.password) throw validationError(purpose === 'set_password' ? 'current_password is required' : 'password is required')
    const right = await guarded(ctx, passwordKey(user.username), () => users.verifyPassword(user.password_hash, proof.password!))
    if (!right) throw forbidden('The password is wrong')
    return
  }
  if (method === null) throw conflict('This account has no password, two-factor or email address to confirm the step with')
  if (!proof.code) throw validationError('code is required: this account has no password')
  const code = proof.code
  if (method === 'totp') {
    const right = await guarded(ctx, secondFactorKey(user.id), () =>
      ctx.db.transaction().execute((trx) => useSecondFactor(trx, ctx.config, user, code, ctx.clock.now())),
    )
    if (!right) throw forbidden('The code is not valid (or was used already)')
    return
  }
  let lastTry = false
  const right = await guarded(ctx, secondFactorKey(user.id), async () => {
    const redeemed = await redeemCode(ctx, purpose, subjectOf(user.id), code)
    if (!redeemed.ok) lastTry = redeemed.lastTry
    return redeemed.ok && redeemed.userId === user.id
  })
  if (!right) {
    throw forbidden(
      lastTry
        ? `Wrong code, and that was the last of ${MAX_CODE_ATTEMPTS} tries: ask for a new one`
        : 'The code is wrong or expired: check it, or ask for a new one',
    )
  }
}
