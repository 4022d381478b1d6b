/** buildApp(ctx): the Fastify instance with plugins, error handling and every mount. Never listens. */
import cors from '@fastify/cors'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import type { TrustProxy } from './config.js'
import type { AppContext } from './context.js'
import { asyncApiDocument } from './events/asyncapi.js'
import { registerReactions } from './events/reactions.js'
import { SOCKET_REQUESTS } from './modules/updates/gateway.js'
import { createJobs, createQueue } from './jobs/index.js'
import { decorateAuth } from './http/auth.js'
import { clientErrorHandler, errorHandler, frameworkErrorHandler, notFoundHandler, rateLimited, requestTimedOut } from './http/errors.js'
import { recordMethods } from './http/methods.js'
import { transform } from './http/openapi.js'
import { mountRoutes } from './http/mounts.js'
import { observabilityRoutes } from './http/observability.js'
import { registerRateLimits } from './http/rate-limit.js'
import { requestLogging } from './http/request-log.js'
import { applySecurityHeaders, usePageHeaders } from './http/security-headers.js'
import { timedServer } from './http/timeouts.js'
import { validatorCompiler } from './http/validation.js'
import { clientKey } from './lib/client-key.js'
import { adminPanel } from './web/admin/plugin.js'

import { VERSION } from './version.js'

/** TRUST_PROXY as Fastify takes it: a hop count trusts that many proxies nearest to Tern (proxy-addr's rule). */
const trustedProxies = (trust: TrustProxy) => (typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust)

export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    // Headers and ordinary bodies must arrive within HTTP_REQUEST_TIMEOUT_SECONDS, uploads may not
    // pause for that long (http/timeouts.ts); WebSockets are untouched.
    serverFactory: (handler) => timedServer(ctx.config.httpRequestTimeoutSeconds, handler, requestTimedOut),
    ...requestLogging(ctx.log, { metrics: ctx.metrics, slowMs: ctx.config.slowRequestMs }),
    trustProxy: trustedProxies(ctx.config.trustProxy),
    bodyLimit: 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
    // Errors Fastify raises before routing (a bad URL encoding…) and malformed HTTP (oversized
    // headers…) get the envelope too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>()

  // Bodies are JSON (or multipart, and tus's stream, where those routes say so): Fastify's default
  // text/plain parser would hand a route a string its JSON schema never sees. Anything else is 415.
  app.removeContentTypeParser('text/plain')
  app.setValidatorCompiler(validatorCompiler)
  app.setErrorHandler(errorHandler)
  app.setNotFoundHandler(notFoundHandler(recordMethods(app)))
  decorateAuth(app)
  // every answer names its request, as the log lines do (the caller's own id when it sent one);
  // writes count against their client IP (http/write-limit.ts; the Bot API has Telegram's limits,
  // and the chunks of one tus upload are one write)
  const perIp = ctx.writeLimits.perIp
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    const method = request.method
    if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return done()
    const url = request.url
    if (url.startsWith('/bot') || (method === 'PATCH' && url.startsWith('/uploads/'))) return done()
    const wait = perIp.take(clientKey(request.ip))
    done(wait === null ? undefined : rateLimited(wait))
  })

  applySecurityHeaders(app, ctx.config.publicBaseUrl)
  // Without CORS_ORIGINS no origin gets cross-origin access: no CORS headers, no preflight route.
  if (ctx.config.corsOrigins.length) {
    await app.register(cors, {
      origin: ctx.config.corsOrigins.includes('*') ? '*' : ctx.config.corsOrigins,
      credentials: !ctx.config.corsOrigins.includes('*'),
      // every method the API uses (the default leaves out DELETE, PUT and PATCH)
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      // Request headers: the preflight grants those asked for (authorization, idempotency-key…).
      // Answer headers a browser script may read beyond the basic few: when to retry a 429.
      exposedHeaders: ['Retry-After', 'X-Request-Id'],
      maxAge: 600,
    })
  }
  const limiters = await registerRateLimits(app, ctx)

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Tern',
        version: VERSION,
        description: 'Messaging platform server API',
        license: { name: 'MIT', url: 'https://opensource.org/license/mit' },
      },
      // relative first: "Try it out" on /docs calls the origin the page was opened at (its CSP
      // allows only that one), whatever PUBLIC_BASE_URL says
      servers: [
        { url: '/', description: 'this server' },
        { url: ctx.config.publicBaseUrl, description: 'PUBLIC_BASE_URL' },
      ],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    },
    transform,
  })
  await app.register(async (docs) => {
    usePageHeaders(docs, ctx.config.publicBaseUrl)
    // past about 128 operations Swagger UI renders the list as it scrolls: a filter by tag finds one
    await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { filter: true } })
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  // the WebSocket protocol, generated from the same event schemas the code is typed by
  const asyncApi = asyncApiDocument({
    version: VERSION,
    publicBaseUrl: ctx.config.publicBaseUrl,
    path: '/api.v2/api/ws',
    requests: SOCKET_REQUESTS,
  })
  app.get('/asyncapi.json', { schema: { hide: true } }, async () => asyncApi)

  // every listener of committed events and of control messages, in one place, before any route
  registerReactions(ctx)
  await mountRoutes(app, ctx, limiters)
  await app.register(observabilityRoutes, { ctx })
  // the admin panel: its own cookie session, CSRF and CSP, in its own scope (web/admin/plugin.ts)
  await app.register(adminPanel, { ctx, limiters, prefix: '/admin' })

  // Periodic work (story cleanup, upload sweep, presence…) and the work queue (scheduled messages,
  // pushes, webhooks, broadcasts) run once the server is ready. The queue sleeps until its next
  // item falls due, or until new work wakes it here or on another instance (`queue.due`).
  const jobs = createJobs(ctx)
  const queue = createQueue(ctx, { instance: jobs.instance })
  jobs.recordAlso(() => queue.changedRecords())
  ctx.control.on('queue.due', ({ at }) => queue.wake(at))
  ctx.control.on('jobs.due', ({ job, at }) => jobs.wake(job, at))
  ctx.metrics.sources.jobs = () => [...jobs.figures(), ...queue.figures()]
  app.addHook('onReady', async () => {
    await jobs.start()
    queue.start()
  })
  app.addHook('onClose', async () => {
    await queue.stop()
    await jobs.stop()
  })
  return app
}
