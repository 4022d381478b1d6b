/**
 * Push registrations and the admin's direct send. A subscription belongs to the session that
 * registered it (subscriptions.ts ends it with the session); what a new message sends is in
 * reactions.ts (queueing, after commit) and delivery.ts (the job that sends).
 */
import { createECDH } from 'node:crypto'
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { conflict, notFound, validationError } from '../../http/errors.js'
import { refuseUrl } from '../../lib/outbound-http.js'
import { assertPlatformAdmin as assertAdmin } from '../../policies/accounts.js'
import { recordModeration } from '../modlog/index.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'
import type { RegisterBody, SendBody, UnregisterBody } from './schemas.js'
import { sendTo } from './send.js'
import { nativeSenders } from './senders.js'
import { unsubscribed } from './unsubscribed.js'
import { vapidOf } from './vapid.js'

/** how long a push service keeps an admin's notification for an offline device */
const ADMIN_TTL_SECONDS = 24 * 3600
/** Web Push payloads must stay under 4 KiB once encrypted */
const MAX_PAYLOAD_BYTES = 3800

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/

/** A base64url key of exactly `bytes` bytes, or a 400 naming the field. */
function decodeKey(value: string, bytes: number, field: string): Buffer {
  const decoded = BASE64URL.test(value) ? Buffer.from(value.replace(/=+$/, ''), 'base64url') : null
  if (!decoded || decoded.length !== bytes) throw validationError(`${field} must be ${bytes} bytes, base64url`)
  return decoded
}

/** 400 unless `p256dh` is an uncompressed point on P-256 (65 bytes, 0x04 first). */
function assertP256Point(key: Buffer) {
  if (key[0] !== 4) throw validationError('subscription.keys.p256dh must be an uncompressed P-256 point')
  try {
    // computeSecret refuses a point that is not on the curve
    const ecdh = createECDH('prime256v1')
    ecdh.generateKeys()
    ecdh.computeSecret(key)
  } catch {
    throw validationError('subscription.keys.p256dh is not a point on P-256')
  }
}

const takenEndpoint = () =>
  conflict('This push endpoint is registered by another account on this device; it is free again once that account signs out here')

/**
 * Registers this device (the caller's session) for push; the same endpoint or token again, by
 * the same user, updates its row. An endpoint belongs to the user who registered it first until
 * that subscription goes (unregistered, its session ended, the push service said it is gone):
 * another user's register of it is 409 and changes nothing, so nobody can take over someone
 * else's device by knowing its endpoint or token.
 */
export async function register(ctx: AppContext, me: UserRow, sessionId: number, input: RegisterBody): Promise<{ id: number }> {
  const hasWeb = input.subscription !== undefined
  const hasToken = input.push_token !== undefined
  if (hasWeb === hasToken) throw validationError('Send either subscription (Web Push) or push_token (native), not both')
  let row: repo.NewSubscription
  if (input.subscription) {
    const { endpoint, keys } = input.subscription
    const refused = await refuseUrl(endpoint, { allowPrivate: ctx.config.webhookAllowPrivate, requireHttps: true, loopbackHttp: true })
    if (refused) throw validationError(`subscription.endpoint ${refused}`)
    const p256dh = decodeKey(keys.p256dh, 65, 'subscription.keys.p256dh')
    assertP256Point(p256dh)
    const auth = decodeKey(keys.auth, 16, 'subscription.keys.auth')
    row = {
      user_id: me.id,
      session_id: sessionId,
      kind: 'webpush',
      endpoint,
      p256dh: p256dh.toString('base64url'),
      auth: auth.toString('base64url'),
    }
  } else {
    if (input.platform === undefined) throw validationError('platform is required with push_token: fcm or apns')
    // the platform is part of the stored key: an FCM and an APNs token never meet
    row = {
      user_id: me.id,
      session_id: sessionId,
      kind: input.platform,
      endpoint: `${input.platform}:${input.push_token}`,
      p256dh: null,
      auth: null,
    }
  }
  const now = ctx.clock.now()
  try {
    const id = await ctx.db.transaction().execute(async (trx) => {
      const existing = await repo.findByEndpoint(trx, row.endpoint)
      if (existing !== undefined && existing.user_id !== me.id) throw takenEndpoint()
      if (existing === undefined && (await repo.countOfUser(trx, me.id)) >= ctx.config.pushMaxSubscriptions) {
        throw conflict(`You have ${ctx.config.pushMaxSubscriptions} push subscriptions, the most one account may hold: remove one first`)
      }
      // a register by another user that raced this one's check finds the row theirs: refused the same way
      const id = await repo.upsert(trx, row, now)
      if (id === null) throw takenEndpoint()
      return id
    })
    return { id }
  } finally {
    // committed (or not): new messages to me look my subscriptions up again
    unsubscribed(ctx)?.subscribed(me.id)
  }
}

/** Removes one of my subscriptions by id, endpoint or native token; 404 when it is not mine (or does not exist). */
export async function unregister(ctx: AppContext, me: UserRow, input: UnregisterBody): Promise<{ id: number; removed: true }> {
  const given = [input.id, input.endpoint, input.push_token].filter((v) => v !== undefined).length
  if (given !== 1) throw validationError('Send one of id, endpoint or push_token')
  let found: { id: number; user_id: number } | undefined
  if (input.id !== undefined) found = await repo.findById(ctx.db, input.id)
  else if (input.endpoint !== undefined) found = await repo.findByEndpoint(ctx.db, input.endpoint)
  else {
    const token = input.push_token!
    found = (await repo.findByEndpoint(ctx.db, `fcm:${token}`)) ?? (await repo.findByEndpoint(ctx.db, `apns:${token}`))
  }
  if (!found || found.user_id !== me.id || (await repo.deleteOfUser(ctx.db, me.id, { id: found.id })) === 0) {
    throw notFound('Push subscription not found')
  }
  return { id: found.id, removed: true }
}

export function publicKey(ctx: AppContext): { public_key: string } {
  return { public_key: vapidOf(ctx.config).publicKey }
}

/**
 * An admin's notification to one user's devices, sent now (each request bounded by
 * PUSH_TIMEOUT_SECONDS, all at once); the ModLog row records the counts after sending.
 */
export async function adminSend(ctx: AppContext, admin: UserRow, input: SendBody): Promise<{ sent: number; failed: number }> {
  assertAdmin(admin)
  const target = await users.findById(ctx, input.user_id)
  if (!target || target.deleted_at !== null) throw notFound('User not found')
  const payload = JSON.stringify({ type: 'admin', title: input.title, body: input.body, ...(input.data ? { data: input.data } : {}) })
  if (input.data && Buffer.byteLength(JSON.stringify(input.data)) > 2048) throw validationError('data must be at most 2 KiB of JSON')
  if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES)
    throw validationError(`title, body and data together must stay under ${MAX_PAYLOAD_BYTES} bytes`)
  const now = ctx.clock.now()
  const subs = await repo.liveOfUser(ctx.db, target.id, now - ctx.config.sessionTtlDays * 86_400_000)
  const senders = nativeSenders(ctx)
  const outcomes = await Promise.all(
    subs.map((sub) => sendTo(ctx, sub, payload, { ttlSeconds: ADMIN_TTL_SECONDS, urgency: 'normal' }, senders)),
  )
  for (const [i, outcome] of outcomes.entries()) if (outcome === 'gone') await repo.deleteById(ctx.db, subs[i].id)
  const sent = outcomes.filter((o) => o === 'sent').length
  const failed = outcomes.length - sent
  await ctx.db
    .transaction()
    .execute((trx) => recordModeration(trx, admin, 'push.send', target.id, { title: input.title, sent, failed }, ctx.clock.now()))
  ctx.log.info({ adminId: admin.id, action: 'push.send', targetId: target.id, sent, failed }, 'moderation action')
  return { sent, failed }
}
