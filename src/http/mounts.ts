/** The API's mount table, in code (docs/api.md). */
import type { FastifyInstance } from 'fastify'
import type { AppContext } from '../context.js'
import type { RateLimiters } from './rate-limit.js'
import { usePageHeaders } from './security-headers.js'
import { adminRoutes } from '../modules/admin/routes.js'
import { reportsAdminRoutes } from '../modules/reports/admin-routes.js'
import { authRoutes } from '../modules/auth/routes.js'
import { blockRoutes } from '../modules/blocks/routes.js'
import { botApiRoutes } from '../modules/bots/bot-api.js'
import { botRoutes } from '../modules/bots/routes.js'
import { webhookRoutes } from '../modules/bots/webhook-routes.js'
import { botCallbackRoutes } from '../modules/bots/callback-routes.js'
import { botReceiveRoutes } from '../modules/bots/receive-routes.js'
import { callRoutes } from '../modules/calls/routes.js'
import { roomRoutes, videoRoutes } from '../modules/calls/rooms-routes.js'
import { channelRoutes } from '../modules/channels/routes.js'
import { chatRoutes } from '../modules/chats/routes.js'
import { contactRoutes } from '../modules/contacts/routes.js'
import { groupRoutes } from '../modules/groups/routes.js'
import { fileRoutes } from '../modules/files/routes.js'
import { messageRoutes } from '../modules/messages/routes.js'
import { musicRoutes } from '../modules/music/routes.js'
import { pollRoutes } from '../modules/polls/routes.js'
import { pushRoutes } from '../modules/push/routes.js'
import { premiumAdminRoutes, premiumRoutes, premiumV2Routes } from '../modules/premium/routes.js'
import { avatarImageRoutes, profileRoutes } from '../modules/profile/routes.js'
import { referralRoutes } from '../modules/referrals/routes.js'
import { reportRoutes } from '../modules/reports/routes.js'
import { savedRoutes } from '../modules/saved/routes.js'
import { searchRoutes } from '../modules/search/routes.js'
import { sessionRoutes } from '../modules/sessions/routes.js'
import { settingsRoutes } from '../modules/settings/routes.js'
import { statsRoutes } from '../modules/stats/routes.js'
import { stickerImageRoutes, stickerRoutes } from '../modules/stickers/routes.js'
import { storyRoutes, storyV1Routes } from '../modules/stories/routes.js'
import { mountGateway } from '../modules/updates/gateway.js'
import { updatesRoutes } from '../modules/updates/routes.js'
import { webPages } from '../web/pages.js'
import { webRoutes } from '../web/routes.js'
import { verifyEmailPage } from '../web/verify-email.js'
import { qrLoginPage } from '../web/qr-login.js'
import { webApp } from '../web/app.js'

/** V2, and the same modules again as the V3 stub. */
export const API_PREFIXES = ['/api.v2/api', '/api.v3/api'] as const

export async function mountRoutes(app: FastifyInstance, ctx: AppContext, limiters: RateLimiters) {
  for (const prefix of API_PREFIXES) {
    await app.register(authRoutes, { ctx, limiters, prefix: `${prefix}/auth` })
    await app.register(sessionRoutes, { ctx, prefix })
    await app.register(chatRoutes, { ctx, prefix })
    await app.register(messageRoutes, { ctx, prefix })
    await app.register(groupRoutes, { ctx, prefix })
    await app.register(channelRoutes, { ctx, prefix })
    await app.register(savedRoutes, { ctx, prefix })
    await app.register(blockRoutes, { ctx, prefix })
    await app.register(contactRoutes, { ctx, limiters, prefix })
    await app.register(storyRoutes, { ctx, prefix })
    await app.register(settingsRoutes, { ctx, prefix })
    await app.register(reportRoutes, { ctx, prefix })
    await app.register(pollRoutes, { ctx, prefix })
    await app.register(musicRoutes, { ctx, prefix })
    await app.register(searchRoutes, { ctx, prefix })
    await app.register(referralRoutes, { ctx, prefix })
    await app.register(profileRoutes, { ctx, prefix })
    await app.register(premiumV2Routes, { ctx, prefix })
    await app.register(stickerRoutes, { ctx, prefix })
    await app.register(updatesRoutes, { ctx, prefix })
    await app.register(pushRoutes, { ctx, prefix })
    await app.register(callRoutes, { ctx, prefix })
    await app.register(botCallbackRoutes, { ctx, prefix })
    await app.register(roomRoutes, { ctx, prefix })
  }
  await mountGateway(app, ctx, API_PREFIXES)
  // Legacy (V1) generation: the same auth module; its login also opens the cookie session.
  await app.register(authRoutes, { ctx, limiters, prefix: '/api/auth', cookieSession: true })
  await app.register(storyV1Routes, { ctx })
  await app.register(pushRoutes, { ctx, prefix: '/api' })
  await app.register(adminRoutes, { ctx, prefix: '/api/admin' })
  await app.register(reportsAdminRoutes, { ctx, prefix: '/api/admin' })
  await app.register(premiumAdminRoutes, { ctx, prefix: '/api/admin' })
  await app.register(premiumRoutes, { ctx, prefix: '/premium' })
  await app.register(botRoutes, { ctx, prefix: '/api/bots' })
  await app.register(webhookRoutes, { ctx, prefix: '/api/bots' })
  // the shared receive endpoint, POST /api/bots/webhook, authorized with a bot token (bots/receive-routes.ts)
  await app.register(botReceiveRoutes, { ctx, prefix: '/api/bots' })
  // the Telegram-compatible Bot API, /bot<token>/<method>, in Telegram's envelope (bots/bot-api.ts)
  await app.register(botApiRoutes, { ctx })
  await app.register(statsRoutes, { ctx })
  // the video service's ICE configuration (proxied) and its reports (modules/calls/rooms-routes.ts)
  await app.register(videoRoutes, { ctx })
  // Documents a browser opens: file downloads (/files/*, and uploads at /uploads/*, tus at
  // /uploads/tus) and the web pages get the page set of security headers.
  await app.register(async (pages) => {
    usePageHeaders(pages, ctx.config.publicBaseUrl)
    await pages.register(fileRoutes, { ctx })
    await pages.register(webRoutes, { ctx })
    // the web client's pages: sign-in, registration, invites (own CSP and CSRF; web/pages.ts)
    await pages.register(webPages, { ctx, limiters })
    await pages.register(verifyEmailPage, { ctx })
    await pages.register(qrLoginPage, { ctx })
    // the single-page web app at /app (web/, built into dist/web)
    await pages.register(webApp)
    await pages.register(avatarImageRoutes)
    await pages.register(stickerImageRoutes)
  })
}
