/**
 * TOTP two-factor (RFC 6238: SHA-1, 6 digits, 30 s, one step of drift either way) with `otpauth`.
 * setup stores a pending secret, enable confirms it with a code and hands out 10 single-use
 * recovery codes, disable takes a code again. Secrets are sealed with the server key
 * (secret-box.ts) and never leave the server after setup; recovery codes are stored as HMACs. A
 * code is accepted once: the last accepted time step is kept, and a code of that step or an
 * earlier one is refused.
 */
import { randomInt } from 'node:crypto'
import * as OTPAuth from 'otpauth'
import QRCode from 'qrcode'
import type { Config } from '../../config.js'
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import type { UserRow } from '../../db/tables.js'
import { conflict, validationError } from '../../http/errors.js'
import * as users from '../users/index.js'
import { guarded, secondFactorKey } from './account-limits.js'
import * as repo from './repo.js'
import { keyedHash, seal, unseal } from './secret-box.js'

const PERIOD_SECONDS = 30
const DIGITS = 6
const WINDOW = 1
const RECOVERY_CODE_COUNT = 10
/** lowercase letters and digits without the easily confused 0, 1, i, l, o */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'

export interface TwoFactorSetup {
  secret: string
  otpauth_url: string
  qr_svg: string
}

/** Whether the user signs in with a second factor. */
export function isTwoFactorEnabled(user: UserRow): boolean {
  return user.two_factor_secret !== null
}

const sealContext = (userId: number) => `totp:${userId}`

function totpOf(secretBase32: string, label: string) {
  return new OTPAuth.TOTP({
    issuer: 'Tern',
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD_SECONDS,
    secret: OTPAuth.Secret.fromBase32(secretBase32),
  })
}

/** The time step a 6-digit code is valid for now (± one step), or null. */
function matchingStep(secretBase32: string, code: string, now: number): number | null {
  if (!/^\d{6}$/.test(code)) return null
  const delta = totpOf(secretBase32, 'x').validate({ token: code, timestamp: now, window: WINDOW })
  return delta === null ? null : Math.floor(now / 1000 / PERIOD_SECONDS) + delta
}

const normalizeRecoveryCode = (code: string) => code.toLowerCase().replace(/[\s-]/g, '')
const recoveryHash = (config: Readonly<Config>, userId: number, normalized: string) =>
  keyedHash(config, 'recovery-code', `${userId}:${normalized}`)

function newRecoveryCode(): string {
  let code = ''
  for (let i = 0; i < 10; i++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]
  return `${code.slice(0, 5)}-${code.slice(5)}`
}

/** Starts (or restarts) a setup: a new pending secret, shown this once. 409 when 2FA is on. */
export async function setup(ctx: AppContext, userId: number): Promise<TwoFactorSetup> {
  const user = await users.getUser(ctx, userId)
  if (isTwoFactorEnabled(user)) throw conflict('Two-factor authentication is already on; disable it first')
  const secret = new OTPAuth.Secret({ size: 20 }).base32
  const totp = totpOf(secret, user.username)
  await users.updateUser(ctx.db, user.id, { two_factor_pending_secret: seal(ctx.config, secret, sealContext(user.id)) })
  const otpauthUrl = totp.toString()
  const qrSvg = await QRCode.toString(otpauthUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
  return { secret, otpauth_url: otpauthUrl, qr_svg: qrSvg }
}

/** Confirms the pending secret with a current code: 2FA is on, and the recovery codes are shown this once. */
export async function enable(ctx: AppContext, userId: number, code: string): Promise<{ enabled: true; recovery_codes: string[] }> {
  const user = await users.getUser(ctx, userId)
  if (isTwoFactorEnabled(user)) throw conflict('Two-factor authentication is already on')
  const pending = user.two_factor_pending_secret
  const secret = pending === null ? null : unseal(ctx.config, pending, sealContext(user.id))
  if (pending === null || secret === null) throw conflict('No two-factor setup is waiting: call 2fa/setup first')
  const now = ctx.clock.now()
  const step = matchingStep(secret, code.trim(), now)
  if (step === null) throw validationError('The code is not valid: enter the current code of the authenticator app')
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode)
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await users.activateTwoFactor(trx, user.id, pending, step))) {
      throw conflict('The two-factor setup changed meanwhile: start again with 2fa/setup')
    }
    await repo.replaceRecoveryCodes(
      trx,
      user.id,
      codes.map((c) => recoveryHash(ctx.config, user.id, normalizeRecoveryCode(c))),
      now,
    )
  })
  return { enabled: true, recovery_codes: codes }
}

/** Turns 2FA off with a current TOTP code or an unused recovery code. */
export async function disable(ctx: AppContext, userId: number, code: string): Promise<{ enabled: false }> {
  const user = await users.getUser(ctx, userId)
  if (!isTwoFactorEnabled(user)) throw conflict('Two-factor authentication is off')
  // wrong codes count against the account's limit here too: a stolen session must not guess its way to turning 2FA off
  const done = await guarded(ctx, secondFactorKey(user.id), () =>
    ctx.db.transaction().execute(async (trx) => {
      if (!(await useSecondFactor(trx, ctx.config, user, code, ctx.clock.now()))) return false
      await resetTwoFactor(trx, user.id)
      return true
    }),
  )
  if (!done) throw validationError('The code is not valid (or was used already)')
  return { enabled: false }
}

/**
 * Checks a second factor of the user and uses it up: a TOTP code (its time step is recorded, so
 * it works once) or an unused recovery code. False for anything else. Run it inside the
 * transaction that acts on it, so a later refusal gives the code back.
 */
export async function useSecondFactor(db: Db, config: Readonly<Config>, user: UserRow, code: string, now: number): Promise<boolean> {
  if (typeof code !== 'string' || user.two_factor_secret === null) return false
  const trimmed = code.trim()
  if (/^\d{6}$/.test(trimmed)) {
    const secret = unseal(config, user.two_factor_secret, sealContext(user.id))
    const step = secret === null ? null : matchingStep(secret, trimmed, now)
    return step !== null && users.claimTwoFactorStep(db, user.id, step)
  }
  const normalized = normalizeRecoveryCode(trimmed)
  if (!/^[a-z0-9]{10}$/.test(normalized)) return false
  return repo.useRecoveryCode(db, user.id, recoveryHash(config, user.id, normalized), now)
}

/**
 * Turns two-factor off for a user (an admin's reset, or disable): deletes the secret, a pending
 * setup, the recovery codes and logins waiting for a code. Runs inside the caller's transaction;
 * true when 2FA was on.
 */
export async function resetTwoFactor(db: Db, userId: number): Promise<boolean> {
  const wasOn = await users.clearTwoFactor(db, userId)
  await repo.deleteTwoFactorRows(db, userId)
  return wasOn
}
