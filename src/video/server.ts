/**
 * The video signaling service (docs/calls.md): a plain HTTP server with the signaling WebSocket
 * at `/signal`, the ICE configuration at `/video/integration/config` and its own AsyncAPI
 * document. It needs no database: room state is in memory, or in Redis with REDIS_URL. Peers
 * authenticate with a room ticket signed by the main service; the video service reports joins,
 * leaves and media state back to the main service (signed with the same secret), which keeps the
 * record of participants.
 */
import { randomBytes } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Logger } from 'pino'
import { WebSocketServer, type RawData, type WebSocket } from 'ws'
import type { Config } from '../config.js'
import { systemClock, type Clock } from '../lib/time.js'
import { videoAsyncApi } from './asyncapi.js'
import { iceConfig } from './ice.js'
import { MAX_FRAME_BYTES, parseClientFrame, type ClientFrame, type MediaState, type PeerView, type SignalErrorCode } from './protocol.js'
import { createLocalRooms, createRedisRooms, type RoomStore } from './rooms.js'
import { videoSecret } from './secret.js'
import { bodySignatureValid, signBody, SIGNATURE_HEADER, verifyTicket, type TicketClaims } from './ticket.js'

/** a socket must present its ticket this soon */
const JOIN_TIMEOUT_MS = 10_000
/** bad frames (malformed, for unknown peers…) a socket may send before it is closed */
const MAX_BAD_FRAMES = 20
/** frames per second a socket may send before it is closed */
const MAX_FRAMES_PER_SECOND = 300
const HEARTBEAT_MS = 30_000

export const CLOSE = { unauthorized: 4001, forbidden: 4003, abuse: 4008, removed: 4010, rateLimited: 4029 } as const
/** a request from the main service older or newer than this is refused (a replayed one) */
const REQUEST_SKEW_MS = 5 * 60_000
const MAX_INTERNAL_BODY = 16 * 1024

export interface VideoServiceOptions {
  log: Logger
  clock?: Clock
  /** overrides VIDEO_PORT / VIDEO_HOST */
  port?: number
  host?: string
}

export interface VideoService {
  port: number
  /** http://host:port */
  url: string
  server: http.Server
  /** sockets open now */
  connections(): number
  close(): Promise<void>
}

interface Joined {
  room: string
  peer: PeerView
  claims: TicketClaims
}

function json(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

export async function startVideoService(config: Readonly<Config>, options: VideoServiceOptions): Promise<VideoService> {
  const log = options.log.child({ service: 'video' })
  const clock = options.clock ?? systemClock
  const secret = videoSecret(config)
  const rooms: RoomStore = config.redisUrl ? await createRedisRooms({ url: config.redisUrl, prefix: config.redisPrefix, log }) : createLocalRooms()
  const asyncApi = videoAsyncApi()

  /** Tells the issuing main service what happened, in order per socket, bounded by the video timeout; failures are logged. */
  const report = async (claims: TicketClaims, event: Record<string, unknown>) => {
    if (!claims.cb) return
    const body = JSON.stringify({ ...event, room_id: claims.room, user_id: claims.uid, at: clock.now() })
    try {
      const res = await fetch(`${claims.cb}/internal/video/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(secret, body) },
        body,
        signal: AbortSignal.timeout(config.videoTimeoutMs),
      })
      await res.arrayBuffer().catch(() => undefined)
      if (!res.ok) log.warn({ status: res.status, event: event.event }, 'video: the main service refused a report')
    } catch (err) {
      log.warn({ err, event: event.event }, 'video: could not report to the main service')
    }
  }

  /**
   * POST /internal/rooms/kick `{room_id, user_id, at}`, signed by the main service like the reports:
   * the user left the room over HTTP, so their sockets in it are closed (peer-left for the others).
   */
  const kick = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = []
    let size = 0
    let over = false
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_INTERNAL_BODY) over = true
      else chunks.push(chunk)
    })
    req.on('error', () => undefined)
    req.on('end', () => {
      void (async () => {
        if (over) return json(res, 413, { success: false, error: { code: 'payload_too_large', message: 'Body too large' } })
        const raw = Buffer.concat(chunks).toString('utf8')
        if (!bodySignatureValid(secret, raw, req.headers[SIGNATURE_HEADER])) return json(res, 401, { success: false, error: { code: 'unauthorized', message: 'Not signed with the video secret' } })
        let body: { room_id?: unknown; user_id?: unknown; at?: unknown } | null = null
        try {
          body = JSON.parse(raw)
        } catch {
          // refused below
        }
        if (!body || typeof body.room_id !== 'string' || !Number.isSafeInteger(body.user_id) || typeof body.at !== 'number') {
          return json(res, 400, { success: false, error: { code: 'validation_error', message: 'room_id, user_id and at are required' } })
        }
        if (Math.abs(body.at - clock.now()) > REQUEST_SKEW_MS) return json(res, 401, { success: false, error: { code: 'unauthorized', message: 'The request is too old' } })
        const kicked = await rooms.kick(body.room_id, body.user_id as number)
        json(res, 200, { success: true, data: { kicked } })
      })().catch((err) => {
        log.error({ err }, 'video: kick failed')
        if (!res.headersSent) json(res, 500, { success: false, error: { code: 'internal_error', message: 'Internal error' } })
      })
    })
  }

  const server = http.createServer((req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://video')
      if (req.method === 'POST' && url.pathname === '/internal/rooms/kick') return kick(req, res)
      if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { success: false, error: { code: 'method_not_allowed', message: 'Method not allowed' } })
      if (url.pathname === '/health') return json(res, 200, { status: 'ok', connections: wss.clients.size })
      if (url.pathname === '/asyncapi.json') return json(res, 200, asyncApi)
      if (url.pathname === '/video/integration/config') {
        // TURN credentials only for a holder of a ticket (the main service asks with one for its user)
        const auth = req.headers.authorization
        const ticket = auth?.startsWith('Bearer ') ? auth.slice(7) : url.searchParams.get('ticket')
        const check = ticket ? verifyTicket(secret, ticket, clock.now()) : null
        if (check && !check.ok) return json(res, 401, { success: false, error: { code: 'unauthorized', message: `The ticket is ${check.reason}` } })
        return json(res, 200, { success: true, data: iceConfig(config, check?.ok ? check.claims.uid : null, clock.now()) })
      }
      if (url.pathname === '/signal') return json(res, 426, { success: false, error: { code: 'upgrade_required', message: 'This endpoint speaks WebSocket' } })
      return json(res, 404, { success: false, error: { code: 'not_found', message: 'Not found' } })
    } catch (err) {
      log.error({ err }, 'video: request failed')
      if (!res.headersSent) json(res, 500, { success: false, error: { code: 'internal_error', message: 'Internal error' } })
    }
  })

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false })
  server.on('upgrade', (req, socket, head) => {
    let pathname = ''
    try {
      pathname = new URL(req.url ?? '/', 'http://video').pathname
    } catch {
      // falls through to the refusal
    }
    if (pathname !== '/signal' && pathname !== '/video/signal') {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n')
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req))
  })

  wss.on('connection', (ws: WebSocket) => {
    let joined: Joined | null = null
    let closed = false
    let bad = 0
    let windowStart = clock.now()
    let inWindow = 0
    let alive = true
    /** frames are handled one after another (room operations may wait on Redis) */
    let queue: Promise<void> = Promise.resolve()
    /** reports to the main service go out in order */
    let reports: Promise<void> = Promise.resolve()
    const send = (frame: unknown) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame))
    }
    const deliver = (text: string) => {
      if (ws.readyState === ws.OPEN) ws.send(text)
    }
    const close = (code: number, reason: string) => {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason)
    }
    const fail = (code: SignalErrorCode, message: string) => {
      send({ type: 'error', code, message })
      if (++bad > MAX_BAD_FRAMES) close(CLOSE.abuse, 'too many bad frames')
    }
    const joinTimer = setTimeout(() => {
      if (!joined) close(CLOSE.unauthorized, 'no ticket')
    }, JOIN_TIMEOUT_MS)
    joinTimer.unref()
    ws.on('pong', () => (alive = true))
    const heartbeat = setInterval(() => {
      if (!alive) return ws.terminate()
      alive = false
      ws.ping()
    }, HEARTBEAT_MS)
    heartbeat.unref()

    const leave = async () => {
      const was = joined
      joined = null
      if (!was) return
      if (await rooms.remove(was.room, was.peer.peer_id)) {
        await rooms.broadcast(was.room, null, JSON.stringify({ type: 'peer-left', peer_id: was.peer.peer_id, user_id: was.peer.user_id }))
      }
      reports = reports.then(() => report(was.claims, { event: 'leave', peer_id: was.peer.peer_id }))
    }

    const handle = async (frame: ClientFrame) => {
      if (frame.type === 'ping') return send({ type: 'pong' })
      if (frame.type === 'join') {
        if (joined) return fail('already_joined', 'This socket is in a room already')
        const check = verifyTicket(secret, frame.ticket, clock.now())
        if (!check.ok) {
          send({ type: 'error', code: 'unauthorized', message: `The ticket is ${check.reason}` })
          return close(CLOSE.unauthorized, `ticket ${check.reason}`)
        }
        if (check.claims.room !== frame.room_id) {
          send({ type: 'error', code: 'forbidden', message: 'The ticket is for another room' })
          return close(CLOSE.forbidden, 'ticket for another room')
        }
        const { claims } = check
        // a ticket lets in one socket: a copy of it (a second tab, a leaked one) is refused
        if (!(await rooms.consumeTicket(claims.n, claims.exp, clock.now()))) {
          send({ type: 'error', code: 'unauthorized', message: 'The ticket was used already; ask for a new one' })
          return close(CLOSE.unauthorized, 'ticket used')
        }
        const peer: PeerView = {
          peer_id: randomBytes(12).toString('base64url'),
          user_id: claims.uid,
          username: claims.username,
          audio_only: claims.audio_only,
          media: { audio: true, video: !claims.audio_only, screenshare: false },
        }
        clearTimeout(joinTimer)
        joined = { room: claims.room, peer, claims }
        const before = await rooms.add(claims.room, peer, deliver, () => {
          send({ type: 'error', code: 'forbidden', message: 'You are no longer in this room: you left it, or its call ended' })
          close(CLOSE.removed, 'left the room')
        })
        send({ type: 'joined', room_id: claims.room, peer_id: peer.peer_id, user_id: peer.user_id, peers: before })
        await rooms.broadcast(claims.room, peer.peer_id, JSON.stringify({ type: 'peer-joined', peer }))
        reports = reports.then(() => report(claims, { event: 'join', peer_id: peer.peer_id, audio_only: claims.audio_only, media: peer.media }))
        return
      }
      if (!joined) {
        send({ type: 'error', code: 'not_joined', message: 'Send join with a ticket first' })
        return close(CLOSE.unauthorized, 'no ticket')
      }
      const me = joined
      switch (frame.type) {
        case 'offer':
        case 'answer':
        case 'ice-candidate': {
          if (frame.to === me.peer.peer_id) return fail('unknown_peer', 'That is you')
          const out =
            frame.type === 'ice-candidate'
              ? { type: frame.type, from: me.peer.peer_id, from_user_id: me.peer.user_id, candidate: frame.candidate }
              : { type: frame.type, from: me.peer.peer_id, from_user_id: me.peer.user_id, sdp: frame.sdp }
          if (!(await rooms.send(me.room, frame.to, JSON.stringify(out)))) fail('unknown_peer', 'No such peer in this room')
          return
        }
        case 'media': {
          if (me.claims.audio_only && (frame.video || frame.screenshare)) return fail('forbidden', 'This peer joined audio-only')
          const media: MediaState = { audio: frame.audio, video: frame.video, screenshare: frame.screenshare }
          me.peer = { ...me.peer, media }
          await rooms.setMedia(me.room, me.peer.peer_id, media)
          await rooms.broadcast(me.room, me.peer.peer_id, JSON.stringify({ type: 'media', from: me.peer.peer_id, user_id: me.peer.user_id, ...media }))
          reports = reports.then(() => report(me.claims, { event: 'media', peer_id: me.peer.peer_id, media }))
          return
        }
        case 'leave':
          await leave()
          return close(1000, 'left')
      }
    }

    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (closed) return
      const now = clock.now()
      if (now - windowStart >= 1000) {
        windowStart = now
        inWindow = 0
      }
      if (++inWindow > MAX_FRAMES_PER_SECOND) {
        send({ type: 'error', code: 'rate_limited', message: `Over ${MAX_FRAMES_PER_SECOND} frames a second` })
        return close(CLOSE.rateLimited, 'too many frames')
      }
      if (isBinary) return fail('malformed', 'Frames are JSON text')
      const parsed = parseClientFrame(data.toString('utf8'))
      if (!parsed.ok) {
        if (!joined && parsed.code !== 'too_large') {
          // before the ticket nothing but a join is taken
          send({ type: 'error', code: parsed.code, message: parsed.message })
          return close(CLOSE.unauthorized, 'no ticket')
        }
        return fail(parsed.code, parsed.message)
      }
      queue = queue.then(() => handle(parsed.frame)).catch((err) => {
        log.error({ err }, 'video: frame failed')
        send({ type: 'error', code: 'malformed', message: 'The frame could not be handled' })
      })
    })
    ws.on('close', () => {
      closed = true
      clearTimeout(joinTimer)
      clearInterval(heartbeat)
      queue = queue.then(leave).catch((err) => log.error({ err }, 'video: leave failed'))
    })
    ws.on('error', (err) => log.debug({ err }, 'video: socket error'))
  })

  const port = options.port ?? config.videoPort
  const host = options.host ?? config.videoHost
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  log.info({ port: address.port }, 'video signaling service listening')
  return {
    port: address.port,
    url: `http://${shownHost === '0.0.0.0' || shownHost === '[::]' ? '127.0.0.1' : shownHost}:${address.port}`,
    server,
    connections: () => wss.clients.size,
    async close() {
      for (const ws of wss.clients) ws.close(1001, 'going away')
      await new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      await rooms.close()
    },
  }
}
