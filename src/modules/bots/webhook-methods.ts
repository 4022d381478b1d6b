/**
 * The Bot API's webhook methods (setWebhook, deleteWebhook, getWebhookInfo), as Telegram's: while a
 * webhook is set the bot's updates are posted to it (bots/webhooks.ts) and getUpdates answers 409.
 */
import type { AppContext } from '../../context.js'
import { badRequest, type Params } from './bot-params.js'
import type { AuthBot } from './service.js'
import { UPDATE_KINDS } from './updates.js'
import * as repo from './repo.js'
import * as webhookRepo from './webhook-repo.js'
import { refuseWebhookUrl, removeWebhookForBot, setWebhookForBot } from './webhooks.js'

/** bot-methods.ts' Call, restated here so the two files do not import each other */
interface Call {
  ctx: AppContext
  bot: AuthBot
  params: Params
  signal: AbortSignal
}
type Method = (call: Call) => Promise<unknown>

const SECRET_TOKEN = /^[A-Za-z0-9_-]{1,256}$/

/** allowed_updates, checked as getUpdates checks it (undefined: leave as it is). */
function allowedUpdates(call: Call): string[] | undefined {
  const allowed = call.params.stringArray('allowed_updates', 20)
  const unknown = allowed?.find((kind) => !(UPDATE_KINDS as readonly string[]).includes(kind))
  if (unknown !== undefined) throw badRequest(`allowed_updates: unknown update type "${unknown.slice(0, 64)}"`)
  return allowed
}

const setWebhook: Method = async (call) => {
  const { ctx, bot, params } = call
  const url = params.string('url', { required: true, max: 2048 })
  const secretToken = params.string('secret_token')
  if (secretToken !== undefined && !SECRET_TOKEN.test(secretToken)) {
    throw badRequest('secret_token must be 1 to 256 characters: A-Z, a-z, 0-9, _ and -')
  }
  const allowed = allowedUpdates(call)
  const drop = params.bool('drop_pending_updates') === true
  // an empty url removes the webhook, as in Telegram
  if (url === '') {
    await removeWebhookForBot(ctx, bot.bot_id, drop)
    return true
  }
  const refused = await refuseWebhookUrl(ctx, url)
  if (refused) throw badRequest(`bad webhook: ${refused}`)
  if (drop) {
    await ctx.db.transaction().execute(async (trx) => {
      await repo.deleteAllUpdates(trx, bot.bot_id)
      await webhookRepo.deletePendingUpdateDeliveries(trx, bot.bot_id)
    })
  }
  if (allowed !== undefined) await repo.setAllowedUpdates(ctx.db, bot.bot_id, allowed, ctx.clock.now())
  await setWebhookForBot(ctx, bot.bot_id, { url, secretToken: secretToken ?? null })
  return true
}

const deleteWebhook: Method = async ({ ctx, bot, params }) => {
  await removeWebhookForBot(ctx, bot.bot_id, params.bool('drop_pending_updates') === true)
  return true
}

const getWebhookInfo: Method = async ({ ctx, bot }) => {
  const [webhook, queued, inLog, app] = await Promise.all([
    webhookRepo.findWebhook(ctx.db, bot.bot_id),
    repo.countUpdates(ctx.db, bot.bot_id),
    webhookRepo.countPendingUpdateDeliveries(ctx.db, bot.bot_id),
    repo.findApp(ctx.db, bot.bot_id),
  ])
  const active = webhook !== undefined && webhook.is_active === 1
  const allowed = app?.allowed_updates
    ? typeof app.allowed_updates === 'string'
      ? JSON.parse(app.allowed_updates)
      : app.allowed_updates
    : null
  return {
    url: active ? webhook.url : '',
    has_custom_certificate: false,
    pending_update_count: queued + inLog,
    ...(active && webhook.last_error_at !== null
      ? { last_error_date: Math.floor(webhook.last_error_at / 1000), last_error_message: webhook.last_error_message ?? '' }
      : {}),
    ...(active ? { max_connections: 40 } : {}),
    ...(active && Array.isArray(allowed) && allowed.length > 0 ? { allowed_updates: allowed } : {}),
  }
}

/** Registered in bot-methods.ts' METHODS, by lower-cased name. */
export const WEBHOOK_METHODS: [string, Method][] = [
  ['setwebhook', setWebhook],
  ['deletewebhook', deleteWebhook],
  ['getwebhookinfo', getWebhookInfo],
]
