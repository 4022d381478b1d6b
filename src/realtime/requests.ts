/**
 * Requests over the socket (docs/realtime.md): `{type, id, data}` → `{type: "ack", id, data}` or
 * `{type: "error", id, error: {code, message}}`. The gateway only frames them: what a request
 * means, and every rule it follows, is its module's (hooks.ts SocketRequests), the same code its
 * HTTP twin runs. A request's answer goes out once the module's work is done, so an ack of a write
 * means it is committed.
 */
import { clientError } from '../http/errors.js'
import { Lane, type Turn } from '../lib/lane.js'
import type { Connection } from './connection.js'

/** A socket's requests, bound to its session (the gateway binds the token). */
export interface BoundRequests {
  readonly types: ReadonlySet<string>
  lane(type: string, data: unknown): string
  /**
   * Takes a request as it arrives (see SocketRequests.accept); what it returns gives the answer in
   * the request's turn (`turn`: its place in its lane, lib/lane.ts, for a module that can let the
   * next start early)
   */
  accept(type: string, data: unknown): (turn: Turn) => Promise<unknown>
}

const MAX_ID_LENGTH = 128

/** The id a client gave a request: a string of 1–128 characters or a safe integer; null otherwise. */
export function requestId(value: unknown): string | number | null {
  if (typeof value === 'string') return value.length >= 1 && value.length <= MAX_ID_LENGTH ? value : null
  return Number.isSafeInteger(value) ? (value as number) : null
}

/** each socket's lanes in progress, by key */
const lanes = new WeakMap<Connection, Map<string, Lane>>()

/**
 * Runs one request in its turn in its lane on this socket (after the earlier ones, or once they
 * are placed: lib/lane.ts) and answers it. Never rejects: a failure is an error frame, an
 * unexpected one is also logged.
 */
export function runRequest(
  connection: Connection,
  requests: BoundRequests,
  type: string,
  id: string | number,
  data: unknown,
): Promise<void> {
  let byKey = lanes.get(connection)
  if (!byKey) lanes.set(connection, (byKey = new Map()))
  const key = requests.lane(type, data)
  let lane = byKey.get(key)
  if (!lane) byKey.set(key, (lane = new Lane()))
  const arrived = performance.now()
  const answer = requests.accept(type, data)
  const run = async (turn: Turn) => {
    let outcome = 'ack'
    try {
      connection.answer({ type: 'ack', id, data: await answer(turn) })
    } catch (error) {
      const failure = clientError(error)
      if (failure.unexpected)
        connection.ctx.log.error({ err: error, userId: connection.userId, socketId: connection.id, request: type }, 'socket request failed')
      refuse(connection, id, failure)
      outcome = failure.code
    }
    connection.ctx.metrics.socketRequest(type, outcome, performance.now() - arrived)
  }
  return lane.run(run).then(() => {
    if (lane.idle && byKey.get(key) === lane) byKey.delete(key)
  })
}

/** An error frame answering request `id`. */
export function refuse(connection: Connection, id: string | number, failure: { code: string; message: string; retryAfter?: number }) {
  const error = { code: failure.code, message: failure.message, ...(failure.retryAfter ? { retry_after: failure.retryAfter } : {}) }
  connection.answer({ type: 'error', id, error })
}
