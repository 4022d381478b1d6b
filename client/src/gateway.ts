/**
 * The real-time gateway, typed: connect, hear every frame as a `ServerFrame` (events.d.ts, from
 * /asyncapi.json), and resume after a dropped connection from the last `seq` and each chat's last
 * `chat_seq` (docs/realtime.md, "Catching up"), so nothing is missed or seen twice.
 */
import type { AckFrame, ClientFrame, ServerFrame } from './events.js'

type RequestFrame = Extract<ClientFrame, { id: unknown }>
/** What a client may ask over the socket: send, edit, delete, react, read (docs/realtime.md). */
export type RequestType = RequestFrame['type']
/** The `data` of a request: its HTTP twin's body (with the message id in it). */
export type RequestData<T extends RequestType> = Extract<RequestFrame, { type: T }>['data']

/** A request the server refused: the code and message its HTTP twin would have answered. */
export class GatewayRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** seconds to wait before retrying (rate_limited) */
    readonly retryAfter?: number,
  ) {
    super(message)
    this.name = 'GatewayRequestError'
  }
}

/** The part of a WebSocket this helper uses (the browser's, or the `ws` package's). */
export interface WebSocketLike {
  readonly readyState: number
  send(data: string): void
  close(code?: number, reason?: string): void
  onopen: ((event: unknown) => void) | null
  onmessage: ((event: { data: unknown }) => void) | null
  onclose: ((event: { code: number; reason: string }) => void) | null
  onerror: ((event: unknown) => void) | null
}

export interface GatewayOptions {
  /** Tern's base URL (http or https; the socket uses ws or wss) */
  baseUrl: string
  /** a session token; without one the browser's session cookie is used (same-origin pages only) */
  token?: string
  /** where the client stands (resume): the user's last handled seq, and each chat's last chat_seq */
  resume?: { seq?: number; chats?: Record<number, number> }
  /** every frame from the server, in order; a replayed frame already handled is skipped */
  onEvent(frame: ServerFrame): void
  onClose?(close: { code: number; reason: string }): void
  /** the WebSocket class (default: the global one; in Node pass `ws`) */
  WebSocket?: new (
    url: string,
  ) => WebSocketLike
}

export interface Gateway {
  send(frame: ClientFrame): void
  /**
   * Asks the server over the socket and resolves with the ack's data once done (a write: once
   * stored); rejects with a GatewayRequestError, or an Error if the socket closes first (then
   * retry, with the same client_message_id for a send). A message sent here comes back here, not
   * to onEvent: the server answers the socket that sent it with the ack in place of its own
   * message.new (docs/realtime.md), and the position moves past it.
   */
  request<T extends RequestType>(type: T, data: RequestData<T>): Promise<AckFrame['data']>
  close(): void
  /** the position to resume from on the next connect */
  position(): { seq: number; chats: Record<number, number> }
  /** resolves at the server's `ready` frame */
  ready: Promise<void>
}

export function connectGateway(options: GatewayOptions): Gateway {
  let seq = options.resume?.seq ?? 0
  const chats: Record<number, number> = { ...options.resume?.chats }
  const url = new URL('/api.v2/api/ws', options.baseUrl.replace(/^http/, 'ws'))
  if (options.token) url.searchParams.set('token', options.token)
  if (options.resume) {
    url.searchParams.set('seq', String(seq))
    const pairs = Object.entries(chats).map(([chat, at]) => `${chat}:${at}`)
    if (pairs.length) url.searchParams.set('chats', pairs.join(','))
  }
  const Socket = options.WebSocket ?? (globalThis as unknown as { WebSocket: new (url: string) => WebSocketLike }).WebSocket
  const socket = new Socket(url.toString())
  let ready!: () => void
  let failed!: (error: Error) => void
  const readyPromise = new Promise<void>((resolve, reject) => {
    ready = resolve
    failed = reject
  })
  const pending = new Map<string, { resolve(data: AckFrame['data']): void; reject(error: Error): void }>()
  let requestIds = 0
  socket.onmessage = (event) => {
    const frame = JSON.parse(String(event.data)) as ServerFrame
    if (frame.type === 'ready') ready()
    // the answer to a request: handed to its caller, not to onEvent
    if ((frame.type === 'ack' || frame.type === 'error') && 'id' in frame && typeof frame.id === 'string' && pending.has(frame.id)) {
      const waiting = pending.get(frame.id)!
      pending.delete(frame.id)
      // a send's ack stands for the sender's own message.new on this socket: the position moves past it
      if (frame.type === 'ack' && frame.seq !== undefined && frame.seq > seq) seq = frame.seq
      if (frame.type === 'ack') waiting.resolve(frame.data)
      else if ('error' in frame) waiting.reject(new GatewayRequestError(frame.error.code, frame.error.message, frame.error.retry_after))
      return
    }
    // a frame at or before the position already handled is a replay: skip it
    const at = frame as { seq?: number; chat_id?: number; chat_seq?: number }
    if (at.chat_id !== undefined && at.chat_seq !== undefined) {
      if (at.chat_seq <= (chats[at.chat_id] ?? 0)) return
      chats[at.chat_id] = at.chat_seq
    } else if (at.seq !== undefined) {
      if (at.seq <= seq) return
      seq = at.seq
    }
    options.onEvent(frame)
  }
  socket.onclose = (event) => {
    failed(new Error(`gateway closed: ${event.code} ${event.reason}`))
    for (const waiting of pending.values()) waiting.reject(new Error(`gateway closed before the answer: ${event.code} ${event.reason}`))
    pending.clear()
    options.onClose?.({ code: event.code, reason: event.reason })
  }
  socket.onerror = () => failed(new Error('gateway connection failed'))
  return {
    send: (frame) => socket.send(JSON.stringify(frame)),
    request: (type, data) =>
      new Promise((resolve, reject) => {
        const id = `q${++requestIds}`
        pending.set(id, { resolve, reject })
        socket.send(JSON.stringify({ type, id, data }))
      }),
    close: () => socket.close(1000, 'bye'),
    position: () => ({ seq, chats: { ...chats } }),
    ready: readyPromise,
  }
}
