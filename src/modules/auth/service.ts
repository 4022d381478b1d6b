/** Registration (which mails the email confirmation link), password login (with its second step when two-factor is on) and logout. */
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { conflict, unauthorized } from '../../http/errors.js'
import { countersFor } from '../profile/index.js'
import { presentMe } from '../users/index.js'
import * as users from '../users/index.js'
import * as sessions from '../sessions/index.js'
import type { AuthResult, LoginBody, RegisterBody } from './schemas.js'
import { guarded, passwordKey } from './account-limits.js'
import { sendVerificationLater } from './email-verification.js'
import { issueTicket, redeemTicket, type FirstStep } from './tickets.js'
import { isTwoFactorEnabled } from './two-factor.js'

export interface ClientInfo {
  ipAddress: string
  userAgent: string | null
}

/** A login that waits for its second factor: finish it with finishTotp(ticket, code). */
export interface TotpRequired {
  next: 'totp'
  ticket: string
}

/**
 * Registration. An email address another account has unconfirmed is not given to the new
 * account yet: a claiming link goes to it instead (email-verification.ts); a confirmed one is 409.
 */
export async function register(ctx: AppContext, input: RegisterBody, client: ClientInfo): Promise<AuthResult> {
  const standing = input.email ? await users.emailStanding(ctx, input.email) : 'free'
  if (standing === 'confirmed') throw conflict('This email is already registered')
  const user = await users.createUser(ctx, {
    username: input.username,
    password: input.password,
    email: standing === 'free' ? input.email : null,
    displayName: input.display_name,
  })
  sendVerificationLater(ctx, user, standing === 'unconfirmed' ? input.email : undefined)
  return openSession(ctx, user, client, { device: null, method: 'password', twoFactorVerified: false })
}

/**
 * Password login by username or email. Unknown login and wrong password answer alike, and count
 * alike against the name's limit (account-limits.ts). With two-factor on, no session yet: a
 * ticket for the second step.
 */
export async function login(ctx: AppContext, input: LoginBody, client: ClientInfo): Promise<AuthResult | TotpRequired> {
  let user: UserRow | undefined
  const valid = await guarded(ctx, passwordKey(input.login), async () => {
    user = await users.findByLogin(ctx, input.login)
    return (await users.verifyPassword(user?.password_hash ?? null, input.password)) && user !== undefined
  })
  if (!user || !valid) throw unauthorized('Invalid login or password')
  return passedFirstStep(ctx, user, 'password', input.device ?? null, client)
}

/**
 * What follows a passed first step (password, emailed code): a session, or with two-factor on a
 * ticket for the `totp` step.
 */
export async function passedFirstStep(
  ctx: AppContext,
  user: UserRow,
  method: FirstStep,
  device: string | null,
  client: ClientInfo,
): Promise<AuthResult | TotpRequired> {
  if (user.is_active !== 1) throw unauthorized('This account is suspended')
  if (isTwoFactorEnabled(user)) return { next: 'totp', ticket: await issueTicket(ctx, user.id, method, device) }
  return openSession(ctx, user, client, { device, method, twoFactorVerified: false })
}

/** Finishes a login waiting for its second factor: a TOTP code or a recovery code, with the ticket. */
export async function finishTotp(ctx: AppContext, ticket: string, code: string, client: ClientInfo): Promise<AuthResult> {
  const { user, method, device } = await redeemTicket(ctx, ticket, code)
  return openSession(ctx, user, client, { device, method, twoFactorVerified: true })
}

/** Opens a session for a user whose sign-in is complete (every flow ends here). */
export async function openSession(
  ctx: AppContext,
  user: UserRow,
  client: ClientInfo,
  how: { device: string | null; method: string; twoFactorVerified: boolean },
): Promise<AuthResult> {
  const token = await sessions.createSession(ctx, user.id, { ...client, ...how })
  return { user: presentMe(user, ctx.clock.now(), await countersFor(ctx, user.id)), session_token: token }
}

/** Ends the current session and marks the user offline. */
export async function logout(ctx: AppContext, userId: number, sessionId: number): Promise<void> {
  await sessions.revokeSession(ctx, userId, sessionId)
  await users.markOffline(ctx, userId)
}

export async function me(ctx: AppContext, userId: number) {
  const user = await users.getUser(ctx, userId)
  return presentMe(user, ctx.clock.now(), await countersFor(ctx, userId))
}
