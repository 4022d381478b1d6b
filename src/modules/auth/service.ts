/** Registration, password login and logout. */
import type { AppContext } from '../../context.js'
import { unauthorized } from '../../http/errors.js'
import { countersFor } from '../users/counters.js'
import { presentMe } from '../users/present.js'
import * as users from '../users/service.js'
import * as sessions from '../sessions/service.js'
import type { AuthResult, LoginBody, RegisterBody } from './schemas.js'

export interface ClientInfo {
  ipAddress: string
  userAgent: string | null
}

export async function register(ctx: AppContext, input: RegisterBody, client: ClientInfo): Promise<AuthResult> {
  const user = await users.createUser(ctx, {
    username: input.username,
    password: input.password,
    email: input.email,
    displayName: input.display_name,
  })
  const token = await sessions.createSession(ctx, user.id, { ...client, device: null })
  const now = ctx.clock.now()
  return { user: presentMe(user, now, await countersFor(ctx, user.id)), session_token: token }
}

/** Password login by username or email. Unknown login and wrong password answer alike. */
export async function login(ctx: AppContext, input: LoginBody, client: ClientInfo): Promise<AuthResult> {
  const user = await users.findByLogin(ctx, input.login)
  const valid = await users.verifyPassword(user?.password_hash ?? null, input.password)
  if (!user || !valid) throw unauthorized('Invalid login or password')
  if (user.is_active !== 1) throw unauthorized('This account is suspended')
  const token = await sessions.createSession(ctx, user.id, { ...client, device: input.device ?? null })
  const now = ctx.clock.now()
  return { user: presentMe(user, now, await countersFor(ctx, user.id)), session_token: token }
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
