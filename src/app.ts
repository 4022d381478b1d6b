/** buildApp(ctx): the Fastify instance with plugins, error handling and every mount. Never listens. */
import cookie from '@fastify/cookie'
import cors from '@fastify/cors'
import helmet from '@fastify/helmet'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { AppContext } from './context.js'
import { decorateAuth } from './http/auth.js'
import { clientErrorHandler, errorHandler, frameworkErrorHandler, notFoundHandler } from './http/errors.js'
import { mountRoutes } from './http/mounts.js'
import { registerRateLimits } from './http/rate-limit.js'
import { validatorCompiler } from './http/validation.js'

const VERSION = '0.1.0'

/** Request log lines without credentials: the query string may carry a token (WebSocket). */
const serializers = {
  req: (request: { method: string; url: string; ip?: string; id?: string }) => ({
    id: request.id,
    method: request.method,
    url: request.url.replace(/([?&](?:token|access_token)=)[^&]*/gi, '$1[redacted]'),
    ip: request.ip,
  }),
}

export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log.child({}, { serializers }) as FastifyBaseLogger,
    trustProxy: ctx.config.trustProxy,
    bodyLimit: 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
    // Errors Fastify raises before routing (a bad URL encoding…) and malformed HTTP (oversized
    // headers…) get the envelope too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    // One log line per request (below), not Fastify's two: logging is a visible share of a
    // small request's cost.
    disableRequestLogging: true,
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }, 'request completed')
  })

  app.setValidatorCompiler(validatorCompiler)
  app.setErrorHandler(errorHandler)
  app.setNotFoundHandler(notFoundHandler)
  decorateAuth(app)

  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: {
        // Swagger UI (at /docs) loads its own scripts and styles from this origin only.
        'img-src': ["'self'", 'data:', 'validator.swagger.io'],
        'script-src': ["'self'"],
        // Upgrading to https only makes sense where https is served; on a plain-http LAN host the
        // browser would rewrite every same-origin URL to a port that speaks no TLS.
        'upgrade-insecure-requests': ctx.config.publicBaseUrl.startsWith('https:') ? [] : null,
      },
    },
  })
  await app.register(cors, {
    origin: ctx.config.corsOrigins.includes('*') ? '*' : ctx.config.corsOrigins.length ? ctx.config.corsOrigins : false,
    credentials: !ctx.config.corsOrigins.includes('*'),
  })
  await app.register(cookie)
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
