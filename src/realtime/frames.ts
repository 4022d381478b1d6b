/**
 * Frames from the client: one small handler per type of the gateway's own (realtime/protocol.ts
 * describes them), the modules' requests (realtime/requests.ts), and a resume given in the URL.
 */
import { CLOSE } from './close-codes.js'
import type { Connection } from './connection.js'
import { refuse, requestId, runRequest, type BoundRequests } from './requests.js'

type InboundHandler = (connection: Connection, frame: Record<string, unknown>) => unknown

/**
 * Inbound frames: one small handler per type. A Map, because the key is the client's string: a
 * plain object would answer `valueOf` or `__proto__` with what it inherits.
 */
const inbound = new Map<string, InboundHandler>([
  [
    'resume',
    (connection, frame) => {
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
    },
  ],
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
  const integer = (text: unknown) =>
    typeof text === 'string' && /^\d{1,16}$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : null
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
 * Counts one frame: null when it may be handled, else the seconds until the window ends. Past
 * twice the limit the socket is closed (a client that ignores the errors is abusing it).
 */
function overFrameLimit(connection: Connection): { retryAfter: number; first: boolean } | null {
  const { max, windowMs } = connection.ctx.config.wsFrameRateLimit
  const now = Date.now()
  const index = Math.floor(now / windowMs)
  let window = frameCounts.get(connection)
  if (!window || window.index !== index) frameCounts.set(connection, (window = { index, count: 0 }))
  window.count++
  if (window.count <= max) return null
  if (window.count > 2 * max) connection.close(CLOSE.frameFlood)
  return { retryAfter: Math.max(1, Math.ceil(((index + 1) * windowMs - now) / 1000)), first: window.count === max + 1 }
}

/**
 * Parses one inbound frame and runs its handler; a bad frame gets an error frame, never a throw.
 * Past the frame limit a request is refused with its id (so its client knows to retry it later)
 * and any other frame is dropped, the first of the window with a `rate_limited` error frame.
 */
export function onInbound(connection: Connection, raw: unknown, requests: BoundRequests) {
  const over = overFrameLimit(connection)
  // closed for flooding
  if (over && connection.socket.readyState !== connection.socket.OPEN) return
  let frame: unknown = null
  try {
    frame = JSON.parse(String(raw))
  } catch {
    if (!over) return connection.send({ type: 'error', data: { message: 'frames are JSON objects' } })
  }
  const object = typeof frame === 'object' && frame !== null && !Array.isArray(frame) ? (frame as Record<string, unknown>) : null
  const type = object?.type
  const isRequest = typeof type === 'string' && requests.types.has(type)
  const id = isRequest ? requestId(object!.id) : null
  if (over) {
    const message = `more than ${connection.ctx.config.wsFrameRateLimit.max} frames in ${connection.ctx.config.wsFrameRateLimit.windowMs / 1000} s; slow down`
    if (id !== null) return refuse(connection, id, { code: 'rate_limited', message, retryAfter: over.retryAfter })
    if (over.first) connection.send({ type: 'error', data: { code: 'rate_limited', message, retry_after: over.retryAfter } })
    return
  }
  if (!object) return connection.send({ type: 'error', data: { message: 'frames are JSON objects' } })
  if (isRequest) {
    if (id === null)
      return connection.send({
        type: 'error',
        data: { message: `a ${type} request needs an id (a string of 1-128 characters or an integer), echoed in its answer` },
      })
    return runRequest(connection, requests, type, id, object.data)
  }
  const handler = typeof type === 'string' ? inbound.get(type) : undefined
  if (!handler) {
    const shown = typeof type === 'string' ? JSON.stringify(type.slice(0, 64)) : String(typeof type)
    return connection.send({
      type: 'error',
      data: { message: `unknown frame type ${shown}`, types: [...inbound.keys(), ...requests.types] },
    })
  }
  return handler(connection, object)
}
