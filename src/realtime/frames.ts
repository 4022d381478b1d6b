/** Frames from the client: one small handler per type (realtime/protocol.ts describes them), and a resume given in the URL. */
import { CLOSE } from './close-codes.js'
import type { Connection } from './connection.js'

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
export function resumeFromUrl(query: unknown): { seq: number | undefined; chats: Map<number, number> } | string | null {
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

/** Frames each socket sent in its current window (WS_FRAME_RATE_LIMIT). */
const frameCounts = new WeakMap<Connection, { index: number; count: number }>()

/**
 * Counts one frame: true when it may be handled. Past the limit a frame gets one `rate_limited`
 * error frame per window and is dropped; past twice the limit the socket is closed (a client
 * that ignores the error is abusing it).
 */
function withinFrameLimit(connection: Connection): boolean {
  const { max, windowMs } = connection.ctx.config.wsFrameRateLimit
  const now = Date.now()
  const index = Math.floor(now / windowMs)
  let window = frameCounts.get(connection)
  if (!window || window.index !== index) frameCounts.set(connection, (window = { index, count: 0 }))
  window.count++
  if (window.count <= max) return true
  if (window.count === max + 1) {
    const retryAfter = Math.max(1, Math.ceil(((index + 1) * windowMs - now) / 1000))
    connection.send({ type: 'error', data: { code: 'rate_limited', message: `more than ${max} frames in ${windowMs / 1000} s; slow down`, retry_after: retryAfter } })
  } else if (window.count > 2 * max) {
    connection.close(CLOSE.frameFlood)
  }
  return false
}

/** Parses one inbound frame and runs its handler; a bad frame gets an error frame, never a throw. */
export function onInbound(connection: Connection, raw: unknown) {
  if (!withinFrameLimit(connection)) return
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
