/**
 * Named rate limits (@fastify/rate-limit), keyed by client IP (X-Forwarded-For only with
 * TRUST_PROXY; an IPv6 client by its /64, lib/client-key.ts). Each limit is one limiter shared by every mount of its route, so registering on
 * V2, V3 and /api/auth draws from the same 5-per-300 s allowance. Counters live in-process, or in
 * Redis when REDIS_URL is set so every instance shares them.
 */
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import type { RateLimit } from '../config.js'
import type { AppContext } from '../context.js'
import { clientKey } from '../lib/client-key.js'
import { rateLimitedFor } from './errors.js'

export interface RateLimiters {
  register: onRequestHookHandler
  login: onRequestHookHandler
  /** login_v3's `email` step: whether an address has an account */
  loginLookup: onRequestHookHandler
  /** new QR login codes (anonymous) */
  qrGenerate: onRequestHookHandler
  contactImport: onRequestHookHandler
}

export async function registerRateLimits(app: FastifyInstance, ctx: AppContext): Promise<RateLimiters> {
  await app.register(rateLimit, {
    global: false,
    ...(ctx.redis ? { redis: ctx.redis, nameSpace: `${ctx.config.redisPrefix}rate:` } : {}),
    errorResponseBuilder: (_request, context) => rateLimitedFor(context.ttl),
  })
  const limiter = (name: string, limit: RateLimit) =>
    app.rateLimit({
      max: limit.max,
      timeWindow: limit.windowMs,
      keyGenerator: (request) => `${name}:${clientKey(request.ip)}`,
    }) as onRequestHookHandler
  return {
    register: limiter('register', ctx.config.registerRateLimit),
    login: limiter('login', ctx.config.loginRateLimit),
    loginLookup: limiter('login-lookup', ctx.config.loginLookupRateLimit),
    qrGenerate: limiter('qr-generate', ctx.config.qrGenerateRateLimit),
    contactImport: limiter('contact-import', ctx.config.contactImportRateLimit),
  }
}
