/**
 * The real-time gateway: GET /api.v2/api/ws (docs/realtime.md).
 *
 * Each connection follows the user's update log (frames with `seq`) and the own log of each group
 * and channel the user belongs to (frames with `chat_id` + `chat_seq`), one cursor per stream.
 * Live frames that continue a cursor go straight out; older ones are skipped; a gap (a frame
 * pub/sub lost, or frames that overtook a replay) triggers a catch-up from that log.
 * `{"type":"resume","seq":N,"chats":{"<id>":M}}` moves the cursors and replays everything after
 * them. So every update reaches every device once and in order, across reconnects, and a channel
 * post is one row for any number of subscribers. A socket whose send buffer passes MAX_BUFFERED (a
 * slow client) is dropped and resumes later; pings drop dead connections.
 */
import websocket from '@fastify/websocket'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import type { AppContext } from '../context.js'
import { bearerToken } from '../http/auth.js'
import { unauthorized, upgradeRequired } from '../http/errors.js'
import { authenticate } from '../modules/sessions/service.js'
import { DeliveryMarks } from './delivered.js'
import { CLOSE } from './close-codes.js'
import type { Frame } from './fanout.js'
import { Presence } from './presence.js'
import { Stream } from './stream.js'
import * as chatLog from './chat-log.js'
import * as updates from './updates.js'

/** a live frame finding more than this unsent on its socket closes it (4008): the client resumes */
const MAX_BUFFERED = 1024 * 1024
/**
 * A replay goes at the client's pace: past REPLAY_HIGH_WATER unsent bytes it waits until the
 * socket is down to REPLAY_LOW_WATER, so catching up on a long backlog never trips MAX_BUFFERED.
 */
const REPLAY_HIGH_WATER = 256 * 1024
const REPLAY_LOW_WATER = 64 * 1024
const DRAIN_POLL_MS = 10

type MemberEvent = { chat_id?: number; user_id?: number; chat_seq?: number }

/**
 * A socket: the user's own stream plus one stream per group or channel they belong to. Streams of
 * chats join and leave with the user's own `member.joined` / `member.left` updates.
 */
class Connection {
  alive = true
  /** counted in the user's presence (so the close must uncount it) */
  present = false
  readonly user: Stream
  readonly chats = new Map<number, Stream>()
  /** chat frames that arrived before the chat streams existed */
  private early: Frame[] | null = []
  /**
   * the user's ephemeral frames (presence, typing) held back while `holds` > 0: until `ready` has
   * gone out (the first hold), and while a presence repair reads where peers stand
   */
  private heldEphemeral: Frame[] | null = []
  private holds = 1
  /** chat cursors a `resume` named before the chat streams existed */
  private resumeChats = new Map<number, number>()

  constructor(
    readonly ctx: AppContext,
    readonly userId: number,
    /** the session the socket was opened with: revoking it closes the socket */
    readonly sessionId: number,
    /** this socket's number on this instance, for the log */
    readonly id: number,
    readonly socket: WebSocket,
    private marks: DeliveryMarks,
    private registry: Registry,
    private presence: Presence,
  ) {
    // The connection is registered (and sees live frames) before start() reads the user's seq:
    // frames of that moment wait for it, then go out only if they come after it.
    this.user = new Stream({
      seqOf: (frame) => frame.seq!,
      load: (after, limit) => updates.since(ctx.db, userId, after, limit),
      emit: (frame) => this.onUserFrame(frame),
      backlogged: () => this.backlogged(),
      reset: (from, to) => this.send({ type: 'reset', data: { reason: 'pruned', missed_from: from, missed_to: to } }),
      latest: () => updates.currentSeq(ctx, userId),
      ahead: (seq) => this.send({ type: 'reset', data: { reason: 'ahead', seq } }),
      fail: (err) => this.fail(err),
    }, true)
  }

  /** Hands the frame to the socket; false if it did not go out (closed, or closed now for being too slow). */
  send(frame: Frame, text?: string): boolean {
    if (this.socket.readyState !== this.socket.OPEN) return false
    if (this.socket.bufferedAmount > MAX_BUFFERED) {
      this.close(CLOSE.tooSlow)
      return false
    }
    this.socket.send(text ?? JSON.stringify(frame))
    return true
  }

  /** See Stream's `backlogged`: a replay waits here while the client is behind on reading. */
  backlogged(): false | Promise<boolean> {
    if (this.socket.readyState !== this.socket.OPEN) return Promise.resolve(false)
    if (this.socket.bufferedAmount <= REPLAY_HIGH_WATER) return false
    return new Promise((resolve) => {
      const check = () => {
        if (this.socket.readyState !== this.socket.OPEN) resolve(false)
        else if (this.socket.bufferedAmount <= REPLAY_LOW_WATER) resolve(true)
        else setTimeout(check, DRAIN_POLL_MS)
      }
      setTimeout(check, DRAIN_POLL_MS)
    })
  }

  close({ code, reason }: { code: number; reason: string }) {
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING) this.socket.close(code, reason)
  }

  /** A handler of this socket threw: the socket goes, the process stays. */
  crashed(what: string, err: unknown) {
    this.ctx.log.error({ err, userId: this.userId, socketId: this.id, during: what }, 'websocket handler failed; closing that socket')
    this.close(CLOSE.internalError)
  }

  private fail(err: unknown) {
    this.ctx.log.warn({ err, userId: this.userId, socketId: this.id }, 'replay failed; closing the socket so the client resumes')
    this.close(CLOSE.replayFailed)
  }

  private onUserFrame(frame: Frame) {
    const sent = this.send(frame)
    // delivered means this device got it: a frame dropped with a closing socket is not
    if (frame.type === 'message.new') return sent ? this.noteDelivery(frame.data) : undefined
    const data = frame.data as MemberEvent
    if (data?.user_id !== this.userId || typeof data.chat_id !== 'number') return
    if (frame.type === 'member.joined') this.joinChat(data.chat_id, data.chat_seq ?? 0)
    else if (frame.type === 'member.left') this.leaveChat(data.chat_id)
  }

  /** A recipient's device was handed a message: the first time stamps delivered_at. */
  private noteDelivery(data: unknown) {
    const message = (data as { message?: { message_id?: number; sender_id?: number; delivered_at?: string | null } }).message
    if (message?.message_id && message.sender_id !== this.userId && !message.delivered_at) this.marks.add(message.message_id)
  }

  /** Starts following a chat's log from `cursor`. */
  joinChat(chatId: number, cursor: number) {
    if (this.chats.has(chatId)) return
    const stream = new Stream({
      seqOf: (frame) => frame.chat_seq!,
      load: (after, limit) => chatLog.since(this.ctx.db, chatId, after, limit),
      emit: (frame, text) => this.send(frame, text),
      backlogged: () => this.backlogged(),
      reset: (from, to) => this.send({ type: 'reset', data: { chat_id: chatId, reason: 'pruned', missed_from: from, missed_to: to } }),
      latest: () => chatLog.currentSeq(this.ctx.db, chatId),
      ahead: (chatSeq) => this.send({ type: 'reset', data: { chat_id: chatId, reason: 'ahead', chat_seq: chatSeq } }),
      fail: (err) => this.fail(err),
    })
    stream.cursor = cursor
    this.chats.set(chatId, stream)
    this.registry.subscribe(this, chatId)
    const resumed = this.resumeChats.get(chatId)
    if (resumed === undefined) return
    this.resumeChats.delete(chatId)
    void stream.catchUp(resumed)
  }

  leaveChat(chatId: number) {
    if (!this.chats.delete(chatId)) return
    this.registry.unsubscribe(this, chatId)
  }

  /** A live frame for the user. */
  deliverUser(frame: Frame) {
    if (frame.seq === undefined) {
      if (this.heldEphemeral) return void this.heldEphemeral.push(frame)
      return this.send(frame)
    }
    this.user.deliver(frame)
  }

  /** A live frame of a group or channel (serialized once for all its subscribers: `text`). */
  deliverChat(frame: Frame, text?: string) {
    if (this.early) return void this.early.push(frame)
    const stream = this.chats.get(frame.chat_id!)
    if (!stream) return
    if (frame.chat_seq !== undefined) return stream.deliver(frame, text)
    // ephemeral (typing): not back to the member who caused it
    if ((frame.data as MemberEvent)?.user_id !== this.userId) this.send(frame, text)
  }

  /**
   * `{"type":"resume","seq":N,"chats":{"<chat_id>":M}}`: replays after N, and after M in each chat
   * named that the user follows (a cursor past a log's end is answered by the stream: see Stream).
   * Synchronous, so that a resume sent as the socket opens positions the streams before they open.
   */
  resume(seq: number | undefined, chats: Map<number, number>) {
    for (const [chatId, cursor] of chats) {
      const stream = this.chats.get(chatId)
      if (stream) void stream.catchUp(cursor)
      else if (this.early) this.resumeChats.set(chatId, cursor)
    }
    if (seq !== undefined) void this.user.catchUp(seq)
  }

  /** Every stream replays from its cursor and the peers' presence is sent again (frames may have been lost). */
  resync() {
    void this.user.catchUp()
    for (const stream of this.chats.values()) void stream.catchUp()
    void this.repairPresence()
  }

  /**
   * Sends where each peer stands now. Presence frames arriving during the read wait behind it: one
   * of them may carry a change the read missed, so it must be the last word.
   */
  private async repairPresence() {
    this.holds++
    const held = (this.heldEphemeral ??= [])
    const at = held.length
    try {
      held.splice(at, 0, ...(await this.presence.peersOf(this.userId)))
    } catch (err) {
      this.ctx.log.warn({ err, userId: this.userId }, 'presence repair failed')
    } finally {
      this.release()
    }
  }

  /** Ends one hold on ephemeral frames; the last sends what waited, in order. */
  private release() {
    if (--this.holds > 0) return
    const held = this.heldEphemeral ?? []
    this.heldEphemeral = null
    for (const frame of held) this.send(frame)
  }

  /**
   * Opens the user's stream at their current seq (or where a `resume` that raced in put it) and a
   * stream for each of their groups and channels at its current chat seq, says `ready` with those
   * positions, then delivers whatever arrived meanwhile.
   */
  async start() {
    try {
      await this.open()
    } catch (err) {
      return this.fail(err)
    }
    await this.user.catchUp()
  }

  private async open() {
    await this.user.open(async () => {
      const [seq, memberships] = await Promise.all([
        updates.currentSeq(this.ctx, this.userId),
        chatLog.memberships(this.ctx.db, this.userId),
      ])
      for (const { chat_id, event_seq } of memberships) this.joinChat(chat_id, event_seq)
      this.send({
        type: 'ready',
        data: { user_id: this.userId, seq, chats: Object.fromEntries(memberships.map((m) => [m.chat_id, m.event_seq])) },
      })
      const early = this.early ?? []
      this.early = null
      this.release()
      this.registry.started(this)
      for (const frame of early) this.deliverChat(frame)
      return { seq, value: undefined }
    })
  }
}

/** Where live connections are, on this instance: by user, and by the groups and channels they follow. */
class Registry {
  private byUser = new Map<number, Set<Connection>>()
  private byChat = new Map<number, Set<Connection>>()
  /** connections still loading their chats: they see every chat frame meanwhile */
  readonly starting = new Set<Connection>()

  constructor(private readonly maxPerUser: number) {}

  /** Registers a new socket; false (and the socket closed with 4029) when its user is at the cap. */
  add(connection: Connection): boolean {
    let set = this.byUser.get(connection.userId)
    if (!set) this.byUser.set(connection.userId, (set = new Set()))
    if (set.size >= this.maxPerUser) {
      connection.close(CLOSE.tooManySockets)
      return false
    }
    set.add(connection)
    this.starting.add(connection)
    return true
  }
  started(connection: Connection) {
    this.starting.delete(connection)
  }
  remove(connection: Connection) {
    const set = this.byUser.get(connection.userId)
    set?.delete(connection)
    if (set?.size === 0) this.byUser.delete(connection.userId)
    this.starting.delete(connection)
    for (const chatId of connection.chats.keys()) this.unsubscribe(connection, chatId)
  }
  subscribe(connection: Connection, chatId: number) {
    let set = this.byChat.get(chatId)
    if (!set) this.byChat.set(chatId, (set = new Set()))
    set.add(connection)
  }
  unsubscribe(connection: Connection, chatId: number) {
    const set = this.byChat.get(chatId)
    set?.delete(connection)
    if (set?.size === 0) this.byChat.delete(chatId)
  }
  of(userId: number) {
    return this.byUser.get(userId)
  }
  ofChat(chatId: number) {
    return this.byChat.get(chatId)
  }
  all() {
    return [...this.byUser.values()].flatMap((set) => [...set])
  }
}

function socketToken(request: FastifyRequest): string | null {
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.token
  return bearerToken(request) ?? (typeof fromQuery === 'string' ? fromQuery : null)
}

type InboundHandler = (connection: Connection, frame: Record<string, unknown>) => unknown

/**
 * Inbound frames: one small handler per type. A Map, because the key is the client's string: a
 * plain object would answer `valueOf` or `__proto__` with what it inherits.
 */
const inbound = new Map<string, InboundHandler>([
  ['resume', (connection, frame) => {
    const cursor = (value: unknown) => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : null)
    const seq = frame.seq === undefined && frame.chats !== undefined ? undefined : cursor(frame.seq)
    const chats = new Map<number, number>()
    const named = frame.chats ?? {}
    const valid =
      seq !== null &&
      typeof named === 'object' &&
      named !== null &&
      !Array.isArray(named) &&
      Object.entries(named as Record<string, unknown>).every(([id, at]) => {
        const chatId = Number(id)
        const chatSeq = cursor(at)
        if (!/^[1-9][0-9]*$/.test(id) || !Number.isSafeInteger(chatId) || chatSeq === null) return false
        chats.set(chatId, chatSeq)
        return true
      })
    if (!valid) {
      return connection.send({ type: 'error', data: { message: 'resume needs seq (an integer ≥ 0) and/or chats ({chat_id: chat_seq})' } })
    }
    return connection.resume(seq, chats)
  }],
  ['ping', (connection) => connection.send({ type: 'pong', data: {} })],
])

/**
 * A resume in the upgrade URL, `?seq=N&chats=<chat_id>:<chat_seq>,…`: the socket opens already
 * positioned, so nothing goes out live before the replay (a `resume` frame can only follow frames
 * sent after `ready`, which the replay then sends again). null when the URL names none; an error
 * message when it names one badly.
 */
function resumeFromUrl(query: unknown): { seq: number | undefined; chats: Map<number, number> } | string | null {
  const q = query as { seq?: unknown; chats?: unknown } | undefined
  if (q?.seq === undefined && q?.chats === undefined) return null
  const integer = (text: unknown) => (typeof text === 'string' && /^\d{1,16}$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : null)
  const seq = q.seq === undefined ? undefined : integer(q.seq)
  const chats = new Map<number, number>()
  const pairs = q.chats === undefined || q.chats === '' ? [] : typeof q.chats === 'string' ? q.chats.split(',') : [null]
  for (const pair of pairs) {
    const [id, at] = pair?.split(':') ?? []
    const chatId = integer(id)
    const chatSeq = integer(at)
    if (!chatId || chatSeq === null) return 'chats in the URL must look like <chat_id>:<chat_seq>,…'
    chats.set(chatId, chatSeq)
  }
  if (seq === null) return 'seq in the URL must be an integer ≥ 0'
  return { seq, chats }
}

/** Parses one inbound frame and runs its handler; a bad frame gets an error frame, never a throw. */
function onInbound(connection: Connection, raw: unknown) {
  let frame: unknown
  try {
    frame = JSON.parse(String(raw))
  } catch {
    return connection.send({ type: 'error', data: { message: 'frames are JSON objects' } })
  }
  if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) {
    return connection.send({ type: 'error', data: { message: 'frames are JSON objects' } })
  }
  const type = (frame as { type?: unknown }).type
  const handler = typeof type === 'string' ? inbound.get(type) : undefined
  if (!handler) {
    const shown = typeof type === 'string' ? JSON.stringify(type.slice(0, 64)) : String(typeof type)
    return connection.send({ type: 'error', data: { message: `unknown frame type ${shown}`, types: [...inbound.keys()] } })
  }
  return handler(connection, frame as Record<string, unknown>)
}

export async function registerGateway(app: FastifyInstance, ctx: AppContext, prefixes: readonly string[]) {
  await app.register(websocket, {
    options: { maxPayload: 64 * 1024 },
    // On shutdown every socket hears 1001, so its client reconnects (elsewhere) and resumes.
    preClose: async function (this: FastifyInstance) {
      for (const client of this.websocketServer.clients) client.close(CLOSE.goingAway.code, CLOSE.goingAway.reason)
    },
  })
  const registry = new Registry(ctx.config.wsMaxSocketsPerUser)
  const presence = new Presence(ctx)
  const marks = new DeliveryMarks(ctx)
  // One instance alone: nobody can be online from before this start (a crash leaves stale flags).
  if (!ctx.redis) await ctx.db.updateTable('users').set({ is_online: 0 }).where('is_online', '=', 1).execute()

  ctx.fanout.subscribe((deliveries) => {
    for (const delivery of deliveries) {
      if ('close' in delivery) {
        const { userId, sessionId, code, reason } = delivery.close
        for (const connection of registry.of(userId) ?? []) {
          if (sessionId === undefined || connection.sessionId === sessionId) connection.close({ code, reason })
        }
        continue
      }
      if ('userId' in delivery) {
        const connections = registry.of(delivery.userId)
        if (connections) for (const connection of connections) connection.deliverUser(delivery.frame)
        continue
      }
      // one serialization for every subscriber of the chat
      const connections = registry.ofChat(delivery.chatId)
      if (connections) {
        const text = JSON.stringify(delivery.frame)
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
    presence.refresh().catch((err) => ctx.log.warn({ err }, 'presence refresh failed'))
  }, ctx.config.wsHeartbeatSeconds * 1000)
  heartbeat.unref()
  app.addHook('onClose', async () => {
    clearInterval(heartbeat)
    presence.close()
    await marks.flush()
  })

  let socketIds = 0
  for (const prefix of prefixes) {
    app.route({
      method: 'GET',
      url: `${prefix}/ws`,
      schema: { tags: ['realtime'], hide: true },
      preValidation: async (request) => {
        if (!request.ws) return
        const token = socketToken(request)
        const found = token ? await authenticate(ctx, token) : null
        if (!found) throw unauthorized(token ? 'Session is invalid or expired' : 'Authentication required')
        request.user = found.user
        request.sessionId = found.sessionId
      },
      // a plain HTTP request (no Upgrade) gets told what this endpoint speaks
      handler: async () => {
        throw upgradeRequired()
      },
      wsHandler: (socket, request) => {
        const connection = new Connection(ctx, request.user.id, request.sessionId, ++socketIds, socket, marks, registry, presence)
        const guard = <A extends unknown[]>(what: string, fn: (...args: A) => unknown) => (...args: A) => {
          try {
            const result = fn(...args)
            if (result instanceof Promise) result.catch((err) => connection.crashed(what, err))
          } catch (err) {
            connection.crashed(what, err)
          }
        }
        socket.on('error', (err) => ctx.log.warn({ err, userId: connection.userId, socketId: connection.id }, 'websocket error'))
        socket.on('pong', () => (connection.alive = true))
        socket.on('close', guard('close', () => {
          registry.remove(connection)
          if (connection.present) void presence.disconnected(connection.userId)
        }))
        socket.on('message', guard('message', (raw: unknown) => {
          connection.alive = true
          return onInbound(connection, raw)
        }))
        // positioned before it opens (see resumeFromUrl), so the replay comes first and nothing twice
        const resumed = resumeFromUrl(request.query)
        if (typeof resumed === 'string') return connection.close({ code: CLOSE.badResume.code, reason: resumed })
        if (resumed) connection.resume(resumed.seq, resumed.chats)
        guard('start', async () => {
          if (!registry.add(connection)) return
          // A session revoked between the upgrade's check and the registration above was announced
          // before this socket could hear it: look again now that it can.
          const token = socketToken(request)
          if (!token || !(await authenticate(ctx, token))) return connection.close(CLOSE.sessionRevoked)
          connection.present = true
          await presence.connected(connection.userId)
          await connection.start()
        })()
      },
    })
  }
}
