/**
 * Wires the realtime gateway (transport, src/realtime/) to the modules: sessions say who a token
 * is, messages render what the update log refers to, record delivery receipts and answer the
 * socket's requests (send, edit…), presence keeps the online state.
 */
import type { FastifyInstance } from 'fastify'
import type { AppContext } from '../../context.js'
import { rateLimited, unauthorized } from '../../http/errors.js'
import { bodyValidator } from '../../http/validation.js'
import { hashToken } from '../../lib/tokens.js'
import { registerGateway } from '../../realtime/gateway.js'
import type { SocketRequests } from '../../realtime/hooks.js'
import type { RequestSpec } from '../../realtime/protocol.js'
import { DeliveryMarks } from '../messages/index.js'
import { MESSAGE_REQUESTS, type Caller } from '../messages/index.js'
import { presentByIds } from '../messages/index.js'
import { presenceOf } from '../presence/index.js'
import { authenticate, authenticateHash } from '../sessions/index.js'

export async function mountGateway(app: FastifyInstance, ctx: AppContext, prefixes: readonly string[]) {
  const presence = presenceOf(ctx)
  await registerGateway(app, ctx, prefixes, {
    authenticate: async (token) => {
      const found = await authenticate(ctx, token)
      return found ? { userId: found.user.id, sessionId: found.sessionId, key: hashToken(token) } : null
    },
    renderMessages: presentByIds,
    presence,
    deliveries: new DeliveryMarks(ctx),
    requests: socketRequests(ctx, SOCKET_REQUESTS),
  })
}

/** Every request a socket may make, by type (the AsyncAPI document lists them too). */
export const SOCKET_REQUESTS: ReadonlyMap<string, RequestSpec<Caller>> = MESSAGE_REQUESTS

/**
 * Socket requests answered as their HTTP twins are: the session looked up again for each (a
 * revoked session or a banned user is refused before its socket has closed), the same per-user
 * write limit (WRITE_RATE_LIMIT_USER), `data` checked by the twin's body schema, then the twin's
 * service call.
 */
function socketRequests(ctx: AppContext, specs: ReadonlyMap<string, RequestSpec<Caller>>): SocketRequests {
  const checks = new Map([...specs].map(([type, spec]) => [type, bodyValidator(spec.data)]))
  return {
    types: new Set(specs.keys()),
    lane: (type, data) => (typeof data === 'object' && data !== null ? specs.get(type)!.lane(data as Record<string, unknown>) : ''),
    accept: (key, type, data) => {
      // Looked up as the request arrives, not in its turn: a burst's pipelined sends then share one
      // lookup query on PostgreSQL (sessions/token-lookups.ts) and queue for the same group commit,
      // where each waiting for the one before it made a round trip of its own.
      const session = authenticateHash(ctx, key)
      // awaited in the request's turn, where a failure is the request's own
      session.catch(() => undefined)
      return async (turn) => {
        const found = await session
        if (!found) throw unauthorized('Session is invalid or expired')
        const wait = ctx.writeLimits.perUser.take(String(found.user.id))
        if (wait !== null) throw rateLimited(wait)
        return specs.get(type)!.run({ ctx, me: found.user }, checks.get(type)!(data), turn)
      }
    },
  }
}
