/**
 * The real-time gateway: GET /api.v2/api/ws (DESIGN §4).
 *
 * Each connection keeps a cursor, the last update seq it delivered. Live frames that continue the
 * cursor go straight out; older ones are skipped; a gap (a frame pub/sub lost, or frames that
 * overtook a replay) triggers a catch-up from the update log. `{"type":"resume","seq":N}` moves
 * the cursor to N and replays everything after it. So every update reaches every device once and
 * in order, across reconnects. A socket whose send buffer passes MAX_BUFFERED (a slow client) is
 * dropped and resumes later; pings drop dead connections.
 */
import websocket from '@fastify/websocket'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import type { AppContext } from '../context.js'
import { bearerToken } from '../http/auth.js'
import { unauthorized } from '../http/errors.js'
import { authenticate } from '../modules/sessions/service.js'
import { DeliveryMarks } from './delivered.js'
import type { Frame } from './fanout.js'
import { Presence } from './presence.js'
import * as updates from './updates.js'

const MAX_BUFFERED = 1024 * 1024
const HEARTBEAT_MS = 30_000
const REPLAY_BATCH = 500

class Connection {
  cursor: number | null = null
  syncing = false
  /** set when another replay pass is needed (a resume or gap arrived during one) */
  private rerun = false
  alive = true
  private pending: Frame[] = []

  constructor(
    readonly ctx: AppContext,
    readonly userId: number,
    readonly socket: WebSocket,
    private marks: DeliveryMarks,
  ) {}

  send(frame: Frame) {
    if (this.socket.readyState !== this.socket.OPEN) return
    if (this.socket.bufferedAmount > MAX_BUFFERED) {
      this.socket.close(4008, 'too slow: reconnect and resume')
      return
    }
    this.socket.send(JSON.stringify(frame))
    if (frame.type === 'message.new') this.noteDelivery(frame.data)
  }

  /** A recipient's device was handed a message: the first time stamps delivered_at. */
  private noteDelivery(data: unknown) {
    const message = (data as { message?: { message_id?: number; sender_id?: number; delivered_at?: string | null } }).message
    if (message?.message_id && message.sender_id !== this.userId && !message.delivered_at) this.marks.add(message.message_id)
  }

  /** A live frame from fan-out. */
  deliver(frame: Frame) {
    if (frame.seq === undefined) return this.send(frame)
    if (this.syncing) return void this.pending.push(frame)
    if (this.cursor === null || frame.seq === this.cursor + 1) {
      this.cursor = frame.seq
      return this.send(frame)
    }
    if (frame.seq <= this.cursor) return
    void this.catchUp()
  }

  /**
   * Opens the stream at the user's current seq (or where a `resume` that raced in put it), says
   * `ready`, then delivers whatever arrived meanwhile.
   */
  async start() {
    this.syncing = true
    let seq: number
    try {
      seq = await updates.currentSeq(this.ctx.db, this.userId)
    } finally {
      this.syncing = false
    }
    this.cursor ??= seq
    this.send({ type: 'ready', data: { user_id: this.userId, seq } })
    await this.catchUp()
  }

  /**
   * Replays the update log after `from` (or the cursor), then whatever arrived meanwhile. A resume
   * or gap that comes in while a replay runs asks for another pass; a batch read before the cursor
   * moved is discarded and read again from the new cursor.
   */
  async catchUp(from?: number) {
    if (from !== undefined) this.cursor = from
    this.rerun = true
    if (this.syncing) return
    this.syncing = true
    try {
      while (this.rerun) {
        this.rerun = false
        const batch = await updates.since(this.ctx.db, this.userId, this.cursor ?? 0, REPLAY_BATCH)
        if (this.rerun) continue
        // Seqs are contiguous, so a hole before the batch means the log was pruned past the cursor:
        // the client must reload its state (chat list, open histories), then the stream goes on.
        const expected = (this.cursor ?? 0) + 1
        if (batch.length > 0 && batch[0].seq > expected) {
          this.send({ type: 'reset', data: { missed_from: expected, missed_to: batch[0].seq - 1 } })
        }
        for (const update of batch) this.send(update)
        if (batch.length > 0) this.cursor = batch[batch.length - 1].seq
        if (batch.length === REPLAY_BATCH) this.rerun = true
      }
    } catch (err) {
      this.ctx.log.warn({ err, userId: this.userId }, 'replay failed; closing the socket so the client resumes')
      this.socket.close(1011, 'replay failed')
    } finally {
      this.syncing = false
    }
    const pending = this.pending
    this.pending = []
    for (const frame of pending) this.deliver(frame)
  }
}

/** Where each user's live connections are, on this instance. */
class Registry {
  private byUser = new Map<number, Set<Connection>>()

  add(connection: Connection) {
    let set = this.byUser.get(connection.userId)
    if (!set) this.byUser.set(connection.userId, (set = new Set()))
    set.add(connection)
  }
  remove(connection: Connection) {
    const set = this.byUser.get(connection.userId)
    set?.delete(connection)
    if (set?.size === 0) this.byUser.delete(connection.userId)
  }
  of(userId: number) {
    return this.byUser.get(userId)
  }
  all() {
    return [...this.byUser.values()].flatMap((set) => [...set])
  }
}

function socketToken(request: FastifyRequest): string | null {
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.token
  return bearerToken(request) ?? (typeof fromQuery === 'string' ? fromQuery : null)
}

/** Inbound frames: one small handler per type. */
const inbound: Record<string, (connection: Connection, frame: Record<string, unknown>) => void> = {
  resume: (connection, frame) => {
    const seq = Number(frame.seq)
    if (!Number.isInteger(seq) || seq < 0) return connection.send({ type: 'error', data: { message: 'resume needs an integer seq ≥ 0' } })
    void connection.catchUp(seq)
  },
  ping: (connection) => connection.send({ type: 'pong', data: {} }),
}

export async function registerGateway(app: FastifyInstance, ctx: AppContext, prefixes: readonly string[]) {
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } })
  const registry = new Registry()
  const presence = new Presence(ctx)
  const marks = new DeliveryMarks(ctx)
  // One instance alone: nobody can be online from before this start (a crash leaves stale flags).
  if (!ctx.redis) await ctx.db.updateTable('users').set({ is_online: 0 }).where('is_online', '=', 1).execute()

  ctx.fanout.subscribe((deliveries) => {
    for (const { userId, frame } of deliveries) {
      const connections = registry.of(userId)
      if (connections) for (const connection of connections) connection.deliver(frame)
    }
  })

  // Frames lost while pub/sub was reconnecting: every socket replays from its cursor.
  ctx.fanout.onResync(() => {
    for (const connection of registry.all()) void connection.catchUp()
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
  }, HEARTBEAT_MS)
  heartbeat.unref()
  app.addHook('onClose', async () => {
    clearInterval(heartbeat)
    await marks.flush()
  })

  for (const prefix of prefixes) {
    app.get(`${prefix}/ws`, {
      websocket: true,
      schema: { tags: ['realtime'], hide: true },
      preValidation: async (request) => {
        const token = socketToken(request)
        const found = token ? await authenticate(ctx, token) : null
        if (!found) throw unauthorized(token ? 'Session is invalid or expired' : 'Authentication required')
        request.user = found.user
        request.sessionId = found.sessionId
      },
    }, async (socket, request) => {
      const connection = new Connection(ctx, request.user.id, socket, marks)
      registry.add(connection)
      socket.on('pong', () => (connection.alive = true))
      socket.on('close', () => {
        registry.remove(connection)
        void presence.disconnected(connection.userId)
      })
      socket.on('message', (raw) => {
        connection.alive = true
        let frame: Record<string, unknown>
        try {
          frame = JSON.parse(String(raw))
        } catch {
          return connection.send({ type: 'error', data: { message: 'frames are JSON objects' } })
        }
        const handler = typeof frame?.type === 'string' ? inbound[frame.type] : undefined
        if (!handler) return connection.send({ type: 'error', data: { message: `unknown frame type ${String(frame?.type)}` } })
        handler(connection, frame)
      })
      await presence.connected(connection.userId)
      await connection.start()
    })
  }
}
