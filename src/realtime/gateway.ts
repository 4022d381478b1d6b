/**
 * The real-time gateway: GET /api.v2/api/ws (docs/realtime.md). Transport only: it authenticates
 * the upgrade, keeps the connections (connection.ts, registry.ts), hands them what the fan-out
 * delivers, takes their frames (frames.ts) and requests (requests.ts), and pings them. What a token means, how a message
 * reference renders, presence and delivery receipts come from the modules through GatewayHooks
 * (wired in modules/updates/gateway.ts).
 */
import websocket from '@fastify/websocket'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AppContext } from '../context.js'
import { bearerToken, cookieToken } from '../http/auth.js'
import { forbidden, unauthorized, upgradeRequired } from '../http/errors.js'
import { CLOSE } from './close-codes.js'
import { Connection, flushFrames, frameText } from './connection.js'
import { onInbound, resumeFromUrl } from './frames.js'
import type { GatewayHooks } from './hooks.js'
import { Registry } from './registry.js'
import type { BoundRequests } from './requests.js'

function socketToken(request: FastifyRequest): string | null {
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.token
  return bearerToken(request) ?? (typeof fromQuery === 'string' ? fromQuery : null)
}

/**
 * Whether a browser opened this socket from one of Tern's own pages: its Origin is
 * PUBLIC_BASE_URL's origin or the origin the request itself was made to (scheme per TRUST_PROXY,
 * Host). WebSockets are not bound by the same-origin policy, so without this check any site could
 * open one with a visitor's cookie and read their messages.
 */
function sameOrigin(request: FastifyRequest, publicBaseUrl: string): boolean {
  const origin = request.headers.origin
  if (typeof origin !== 'string' || origin === 'null') return false
  let from: string
  try {
    from = new URL(origin).origin
  } catch {
    return false
  }
  if (from === new URL(publicBaseUrl).origin) return true
  try {
    return from === new URL(`${request.protocol}://${request.host}`).origin
  } catch {
    return false
  }
}

/**
 * The token the upgrade authenticates with: a bearer token (header or `?token=`), or else the V1
 * session cookie, accepted only from a same-origin page (a foreign Origin with the cookie is 403).
 */
function upgradeToken(request: FastifyRequest, publicBaseUrl: string): string | null {
  const token = socketToken(request)
  if (token) return token
  const cookie = cookieToken(request)
  if (cookie && !sameOrigin(request, publicBaseUrl))
    throw forbidden('The session cookie opens the gateway only from this server’s own pages (Origin)')
  return cookie
}

/** each context's open sockets (one gateway per context) */
const registries = new WeakMap<AppContext, Registry>()

/**
 * Closes this instance's sockets of a user opened with one session (all of them without
 * `sessionId`). The control channel's `sockets.close` calls it on every instance (wired at start-up).
 */
export function closeSocketsHere(ctx: AppContext, target: { userId: number; sessionId?: number; code: number; reason: string }) {
  const { userId, sessionId, code, reason } = target
  for (const connection of registries.get(ctx)?.of(userId) ?? []) {
    if (sessionId === undefined || connection.sessionId === sessionId) connection.close({ code, reason })
  }
}

export async function registerGateway(app: FastifyInstance, ctx: AppContext, prefixes: readonly string[], hooks: GatewayHooks) {
  await app.register(websocket, {
    // no compression: frames are framed by realtime/text-frames.ts, which writes them plain
    options: { maxPayload: 64 * 1024, perMessageDeflate: false },
    // On shutdown every socket hears 1001, so its client reconnects (elsewhere) and resumes.
    preClose: async function (this: FastifyInstance) {
      flushFrames()
      for (const client of this.websocketServer.clients) client.close(CLOSE.goingAway.code, CLOSE.goingAway.reason)
    },
  })
  const registry = new Registry(ctx.config.wsMaxSocketsPerUser)
  ctx.metrics.sources.openSockets = () => registry.size
  const { presence, deliveries: marks } = hooks
  await presence.start()

  registries.set(ctx, registry)
  ctx.fanout.subscribe((deliveries) => {
    for (const delivery of deliveries) {
      if ('userId' in delivery) {
        const connections = registry.of(delivery.userId)
        if (connections) for (const connection of connections) connection.deliverUser(delivery.frame)
        continue
      }
      // one serialization for every subscriber of the chat
      const connections = registry.ofChat(delivery.chatId)
      if (connections) {
        const text = frameText(delivery.frame)
        for (const connection of connections) connection.deliverChat(delivery.frame, text)
      }
      for (const connection of registry.starting) connection.deliverChat(delivery.frame)
    }
  })

  // Frames lost while pub/sub was reconnecting: every stream of every socket replays from its cursor.
  ctx.fanout.onResync(() => {
    for (const connection of registry.all()) connection.resync()
  })

  const heartbeat = setInterval(() => {
    for (const connection of registry.all()) {
      if (!connection.alive) {
        connection.socket.terminate()
        continue
      }
      connection.alive = false
      connection.socket.ping()
    }
  }, ctx.config.wsHeartbeatSeconds * 1000)
  heartbeat.unref()
  app.addHook('onClose', async () => {
    clearInterval(heartbeat)
    presence.close()
    await marks.flush()
  })

  /** who each upgrade request authenticated as (between preValidation and the socket handler) */
  const owners = new WeakMap<FastifyRequest, { userId: number; sessionId: number; key: string; token: string }>()
  let socketIds = 0
  for (const prefix of prefixes) {
    app.route({
      method: 'GET',
      url: `${prefix}/ws`,
      schema: { tags: ['realtime'], hide: true },
      preValidation: async (request) => {
        if (!request.ws) return
        const token = upgradeToken(request, ctx.config.publicBaseUrl)
        const found = token ? await hooks.authenticate(token) : null
        if (!found || !token) throw unauthorized(token ? 'Session is invalid or expired' : 'Authentication required')
        owners.set(request, { ...found, token })
      },
      // a plain HTTP request (no Upgrade) gets told what this endpoint speaks
      handler: async () => {
        throw upgradeRequired()
      },
      wsHandler: (socket, request) => {
        const { userId, sessionId, key, token } = owners.get(request)!
        const connection = new Connection(ctx, userId, sessionId, ++socketIds, socket, hooks, registry)
        const requests: BoundRequests = {
          types: hooks.requests.types,
          lane: (type, data) => hooks.requests.lane(type, data),
          accept: (type, data) => hooks.requests.accept(key, type, data),
        }
        const guard =
          <A extends unknown[]>(what: string, fn: (...args: A) => unknown) =>
          (...args: A) => {
            try {
              const result = fn(...args)
              if (result instanceof Promise) result.catch((err) => connection.crashed(what, err))
            } catch (err) {
              connection.crashed(what, err)
            }
          }
        socket.on('error', (err) => ctx.log.warn({ err, userId: connection.userId, socketId: connection.id }, 'websocket error'))
        socket.on('pong', () => (connection.alive = true))
        socket.on(
          'close',
          guard('close', () => {
            registry.remove(connection)
            if (connection.present) void presence.disconnected(connection.userId)
          }),
        )
        socket.on(
          'message',
          guard('message', (raw: unknown) => {
            connection.alive = true
            return onInbound(connection, raw, requests)
          }),
        )
        // positioned before it opens (see resumeFromUrl), so the replay comes first and nothing twice
        const resumed = resumeFromUrl(request.query)
        if (typeof resumed === 'string') return connection.close({ code: CLOSE.badResume.code, reason: resumed })
        if (resumed) connection.resume(resumed.seq, resumed.chats)
        guard('start', async () => {
          if (!registry.add(connection)) return
          // A session revoked between the upgrade's check and the registration above was announced
          // before this socket could hear it: look again now that it can.
          if (!(await hooks.authenticate(token))) return connection.close(CLOSE.sessionRevoked)
          connection.present = true
          await presence.connected(connection.userId)
          await connection.start()
        })()
      },
    })
  }
}
