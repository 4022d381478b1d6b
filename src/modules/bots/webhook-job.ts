/**
 * The webhook kinds of the work queue (jobs/index.ts): bots/webhooks.ts with the Bot API's
 * methods, which webhook replies call. Wired here so that webhooks.ts and bot-methods.ts (whose
 * setWebhook side is in webhooks.ts) do not import each other.
 */
import type { AppContext } from '../../context.js'
import { METHODS } from './bot-methods.js'
import { webhookKinds as kinds } from './webhooks.js'

export const webhookKinds = (ctx: AppContext) => kinds(ctx, METHODS)
