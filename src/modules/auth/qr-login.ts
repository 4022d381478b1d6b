/**
 * QR login: a device that wants to sign in (the new device) shows a code; a device already signed
 * in scans it, sees who asks, and approves; the new device then gets its own session.
 *
 *   generate (new device, anonymous)  → token, secret, qr_url, qr_svg, expires_at   status: pending
 *   request  (signed-in device)       → who asks (device, address, agent, place)    status: scanned
 *   authorize (the same signed-in user)                                             status: authorized
 *   status   (new device, + secret)   → the status and the account that scanned it; long-polls with `wait`
 *   login    (new device, + secret)   → a session, once (method `qr`)               status: used
 *   decline  (new device, + secret)   → not that account: the code is pending again status: pending
 *
 * The token is what the picture carries; the secret is a second 256-bit value that only the
 * generating device ever has, so whoever reads the picture (a screen share, a photo) can neither
 * follow the code nor sign in with it: status, login and decline answer 404 without the secret.
 * A stranger who scans the code first does not lock its owner out: a scan by another account
 * takes the code over until it is approved, and the new device sees which account scanned and
 * approved it (and may decline it) before it signs in. Both are stored only as SHA-256; a code
 * lives 2 minutes from generate and opens one session. With two-factor on, the approval is enough: the approving device
 * is itself signed in (with its second factor when the account has one). The new session counts as
 * finished by a second factor only when the approving session was.
 *
 * Long polling: a state change wakes the waiting status calls of this instance at once; on other
 * instances a waiting call reads its row again every second.
 */
import { timingSafeEqual } from 'node:crypto'
import QRCode from 'qrcode'
import type { AppContext } from '../../context.js'
import type { QrLoginStatus, QrLoginTokenRow } from '../../db/tables.js'
import { conflict, notFound, unauthorized } from '../../http/errors.js'
import { placeOf } from '../../lib/ip-place.js'
import { iso } from '../../lib/time.js'
import { hashToken, newToken } from '../../lib/tokens.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'
import type { AuthResult } from './schemas.js'
import { openSession, type ClientInfo } from './service.js'
import { isUsable } from '../../policies/accounts.js'

export const QR_LIFETIME_MS = 2 * 60_000
export const QR_MAX_WAIT_SECONDS = 25
/** how often a waiting status call reads its row (a change made on another instance) */
const REREAD_MS = 1000

export type QrStatus = QrLoginStatus | 'expired'

export interface QrCode {
  token: string
  secret: string
  qr_url: string
  qr_svg: string
  expires_at: string
}

export interface QrRequester {
  status: QrStatus
  device: string | null
  ip_address: string | null
  /** where the address is, as near as the server can tell (a country, or this machine / a local network) */
  place: string | null
  user_agent: string | null
  requested_at: string
  expires_at: string
}

/** The status calls waiting on this instance, per context (one per server) and token hash. */
const waiters = new WeakMap<AppContext, Map<string, Set<() => void>>>()

function wake(ctx: AppContext, tokenHash: string) {
  const waiting = waiters.get(ctx)?.get(tokenHash)
  if (waiting) for (const resolve of [...waiting]) resolve()
}

/** Resolves after `ms`, when the code changes on this instance, or when `signal` aborts. */
function changeOrTimeout(ctx: AppContext, tokenHash: string, ms: number, signal?: AbortSignal): Promise<void> {
  let byCtx = waiters.get(ctx)
  if (!byCtx) waiters.set(ctx, (byCtx = new Map()))
  const map = byCtx
  return new Promise((resolve) => {
    let set = map.get(tokenHash)
    if (!set) map.set(tokenHash, (set = new Set()))
    const waiting = set
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      waiting.delete(done)
      if (waiting.size === 0) map.delete(tokenHash)
      resolve()
    }
    const timer = setTimeout(done, Math.max(0, ms))
    waiting.add(done)
    signal?.addEventListener('abort', done, { once: true })
  })
}

export function statusOf(row: QrLoginTokenRow, now: number): QrStatus {
  if (row.status === 'used') return 'used'
  return row.expires_at <= now ? 'expired' : row.status
}

const urlOf = (ctx: AppContext, token: string) => `${ctx.config.publicBaseUrl}/qr/${token}`
const unknownCode = () => notFound('This QR code is unknown: generate a new one')

/** The row of a token as a client sent it (any string), or a 404. */
async function rowOf(ctx: AppContext, token: string): Promise<QrLoginTokenRow> {
  if (typeof token !== 'string' || token.length < 20 || token.length > 128) throw unknownCode()
  const row = await repo.findQrToken(ctx.db, hashToken(token))
  if (!row) throw unknownCode()
  return row
}

/** The row of a token and its device secret, or a 404 (the same as an unknown code: the picture alone tells nothing). */
async function deviceRowOf(ctx: AppContext, token: string, secret: string): Promise<QrLoginTokenRow> {
  const row = await rowOf(ctx, token)
  if (typeof secret !== 'string' || secret.length < 20 || secret.length > 128 || row.secret_hash === null) throw unknownCode()
  const given = Buffer.from(hashToken(secret))
  const kept = Buffer.from(row.secret_hash)
  if (given.length !== kept.length || !timingSafeEqual(given, kept)) throw unknownCode()
  return row
}

function refuseState(status: QrStatus): never {
  if (status === 'expired') throw conflict('This QR code has expired: generate a new one')
  if (status === 'used') throw conflict('This QR code was used already')
  throw conflict(`This QR code is ${status}`)
}

/** The code's picture: an SVG of its URL. */
export function qrSvg(url: string): Promise<string> {
  return QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
}

/** A new code for the device that wants to sign in. */
export async function generate(ctx: AppContext, client: ClientInfo, device: string | null): Promise<QrCode> {
  const token = newToken()
  const secret = newToken()
  const now = ctx.clock.now()
  const expiresAt = now + QR_LIFETIME_MS
  await repo.insertQrToken(ctx.db, {
    token_hash: hashToken(token),
    secret_hash: hashToken(secret),
    device: device?.slice(0, 128) ?? null,
    ip_address: client.ipAddress,
    user_agent: client.userAgent?.slice(0, 512) ?? null,
    expires_at: expiresAt,
    created_at: now,
  })
  const url = urlOf(ctx, token)
  return { token, secret, qr_url: url, qr_svg: await qrSvg(url), expires_at: iso(expiresAt) }
}

/**
 * A signed-in user scanned the code: it is theirs to approve, and they see who asks. A code
 * another account scanned and has not approved is taken over (its owner may scan a code a
 * stranger scanned first); one another account approved is refused (the new device sees that
 * account, and may decline it).
 */
export async function request(ctx: AppContext, userId: number, token: string): Promise<QrRequester> {
  const row = await rowOf(ctx, token)
  const now = ctx.clock.now()
  let status = statusOf(row, now)
  if (status === 'pending' || (status === 'scanned' && row.user_id !== userId)) {
    if (!(await repo.markQrScanned(ctx.db, row.id, userId, now))) {
      // scanned or approved by someone else (or expired) in the meantime
      const again = await repo.findQrToken(ctx.db, row.token_hash)
      if (again && again.user_id === userId) return request(ctx, userId, token)
      refuseState(again ? statusOf(again, ctx.clock.now()) : 'expired')
    }
    wake(ctx, row.token_hash)
    status = 'scanned'
  } else if (status === 'authorized') {
    if (row.user_id !== userId) throw conflict('This QR code was approved by another account')
  } else if (status !== 'scanned') {
    refuseState(status)
  }
  return {
    status,
    device: row.device,
    ip_address: row.ip_address,
    place: await placeOf(row.ip_address),
    user_agent: row.user_agent,
    requested_at: iso(row.created_at),
    expires_at: iso(row.expires_at),
  }
}

/** The user who scanned the code approves it from their signed-in session: the new device may now log in. */
export async function authorize(
  ctx: AppContext,
  userId: number,
  session: { id: number; twoFactorVerified: boolean },
  token: string,
): Promise<{ status: 'authorized'; expires_at: string }> {
  const row = await rowOf(ctx, token)
  const now = ctx.clock.now()
  const status = statusOf(row, now)
  if (status === 'pending') throw conflict('Scan the code first (step request), to see which device asks')
  if (row.user_id !== userId && (status === 'scanned' || status === 'authorized'))
    throw conflict('This QR code was scanned by another account: scan it again to approve it')
  if (status === 'authorized') return { status, expires_at: iso(row.expires_at) }
  if (status !== 'scanned') refuseState(status)
  if (!(await repo.markQrAuthorized(ctx.db, row.id, userId, session.id, session.twoFactorVerified, now))) {
    refuseState(statusOf((await repo.findQrToken(ctx.db, row.token_hash)) ?? row, ctx.clock.now()))
  }
  wake(ctx, row.token_hash)
  return { status: 'authorized', expires_at: iso(row.expires_at) }
}

/** The account that scanned (and maybe approved) a code, as the new device sees it before it signs in. */
export interface QrAccount {
  user_id: number
  username: string
  display_name: string | null
}

async function accountOf(ctx: AppContext, row: QrLoginTokenRow, status: QrStatus): Promise<QrAccount | null> {
  if ((status !== 'scanned' && status !== 'authorized') || row.user_id === null) return null
  const user = await users.findById(ctx, row.user_id)
  return user ? { user_id: user.id, username: user.username, display_name: user.display_name } : null
}

/**
 * The code's status, for the device holding its secret. With `wait` (seconds, at most 25) the
 * answer waits while the status is still `since` (default pending): it comes as soon as it
 * changes, or when the wait is over. Once scanned, `account` names who scanned it.
 */
export async function status(
  ctx: AppContext,
  token: string,
  secret: string,
  wait = 0,
  since: QrStatus = 'pending',
  signal?: AbortSignal,
): Promise<{ status: QrStatus; expires_at: string; account: QrAccount | null }> {
  const tokenHash = (await deviceRowOf(ctx, token, secret)).token_hash
  const deadline = Date.now() + Math.min(Math.max(0, wait), QR_MAX_WAIT_SECONDS) * 1000
  for (;;) {
    const row = await repo.findQrToken(ctx.db, tokenHash)
    if (!row) throw unknownCode()
    const current = statusOf(row, ctx.clock.now())
    const left = deadline - Date.now()
    if (current !== since || current === 'expired' || current === 'used' || left <= 0 || signal?.aborted) {
      return { status: current, expires_at: iso(row.expires_at), account: await accountOf(ctx, row, current) }
    }
    await changeOrTimeout(ctx, tokenHash, Math.min(REREAD_MS, left), signal)
  }
}

/**
 * The new device does not want the account that scanned (or approved) its code: the code is
 * pending again and nobody's, so its owner can scan it.
 */
export async function decline(
  ctx: AppContext,
  token: string,
  secret: string,
): Promise<{ status: QrStatus; expires_at: string; account: null }> {
  const row = await deviceRowOf(ctx, token, secret)
  const current = statusOf(row, ctx.clock.now())
  if (current === 'pending') return { status: current, expires_at: iso(row.expires_at), account: null }
  if (current !== 'scanned' && current !== 'authorized') refuseState(current)
  if (!(await repo.resetQrToken(ctx.db, row.id, ctx.clock.now()))) {
    refuseState(statusOf((await repo.findQrToken(ctx.db, row.token_hash)) ?? row, ctx.clock.now()))
  }
  wake(ctx, row.token_hash)
  return { status: 'pending', expires_at: iso(row.expires_at), account: null }
}

/** The new device, once its code is approved: a session (method `qr`) for the approving user, once. */
export async function login(ctx: AppContext, token: string, secret: string, client: ClientInfo): Promise<AuthResult> {
  const row = await deviceRowOf(ctx, token, secret)
  const now = ctx.clock.now()
  const current = statusOf(row, now)
  if (current === 'pending' || current === 'scanned') throw conflict('This QR code is not approved yet: wait for status authorized')
  if (current !== 'authorized') refuseState(current)
  const used = await repo.claimQrToken(ctx.db, row.id, now)
  if (!used) refuseState(statusOf((await repo.findQrToken(ctx.db, row.token_hash)) ?? row, ctx.clock.now()))
  wake(ctx, row.token_hash)
  const user = used.user_id === null ? undefined : await users.findById(ctx, used.user_id)
  if (!user || !isUsable(user)) throw unauthorized('This account is suspended')
  return openSession(ctx, user, client, { device: used.device, method: 'qr', twoFactorVerified: used.two_factor_verified === 1 })
}

/** What the /qr/<token> page shows: the code's picture and state, or null when it no longer works. */
export async function codePage(ctx: AppContext, token: string): Promise<{ status: QrStatus; svg: string; expiresAt: string } | null> {
  if (typeof token !== 'string' || token.length < 20 || token.length > 128) return null
  const row = await repo.findQrToken(ctx.db, hashToken(token))
  if (!row) return null
  const current = statusOf(row, ctx.clock.now())
  if (current === 'used' || current === 'expired') return null
  const svg = await QRCode.toString(urlOf(ctx, token), { type: 'svg', errorCorrectionLevel: 'M', margin: 2, width: 280 })
  return { status: current, svg, expiresAt: iso(row.expires_at) }
}
