/**
 * The webhook-delivery job's entry (jobs/index.ts): bots/webhooks.ts with the Bot API's methods,
 * which webhook replies call. Wired here so that webhooks.ts and bot-methods.ts (whose setWebhook
 * side is in webhooks.ts) do not import each other.
 */
import type { AppContext } from '../../context.js'
import { METHODS } from './bot-methods.js'
import { deliverWebhooks as deliver } from './webhooks.js'

export const deliverWebhooks = (ctx: AppContext, signal: AbortSignal) => deliver(ctx, signal, METHODS)
