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
import { createLocalRooms, createRedisRooms, type RoomStore, type SessionEnd } from './rooms.js'
import { videoSecret } from './secret.js'
import { bodySignatureValid, signBody, SIGNATURE_HEADER, verifyTicket, type TicketClaims } from './ticket.js'

/** a socket must present its ticket this soon */
const JOIN_TIMEOUT_MS = 10_000
/** bad frames (malformed, for unknown peers…) a socket may send before it is closed */
const MAX_BAD_FRAMES = 20
/** frames per second a socket may send before it is closed */
const MAX_FRAMES_PER_SECOND = 300
const HEARTBEAT_MS = 30_000
/** a socket's media state is reported to the main service at most this often (the latest state; those between are skipped) */
const MEDIA_REPORT_INTERVAL_MS = 250

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

/** A socket that presented a good ticket, indexed by its user (the caps, and closing an ended session's sockets). */
interface Admitted {
  room: string
  sessionId: number | undefined
  /** its session ended while it was being let in */
  ended: boolean
  end(code: number, reason: string): void
}

/** The body of a signed request from the main service, or why it is refused. */
type SignedBody = { ok: true; body: Record<string, unknown> } | { ok: false; status: number; code: string; message: string }

function json(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
  })
  res.end(text)
}

export async function startVideoService(config: Readonly<Config>, options: VideoServiceOptions): Promise<VideoService> {
  const log = options.log.child({ service: 'video' })
  const clock = options.clock ?? systemClock
  const secret = videoSecret(config)
  const rooms: RoomStore = config.redisUrl
    ? await createRedisRooms({ url: config.redisUrl, prefix: config.redisPrefix, log })
    : createLocalRooms()
  const asyncApi = videoAsyncApi()

  /** this instance's admitted sockets by user */
  const admitted = new Map<number, Set<Admitted>>()
  const admit = (userId: number, socket: Admitted) => {
    let mine = admitted.get(userId)
    if (!mine) admitted.set(userId, (mine = new Set()))
    mine.add(socket)
  }
  const unadmit = (userId: number, socket: Admitted) => {
    const mine = admitted.get(userId)
    if (!mine) return
    mine.delete(socket)
    if (mine.size === 0) admitted.delete(userId)
  }
  // a session ended (on any instance's word): the sockets it opened here close
  rooms.onSessionEnd((end) => {
    for (const socket of [...(admitted.get(end.userId) ?? [])]) {
      if (end.sessionId !== undefined && socket.sessionId !== end.sessionId) continue
      socket.ended = true
      socket.end(end.code, end.reason)
    }
  })

  /**
   * Tells the issuing main service what happened, in order per socket, bounded by the video
   * timeout; failures are logged. `refused` runs when the main service answers that the session
   * behind the socket has ended (403).
   */
  const report = async (claims: TicketClaims, event: Record<string, unknown>, refused?: () => void) => {
    if (!claims.cb) return
    const body = JSON.stringify({
      ...event,
      room_id: claims.room,
      user_id: claims.uid,
      ...(claims.sid === undefined ? {} : { session_id: claims.sid }),
      at: clock.now(),
    })
    try {
      const res = await fetch(`${claims.cb}/internal/video/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(secret, body) },
        body,
        signal: AbortSignal.timeout(config.videoTimeoutMs),
      })
      await res.arrayBuffer().catch(() => undefined)
      if (res.status === 403 && refused) refused()
      else if (res.status === 429)
        log.debug({ event: event.event }, 'video: the main service is taking no more media reports from this participant now')
      else if (!res.ok) log.warn({ status: res.status, event: event.event }, 'video: the main service refused a report')
    } catch (err) {
      log.warn({ err, event: event.event }, 'video: could not report to the main service')
    }
  }

  /**
   * A POST from the main service: the body signed with the video secret, JSON, with `at` (epoch ms)
   * within REQUEST_SKEW_MS of now; `handle` answers its data.
   */
  const signedPost = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    name: string,
    handle: (body: Record<string, unknown>) => Promise<SignedBody | { ok: true; data: unknown }>,
  ) => {
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
        if (!bodySignatureValid(secret, raw, req.headers[SIGNATURE_HEADER]))
          return json(res, 401, { success: false, error: { code: 'unauthorized', message: 'Not signed with the video secret' } })
        let body: unknown = null
        try {
          body = JSON.parse(raw)
        } catch {
          // refused below
        }
        if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof (body as { at?: unknown }).at !== 'number') {
          return json(res, 400, { success: false, error: { code: 'validation_error', message: 'A JSON object with at is required' } })
        }
        if (Math.abs((body as { at: number }).at - clock.now()) > REQUEST_SKEW_MS)
          return json(res, 401, { success: false, error: { code: 'unauthorized', message: 'The request is too old' } })
        const answer = await handle(body as Record<string, unknown>)
        if ('data' in answer) return json(res, 200, { success: true, data: answer.data })
        if (!answer.ok) return json(res, answer.status, { success: false, error: { code: answer.code, message: answer.message } })
      })().catch((err) => {
        log.error({ err }, `video: ${name} failed`)
        if (!res.headersSent) json(res, 500, { success: false, error: { code: 'internal_error', message: 'Internal error' } })
      })
    })
  }
  const invalid = (message: string): SignedBody => ({ ok: false, status: 400, code: 'validation_error', message })

  /**
   * POST /internal/rooms/kick `{room_id, user_id, at}`: the user left the room over HTTP, so their
   * sockets in it are closed (peer-left for the others).
   */
  const kick = (req: http.IncomingMessage, res: http.ServerResponse) =>
    signedPost(req, res, 'kick', async (body) => {
      if (typeof body.room_id !== 'string' || !Number.isSafeInteger(body.user_id)) return invalid('room_id, user_id and at are required')
      return { ok: true, data: { kicked: await rooms.kick(body.room_id, body.user_id as number) } }
    })

  /**
   * POST /internal/sessions/end `{user_id, session_id?, tickets_until, code?, reason?, at}`: a
   * session of the user (or, without session_id, every one) ended; the sockets it opened close on
   * every instance, and its tickets that expire at or before tickets_until are refused from now on.
   */
  const endSession = (req: http.IncomingMessage, res: http.ServerResponse) =>
    signedPost(req, res, 'session end', async (body) => {
      const { user_id: userId, session_id: sessionId, tickets_until: ticketsUntil, code, reason } = body
      if (
        !Number.isSafeInteger(userId) ||
        (sessionId !== undefined && !Number.isSafeInteger(sessionId)) ||
        !Number.isSafeInteger(ticketsUntil)
      ) {
        return invalid('user_id, tickets_until and at are required; session_id is an integer')
      }
      const end: SessionEnd = {
        userId: userId as number,
        ...(sessionId === undefined ? {} : { sessionId: sessionId as number }),
        ticketsUntil: ticketsUntil as number,
        code: Number.isInteger(code) && (code as number) >= 4000 && (code as number) <= 4999 ? (code as number) : CLOSE.unauthorized,
        reason: typeof reason === 'string' && reason.length <= 100 ? reason : 'session ended',
      }
      await rooms.endSession(end, clock.now())
      return { ok: true, data: { ended: true } }
    })

  const server = http.createServer((req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://video')
      if (req.method === 'POST' && url.pathname === '/internal/rooms/kick') return kick(req, res)
      if (req.method === 'POST' && url.pathname === '/internal/sessions/end') return endSession(req, res)
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return json(res, 405, { success: false, error: { code: 'method_not_allowed', message: 'Method not allowed' } })
      if (url.pathname === '/health') return json(res, 200, { status: 'ok', connections: wss.clients.size })
      if (url.pathname === '/asyncapi.json') return json(res, 200, asyncApi)
      if (url.pathname === '/video/integration/config') {
        // TURN credentials only for a holder of a ticket (the main service asks with one for its user)
        const auth = req.headers.authorization
        const ticket = auth?.startsWith('Bearer ') ? auth.slice(7) : url.searchParams.get('ticket')
        const check = ticket ? verifyTicket(secret, ticket, clock.now()) : null
        if (check && !check.ok)
          return json(res, 401, { success: false, error: { code: 'unauthorized', message: `The ticket is ${check.reason}` } })
        return json(res, 200, { success: true, data: iceConfig(config, check?.ok ? check.claims.uid : null, clock.now()) })
      }
      if (url.pathname === '/signal')
        return json(res, 426, { success: false, error: { code: 'upgrade_required', message: 'This endpoint speaks WebSocket' } })
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
    /** this socket in the index by user, from its good ticket until it closes */
    let admission: { userId: number; socket: Admitted } | null = null
    let mediaWindowStart = clock.now()
    let mediaInWindow = 0
    /** the media state not yet reported, and when the last report went */
    let pendingMedia: MediaState | null = null
    let mediaTimer: NodeJS.Timeout | null = null
    let lastMediaReport = 0
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
    const sessionGone = (code: number = CLOSE.unauthorized, reason = 'session ended') => {
      send({ type: 'error', code: 'unauthorized', message: 'The session this socket was opened with has ended' })
      close(code, reason)
    }
    const unindex = () => {
      if (admission) unadmit(admission.userId, admission.socket)
      admission = null
    }
    /** the latest media state goes to the main service, at most once per MEDIA_REPORT_INTERVAL_MS */
    const reportMedia = () => {
      if (mediaTimer) return
      mediaTimer = setTimeout(
        () => {
          mediaTimer = null
          const me = joined
          const media = pendingMedia
          pendingMedia = null
          if (!me || !media) return
          lastMediaReport = Date.now()
          reports = reports.then(() => report(me.claims, { event: 'media', peer_id: me.peer.peer_id, media }, () => sessionGone()))
        },
        Math.max(0, lastMediaReport + MEDIA_REPORT_INTERVAL_MS - Date.now()),
      )
      mediaTimer.unref()
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
      unindex()
      if (mediaTimer) clearTimeout(mediaTimer)
      mediaTimer = null
      pendingMedia = null
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
        // the caps, counted and taken before any wait so that joins in parallel cannot pass them together
        const mine = [...(admitted.get(claims.uid) ?? [])]
        if (
          mine.length >= config.videoMaxSocketsPerUser ||
          mine.filter((s) => s.room === claims.room).length >= config.videoMaxSocketsPerRoom
        ) {
          const inRoom = mine.length < config.videoMaxSocketsPerUser
          send({
            type: 'error',
            code: 'too_many_sockets',
            message: inRoom
              ? `You have ${config.videoMaxSocketsPerRoom} sockets in this room already`
              : `You have ${config.videoMaxSocketsPerUser} sockets open already`,
          })
          return close(CLOSE.rateLimited, 'too many sockets')
        }
        const socket: Admitted = {
          room: claims.room,
          sessionId: claims.sid,
          ended: false,
          end: (code, reason) => sessionGone(code, reason),
        }
        admission = { userId: claims.uid, socket }
        admit(claims.uid, socket)
        // a ticket lets in one socket: a copy of it (a second tab, a leaked one) is refused
        if (!(await rooms.consumeTicket(claims.n, claims.exp, clock.now()))) {
          unindex()
          send({ type: 'error', code: 'unauthorized', message: 'The ticket was used already; ask for a new one' })
          return close(CLOSE.unauthorized, 'ticket used')
        }
        // the session it was issued to has ended (logout, revoked, banned): a reconnect with it is refused
        if (socket.ended || (await rooms.sessionEnded(claims.uid, claims.sid, claims.exp, clock.now())) || socket.ended) {
          unindex()
          send({ type: 'error', code: 'unauthorized', message: 'The session this ticket was issued to has ended' })
          return close(CLOSE.unauthorized, 'session ended')
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
        reports = reports.then(() =>
          report(claims, { event: 'join', peer_id: peer.peer_id, audio_only: claims.audio_only, media: peer.media }, () => sessionGone()),
        )
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
          const now = clock.now()
          if (now - mediaWindowStart >= config.videoMediaRateLimit.windowMs) {
            mediaWindowStart = now
            mediaInWindow = 0
          }
          if (++mediaInWindow > config.videoMediaRateLimit.max) {
            // told, not closed: the frame is dropped and the state stays as it was
            return send({
              type: 'error',
              code: 'rate_limited',
              message: `Over ${config.videoMediaRateLimit.max} media frames in ${config.videoMediaRateLimit.windowMs / 1000} s; this one was dropped`,
            })
          }
          if (me.claims.audio_only && (frame.video || frame.screenshare)) return fail('forbidden', 'This peer joined audio-only')
          const media: MediaState = { audio: frame.audio, video: frame.video, screenshare: frame.screenshare }
          me.peer = { ...me.peer, media }
          await rooms.setMedia(me.room, me.peer.peer_id, media)
          await rooms.broadcast(
            me.room,
            me.peer.peer_id,
            JSON.stringify({ type: 'media', from: me.peer.peer_id, user_id: me.peer.user_id, ...media }),
          )
          pendingMedia = media
          reportMedia()
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
      queue = queue
        .then(() => handle(parsed.frame))
        .catch((err) => {
          log.error({ err }, 'video: frame failed')
          send({ type: 'error', code: 'malformed', message: 'The frame could not be handled' })
        })
    })
    ws.on('close', () => {
      closed = true
      unindex()
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
