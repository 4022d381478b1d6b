/**
 * login_v3: sign-in in steps on one endpoint. `email` says whether an address has an account and
 * how it can sign in; `send_otp` mails a 6-digit code; `verify_otp` and `password` pass the first
 * step; `totp` finishes a login that needs the second factor. A session is opened only from the
 * server's own records: a code row it mailed, a password it checked, a ticket it issued.
 *
 * Codes: 10 minutes, single use, at most 5 tries (each try is counted before the code is
 * compared, so parallel guesses cannot outrun the limit), one per address per
 * LOGIN_CODE_RESEND_SECONDS, stored as an HMAC. An address without an account gets a code row
 * too (a random code nobody is told), so send_otp and verify_otp answer it exactly as for an
 * account; only the `email` step, which is rate limited per IP, says whether an account exists.
 */
import { randomInt, timingSafeEqual } from 'node:crypto'
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { rateLimitedFor, unauthorized, validationError } from '../../http/errors.js'
import { sendMail } from '../mail/index.js'
import * as users from '../users/index.js'
import { guarded, passwordKey } from './account-limits.js'
import * as repo from './repo.js'
import type { AuthResult, CodeSentResult, EmailLookupResult, LoginV3Body } from './schemas.js'
import { keyedHash } from './secret-box.js'
import { finishTotp, passedFirstStep, type ClientInfo, type TotpRequired } from './service.js'

const CODE_LIFETIME_MS = 10 * 60_000
const MAX_CODE_ATTEMPTS = 5

type StepResult = EmailLookupResult | CodeSentResult | AuthResult | TotpRequired
type Step = (ctx: AppContext, body: LoginV3Body, client: ClientInfo) => Promise<StepResult>

/** The field a step needs, or a 400 naming it. */
function needed<K extends 'email' | 'code' | 'password' | 'ticket'>(body: LoginV3Body, field: K): string {
  const value = body[field]
  if (typeof value !== 'string' || value === '') throw validationError(`${field} is required for step ${body.step}`)
  return value
}

const emailKey = (email: string) => email.trim().toLowerCase()
const codeHash = (ctx: AppContext, key: string, code: string) => keyedHash(ctx.config, 'login-code', `${key}:${code}`)
const wrongCode = () => unauthorized('The code is wrong or expired: check it, or ask for a new one')

async function accountOf(ctx: AppContext, email: string) {
  const user = await users.findByLogin(ctx, emailKey(email))
  // the address must be the account's email (a login name never has an @, but be exact)
  return user && user.email !== null && user.email.toLowerCase() === emailKey(email) ? user : undefined
}

const lookup: Step = async (ctx, body) => {
  const user = await accountOf(ctx, needed(body, 'email'))
  if (!user) return { exists: false, methods: [] }
  return { exists: true, methods: user.password_hash ? ['password', 'otp'] : ['otp'] }
}

const sendCode: Step = async (ctx, body) => {
  const email = needed(body, 'email')
  const key = emailKey(email)
  const user = await accountOf(ctx, email)
  const now = ctx.clock.now()
  const resendMs = ctx.config.loginCodeResendSeconds * 1000
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0')
  const hash = codeHash(ctx, key, code)
  const stored = await repo.putLoginCode(
    ctx.db,
    {
      email_key: key,
      user_id: user?.id ?? null,
      code_hash: hash,
      expires_at: now + CODE_LIFETIME_MS,
      created_at: now,
    },
    now - resendMs,
  )
  if (!stored) {
    const previous = await repo.findLoginCode(ctx.db, key)
    throw rateLimitedFor((previous?.created_at ?? now) + resendMs - now)
  }
  if (user) {
    try {
      await sendMail(ctx, { to: user.email!, kind: 'login_code', data: { code, minutes: String(CODE_LIFETIME_MS / 60_000) } })
    } catch (error) {
      // not sent: not a code, and no reason to make the user wait for the next one
      await repo.deleteCode(ctx.db, 'login_codes', stored.id, hash)
      throw error
    }
  }
  return { sent: true, expires_in: CODE_LIFETIME_MS / 1000, resend_in: ctx.config.loginCodeResendSeconds }
}

const verifyCode: Step = async (ctx, body, client) => {
  const key = emailKey(needed(body, 'email'))
  const code = needed(body, 'code').trim()
  const now = ctx.clock.now()
  const row = await repo.findLoginCode(ctx.db, key)
  if (!row || row.used_at !== null || row.expires_at <= now) throw wrongCode()
  const attempts = await repo.reserveCodeAttempt(ctx.db, 'login_codes', row.id, now, MAX_CODE_ATTEMPTS)
  if (attempts === undefined) throw unauthorized('Too many wrong codes: this code no longer works; ask for a new one')
  const matches = /^\d{6}$/.test(code) && timingSafeEqual(Buffer.from(codeHash(ctx, key, code)), Buffer.from(row.code_hash))
  if (!matches || row.user_id === null) {
    if (attempts >= MAX_CODE_ATTEMPTS) throw unauthorized('Wrong code, and that was the last try: ask for a new one')
    throw wrongCode()
  }
  if (!(await repo.claimCode(ctx.db, 'login_codes', row.id, row.code_hash, now))) throw wrongCode()
  const user = await users.findById(ctx, row.user_id)
  if (!user || user.deleted_at !== null || user.email === null || user.email.toLowerCase() !== key) throw wrongCode()
  // the code reached this address: it is the user's
  const verified = user.email_verified === 1 ? user : await users.updateUser(ctx.db, user.id, { email_verified: 1 })
  return passedFirstStep(ctx, verified, 'otp', body.device ?? null, client)
}

const password: Step = async (ctx, body, client) => {
  const email = needed(body, 'email')
  const secret = needed(body, 'password')
  let user: UserRow | undefined
  const valid = await guarded(ctx, passwordKey(email), async () => {
    user = await accountOf(ctx, email)
    return (await users.verifyPassword(user?.password_hash ?? null, secret)) && user !== undefined
  })
  if (!user || !valid) throw unauthorized('Invalid email or password')
  return passedFirstStep(ctx, user, 'password', body.device ?? null, client)
}

const totp: Step = (ctx, body, client) => finishTotp(ctx, needed(body, 'ticket'), needed(body, 'code'), client)

const STEPS = new Map<LoginV3Body['step'], Step>([
  ['email', lookup],
  ['send_otp', sendCode],
  ['verify_otp', verifyCode],
  ['password', password],
  ['totp', totp],
])

/** One login_v3 step. */
export function loginV3(ctx: AppContext, body: LoginV3Body, client: ClientInfo): Promise<StepResult> {
  const step = STEPS.get(body.step)
  if (!step) throw validationError('Unknown step')
  return step(ctx, body, client)
}
