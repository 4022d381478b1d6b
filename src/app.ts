/** buildApp(ctx): the Fastify instance with plugins, error handling and every mount. Never listens. */
import cookie from '@fastify/cookie'
import cors from '@fastify/cors'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { AppContext } from './context.js'
import { decorateAuth } from './http/auth.js'
import { clientErrorHandler, errorHandler, frameworkErrorHandler, notFoundHandler } from './http/errors.js'
import { mountRoutes } from './http/mounts.js'
import { registerRateLimits } from './http/rate-limit.js'
import { applySecurityHeaders } from './http/security-headers.js'
import { validatorCompiler } from './http/validation.js'

const VERSION = '0.1.0'

/** A request URL for the log: the query string may carry a token (WebSocket), which is cut out. */
const loggedUrl = (url: string) => (url.includes('token=') ? url.replace(/([?&](?:token|access_token)=)[^&]*/gi, '$1[redacted]') : url)

/** Request log lines without credentials. */
const serializers = {
  req: (request: { method: string; url: string; ip?: string; id?: string }) => ({
    id: request.id,
    method: request.method,
    url: loggedUrl(request.url),
    ip: request.ip,
  }),
}

/**
 * One log line per request, written when the response finishes ('request completed', or 'request
 * errored' at error level); Fastify's separate 'incoming request' line is not written. Logging is
 * a visible share of a small request's cost: the completed line is built here from fields that
 * cannot hold a credential (method, the URL with tokens cut out, ip, status, time), so it skips
 * the logger's redaction, whose wildcard paths walked every field of every line. Errored lines keep it.
 */
class RequestLog extends LogController {
  constructor(private readonly access: Logger) {
    super()
  }
  override incomingRequest() {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    if (error) {
      const line = { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }
      reply.log.error({ ...line, err: error }, 'request errored')
    } else if (this.access.isLevelEnabled('info')) {
      this.access.info({
        reqId: request.id,
        req: { method: request.method, url: loggedUrl(request.url), ip: request.ip },
        res: { statusCode: reply.statusCode },
        responseTime: reply.elapsedTime,
      }, 'request completed')
    }
  }
}

export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log.child({}, { serializers }) as FastifyBaseLogger,
    logController: new RequestLog(ctx.log.child({}, { redact: [] })),
    trustProxy: ctx.config.trustProxy,
    bodyLimit: 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
    // Errors Fastify raises before routing (a bad URL encoding…) and malformed HTTP (oversized
    // headers…) get the envelope too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.setValidatorCompiler(validatorCompiler)
  app.setErrorHandler(errorHandler)
  app.setNotFoundHandler(notFoundHandler)
  decorateAuth(app)

  applySecurityHeaders(app, ctx.config.publicBaseUrl)
  // Without CORS_ORIGINS no origin gets cross-origin access: no CORS headers, no preflight route.
  if (ctx.config.corsOrigins.length) {
    await app.register(cors, {
      origin: ctx.config.corsOrigins.includes('*') ? '*' : ctx.config.corsOrigins,
      credentials: !ctx.config.corsOrigins.includes('*'),
    })
  }
  // Cookies are set by the V1 login and web pages (onSend); the one cookie read, the V1 session,
  // is parsed only when a request has no bearer token (http/auth.ts), not on every request.
  await app.register(cookie, { hook: false })
  const limiters = await registerRateLimits(app, ctx)

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Tern', version: VERSION, description: 'Messaging platform server API' },
      servers: [{ url: ctx.config.publicBaseUrl }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    },
    // The V3 mount repeats V2 exactly; documenting it twice would only add noise.
    transform: ({ schema, url }) => ({
      schema: (url.startsWith('/api.v3/') ? { ...schema, hide: true } : schema) as typeof schema,
      url,
    }),
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  await mountRoutes(app, ctx, limiters)
  return app
}
