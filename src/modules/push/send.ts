/**
 * Sending one notification to one subscription. Web Push: web-push builds the request (VAPID JWT,
 * aes128gcm encryption, TTL/Topic/Urgency headers); it goes out through lib/outbound-http.ts, which
 * refuses private addresses (unless WEBHOOK_ALLOW_PRIVATE) and bounds the time and the answer.
 * Native tokens go through a PushSender per platform; none is configured unless its environment
 * is, and a token without a sender is kept and skipped (logged by the caller).
 */
import webPush from 'web-push'
import type { AppContext } from '../../context.js'
import type { PushKind, PushSubscriptionRow } from '../../db/tables.js'
import { outboundRequest } from '../../lib/outbound-http.js'
import { vapidOf } from './vapid.js'

/** sent: the push service took it; gone: the subscription no longer exists (404/410: delete it); failed: try again later; skipped: no sender */
export type SendOutcome = 'sent' | 'gone' | 'failed' | 'skipped'

export interface WebPushOptions {
  /** collapse key: a newer notification with the same topic replaces one not yet delivered */
  topic?: string
  /** seconds the push service keeps it for an offline device */
  ttlSeconds: number
  urgency?: 'very-low' | 'low' | 'normal' | 'high'
}

/** A native push transport (FCM, APNs): configured by environment, else absent. */
export interface PushSender {
  readonly platform: Exclude<PushKind, 'webpush'>
  send(token: string, payload: string, options: WebPushOptions, signal: AbortSignal): Promise<SendOutcome>
}

/** the most of a push service's answer that is read (its body is not used) */
const MAX_ANSWER_BYTES = 16 * 1024

/** Posts an encrypted Web Push message; answers the push service's status. */
async function post(
  endpoint: string,
  headers: Record<string, string | number>,
  body: Buffer | null,
  allowPrivate: boolean,
  timeoutMs: number,
): Promise<number> {
  // Web Push is https; plain http only to a test push service on loopback
  const response = await outboundRequest(
    endpoint,
    { allowPrivate, requireHttps: true, loopbackHttp: true },
    { method: 'POST', headers, body, timeoutMs, maxResponseBytes: MAX_ANSWER_BYTES },
  )
  return response.status
}

/** Sends `payload` to one subscription. Never throws: a failure is an outcome. */
export async function sendTo(
  ctx: AppContext,
  sub: PushSubscriptionRow,
  payload: string,
  options: WebPushOptions,
  senders: ReadonlyMap<PushKind, PushSender>,
): Promise<SendOutcome> {
  const timeoutMs = ctx.config.pushTimeoutSeconds * 1000
  try {
    if (sub.kind !== 'webpush') {
      const sender = senders.get(sub.kind)
      // a native row's endpoint is `<platform>:<token>` (service.ts)
      const token = sub.endpoint.slice(sub.kind.length + 1)
      return sender ? await sender.send(token, payload, options, AbortSignal.timeout(timeoutMs)) : 'skipped'
    }
    const vapid = vapidOf(ctx.config)
    const details = webPush.generateRequestDetails(
      { endpoint: sub.endpoint, keys: { p256dh: sub.p256dh ?? '', auth: sub.auth ?? '' } },
      payload,
      {
        vapidDetails: vapid,
        TTL: options.ttlSeconds,
        contentEncoding: 'aes128gcm',
        ...(options.topic ? { topic: options.topic } : {}),
        ...(options.urgency ? { urgency: options.urgency } : {}),
      },
    )
    const status = await post(
      details.endpoint,
      details.headers as Record<string, string | number>,
      details.body,
      ctx.config.webhookAllowPrivate,
      timeoutMs,
    )
    if (status >= 200 && status < 300) return 'sent'
    if (status === 404 || status === 410) return 'gone'
    ctx.log.info({ subscriptionId: sub.id, status }, 'push service refused a notification')
    return 'failed'
  } catch (err) {
    ctx.log.info({ err, subscriptionId: sub.id }, 'push notification could not be sent')
    return 'failed'
  }
}
