/**
 * The control channel: internal messages between Tern's own parts and instances, beside the
 * EventMap. An event (map.ts) is something that happened, logged and shown to clients; a control
 * message is an instruction to whichever instance holds what it concerns (a bot's long poll, a
 * user's sockets, the work queue's timer) and never reaches a client. Each kind has one payload
 * type in ControlMap; `publish` hands a message to this instance's subscribers at once and, with
 * REDIS_URL, to every other instance over the fan-out's Redis channel. Delivery is a nudge, at
 * most once: each receiver has its own way to catch up with a lost one.
 */
import type { Logger } from 'pino'
import type { ControlEnvelope, Fanout } from '../realtime/fanout.js'

export interface ControlMap {
  /** close a user's sockets opened with one session (every socket of theirs without `sessionId`) */
  'sockets.close': { userId: number; sessionId?: number; code: number; reason: string }
  /** a bot has a new update: its long polls read again */
  'bot.update': { botId: number }
  /** a getUpdates started (id, and when): an older poll of the bot anywhere ends with 409 */
  'bot.poll': { botId: number; id: string; started: number }
  /** work in the queue falls due at `at` (ms since the epoch): the queue's runner looks then */
  'queue.due': { at: number }
  /** a job that runs when its work is due (jobs/runner.ts nextDueAt) has work due at `at` */
  'jobs.due': { job: string; at: number }
}

export type ControlKind = keyof ControlMap
type Handler<Kind extends ControlKind> = (payload: ControlMap[Kind]) => void

const KINDS: ReadonlySet<string> = new Set<ControlKind>(['sockets.close', 'bot.update', 'bot.poll', 'queue.due', 'jobs.due'])

export class ControlChannel {
  private readonly handlers = new Map<ControlKind, Handler<ControlKind>[]>()

  constructor(
    private readonly transport: Fanout,
    private readonly log: Logger,
  ) {
    transport.subscribeControl((messages) => {
      for (const message of messages) this.dispatch(message)
    })
  }

  /** Sends a message to every subscriber of its kind, here and on every instance; never waits, never throws. */
  publish<Kind extends ControlKind>(kind: Kind, payload: ControlMap[Kind]) {
    this.transport.publishControl([{ kind, payload }])
  }

  /** Sends a message to this instance's subscribers only (what concerns this instance alone, such as its own search index). */
  publishHere<Kind extends ControlKind>(kind: Kind, payload: ControlMap[Kind]) {
    this.dispatch({ kind, payload })
  }

  /** Calls `handler` for each message of this kind; returns a function that removes it. */
  on<Kind extends ControlKind>(kind: Kind, handler: Handler<Kind>): () => void {
    const list = this.handlers.get(kind) ?? []
    list.push(handler as Handler<ControlKind>)
    this.handlers.set(kind, list)
    return () => {
      const index = list.indexOf(handler as Handler<ControlKind>)
      if (index >= 0) list.splice(index, 1)
    }
  }

  private dispatch(message: ControlEnvelope) {
    if (!KINDS.has(message.kind) || typeof message.payload !== 'object' || message.payload === null) {
      return this.log.warn({ kind: message.kind }, 'unknown control message; ignored')
    }
    for (const handler of this.handlers.get(message.kind as ControlKind) ?? []) {
      try {
        handler(message.payload as ControlMap[ControlKind])
      } catch (err) {
        this.log.warn({ err, kind: message.kind }, 'control handler failed')
      }
    }
  }
}
