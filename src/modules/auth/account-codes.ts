/**
 * Codes mailed for one purpose: a password reset (the subject is the address, and an address
 * without an account gets a row too, a code nobody is told, so both answer alike), or a step of a
 * signed-in account that has no password (the subject is the user). 6 digits, single use,
 * PASSWORD_RESET_CODE_MINUTES, at most 5 tries (each counted before the code is compared), stored
 * as an HMAC under the server key; a new code replaces the previous one.
 */
import { randomInt, timingSafeEqual } from 'node:crypto'
import type { AppContext } from '../../context.js'
import type { AccountCodePurpose } from '../../db/tables.js'
import * as repo from './repo.js'
import { keyedHash } from './secret-box.js'

export const MAX_CODE_ATTEMPTS = 5

const codeHash = (ctx: AppContext, purpose: AccountCodePurpose, subject: string, code: string) =>
  keyedHash(ctx.config, `account-code:${purpose}`, `${subject}:${code}`)

export const lifetimeMs = (ctx: AppContext) => ctx.config.passwordResetCodeMinutes * 60_000

export interface IssuedCode {
  id: number
  code: string
  hash: string
}

/**
 * A new code for a purpose and subject; undefined when the previous one was made after
 * `resendCutoff` (it stays).
 */
export async function issueCode(
  ctx: AppContext,
  purpose: AccountCodePurpose,
  subject: string,
  userId: number | null,
  resendCutoff: number,
): Promise<IssuedCode | undefined> {
  const now = ctx.clock.now()
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0')
  const hash = codeHash(ctx, purpose, subject, code)
  await repo.deleteOldAccountCodes(ctx.db, now - 3_600_000)
  const stored = await repo.putAccountCode(
    ctx.db,
    {
      purpose,
      subject,
      user_id: userId,
      code_hash: hash,
      expires_at: now + lifetimeMs(ctx),
      created_at: now,
    },
    resendCutoff,
  )
  return stored ? { id: stored.id, code, hash } : undefined
}

/** Drops a code that could not be mailed. */
export const withdrawCode = (ctx: AppContext, issued: IssuedCode) => repo.deleteCode(ctx.db, 'account_codes', issued.id, issued.hash)

/** When the subject's current code was made, or undefined. */
export async function codeMadeAt(ctx: AppContext, purpose: AccountCodePurpose, subject: string): Promise<number | undefined> {
  return (await repo.findAccountCode(ctx.db, purpose, subject))?.created_at
}

export type Redeemed = { ok: true; userId: number } | { ok: false; lastTry: boolean }

/**
 * Checks a code and uses it up when it is right: the user it was made for. A wrong, expired,
 * used or exhausted code (or one made for an address without an account) is not ok.
 */
export async function redeemCode(ctx: AppContext, purpose: AccountCodePurpose, subject: string, code: string): Promise<Redeemed> {
  const now = ctx.clock.now()
  const row = await repo.findAccountCode(ctx.db, purpose, subject)
  if (!row || row.used_at !== null || row.expires_at <= now) return { ok: false, lastTry: false }
  const attempts = await repo.reserveCodeAttempt(ctx.db, 'account_codes', row.id, now, MAX_CODE_ATTEMPTS)
  if (attempts === undefined) return { ok: false, lastTry: true }
  const trimmed = typeof code === 'string' ? code.trim() : ''
  const matches =
    /^\d{6}$/.test(trimmed) && timingSafeEqual(Buffer.from(codeHash(ctx, purpose, subject, trimmed)), Buffer.from(row.code_hash))
  if (!matches || row.user_id === null) return { ok: false, lastTry: attempts >= MAX_CODE_ATTEMPTS }
  if (!(await repo.claimCode(ctx.db, 'account_codes', row.id, row.code_hash, now))) return { ok: false, lastTry: false }
  return { ok: true, userId: row.user_id }
}
