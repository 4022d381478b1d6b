/** Which native push senders this deployment has (configured by environment). */
import type { AppContext } from '../../context.js'
import type { PushKind } from '../../db/tables.js'
import { createApnsSender } from './apns.js'
import { createFcmSender } from './fcm.js'
import type { PushSender } from './send.js'

const configured = new WeakMap<AppContext, ReadonlyMap<PushKind, PushSender>>()

/**
 * The native senders this deployment has, built once (a bad configuration fails the start):
 * FCM with FCM_SERVICE_ACCOUNT_FILE, APNs with APNS_KEY_FILE and its three companions. Tokens of a platform without one are
 * stored and skipped with a log line (docs/push.md).
 */
export function nativeSenders(ctx: AppContext): ReadonlyMap<PushKind, PushSender> {
  let senders = configured.get(ctx)
  if (!senders) {
    const map = new Map<PushKind, PushSender>()
    if (ctx.config.fcmServiceAccountFile) map.set('fcm', createFcmSender(ctx, ctx.config.fcmServiceAccountFile))
    if (ctx.config.apns) map.set('apns', createApnsSender(ctx, ctx.config.apns))
    configured.set(ctx, (senders = map))
  }
  return senders
}
