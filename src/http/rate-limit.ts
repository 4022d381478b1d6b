/**
 * Per-route rate limits (@fastify/rate-limit), keyed by client IP (X-Forwarded-For only with
 * TRUST_PROXY). Counters live in-process, or in Redis when REDIS_URL is set so every instance
 * shares them.
 */
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import type { RateLimit } from '../config.js'
import type { AppContext } from '../context.js'
import { rateLimited } from './errors.js'

export async function registerRateLimit(app: FastifyInstance, ctx: AppContext) {
  await app.register(rateLimit, {
    global: false,
    ...(ctx.redis ? { redis: ctx.redis, nameSpace: `${ctx.config.redisPrefix}rate:` } : {}),
    errorResponseBuilder: (_request, context) => rateLimited(Math.max(1, Math.ceil(context.ttl / 1000))),
  })
}

/** Route config for a limit from the configuration. */
export const rateLimitRoute = (limit: RateLimit) => ({ max: limit.max, timeWindow: limit.windowMs })
