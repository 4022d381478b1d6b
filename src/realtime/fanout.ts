/**
 * Fan-out: hands frames to whichever instance holds each recipient's sockets. The in-process
 * implementation serves the embedded default (one instance); the Redis one (REDIS_URL) lets
 * several instances share the load. Pub/sub is only a nudge: the update log is the truth, and a
 * gap is repaired by resume.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import type { Logger } from 'pino'

/**
 * A frame as sent to clients. `seq` is the user's update seq (per-user log); `chat_id` +
 * `chat_seq` place a group or channel event in that chat's own log. Ephemeral frames (typing,
 * presence) carry neither seq.
 */
export interface Frame {
  type: string
  seq?: number
  chat_id?: number
  chat_seq?: number
  data: unknown
}

/** To every socket of one user, or to every socket subscribed to one group or channel. */
export type Delivery = { userId: number; frame: Frame } | { chatId: number; frame: Frame }

/**
 * An internal control message between instances (a bot's long poll to wake, sockets to close, due
 * work): its kind and payload, typed by events/control.ts (ControlMap). It never reaches a client:
 * control messages travel beside the deliveries, not as frames of them.
 */
export interface ControlEnvelope {
  kind: string
  payload: unknown
}

type Handler = (deliveries: Delivery[]) => void
type ControlHandler = (messages: ControlEnvelope[]) => void

export interface Fanout {
  /** Hands deliveries to every subscriber on every instance; never waits, never throws. */
  publish(deliveries: Delivery[]): void
  subscribe(handler: Handler): void
  /** Hands control messages to every control subscriber on every instance (this one at once); never waits, never throws. */
  publishControl(messages: ControlEnvelope[]): void
  subscribeControl(handler: ControlHandler): void
  /** Resolves once frames published elsewhere reach this instance: await it before serving sockets. */
  ready: Promise<void>
  /** Called when frames may have been lost (pub/sub reconnected): sockets should catch up from the log. */
  onResync(handler: () => void): void
  close(): Promise<void>
}

export function createLocalFanout(): Fanout {
  const handlers: Handler[] = []
  const controlHandlers: ControlHandler[] = []
  return {
    publish(deliveries) {
      if (deliveries.length === 0) return
      for (const handler of handlers) handler(deliveries)
    },
    subscribe(handler) {
      handlers.push(handler)
    },
    publishControl(messages) {
      if (messages.length === 0) return
      for (const handler of controlHandlers) handler(messages)
    },
    subscribeControl(handler) {
      controlHandlers.push(handler)
    },
    ready: Promise.resolve(),
    onResync() {
      // in-process delivery cannot lose frames
    },
    async close() {
      handlers.length = 0
      controlHandlers.length = 0
    },
  }
}

/** how soon an instance whose publishes failed asks the others to catch up again, after that failed too */
const RESYNC_RETRY_MS = 1000

/**
 * What travels over the channel: one message per publish() or publishControl() call, or `resync` from an instance
 * whose publishes failed (the others catch up from the log).
 */
interface Envelope {
  origin: string
  deliveries?: Delivery[]
  controls?: ControlEnvelope[]
  /** when it was published (ms since the epoch), for the lag figure */
  at?: number
  resync?: true
}

/**
 * Fan-out across instances over one Redis pub/sub channel, `${prefix}fanout`. publish() hands the
 * deliveries to this instance's handlers at once and sends one PUBLISH for the others; each
 * instance skips its own messages, which it has already delivered. Two connections of its own:
 * one in subscriber mode cannot publish, and the shared ctx.redis stays free of both roles.
 */
export function createRedisFanout(options: { url: string; prefix: string; log: Logger; onArrival?: (lagMs: number) => void }): Fanout {
  const { url, log, onArrival } = options
  const channel = `${options.prefix}fanout`
  const origin = randomBytes(8).toString('hex')
  const handlers: Handler[] = []
  const controlHandlers: ControlHandler[] = []
  let closed = false

  // Handlers run inside publish() (a service's commit path) and inside Redis' event emitter:
  // neither should be broken by a throwing handler.
  const deliver = (deliveries: Delivery[]) => {
    for (const handler of handlers) {
      try {
        handler(deliveries)
      } catch (err) {
        log.warn({ err }, 'fan-out handler failed')
      }
    }
  }
  const control = (messages: ControlEnvelope[]) => {
    for (const handler of controlHandlers) {
      try {
        handler(messages)
      } catch (err) {
        log.warn({ err }, 'fan-out control handler failed')
      }
    }
  }

  const connect = (role: string, extra: { autoResubscribe?: boolean } = {}) => {
    // named, so an operator (or a test) can tell the fan-out connections apart in CLIENT LIST
    const redis = new Redis(url, { maxRetriesPerRequest: 3, connectionName: `${options.prefix}fanout:${role}`, ...extra })
    redis.on('error', (err) => log.warn({ err, role }, 'fan-out redis connection error'))
    return redis
  }
  const publisher = connect('publisher')
  // resubscribed by hand after a reconnect, so that the catch-up starts only once it is done
  const subscriber = connect('subscriber', { autoResubscribe: false })

  const resyncHandlers: (() => void)[] = []
  const resync = () => {
    for (const handler of resyncHandlers) handler()
  }

  subscriber.on('message', (from: string, raw: string) => {
    if (from !== channel) return
    let envelope: Envelope
    try {
      envelope = JSON.parse(raw)
    } catch (err) {
      return log.warn({ err }, 'fan-out message is not JSON; ignored')
    }
    if (envelope.origin === origin) return
    if (envelope.resync === true) {
      log.warn({ channel, from: envelope.origin }, 'another instance lost fan-out messages; sockets catch up from the update log')
      return resync()
    }
    if (Array.isArray(envelope.controls)) return control(envelope.controls.filter((m) => typeof m?.kind === 'string'))
    if (!Array.isArray(envelope.deliveries)) return
    if (onArrival && typeof envelope.at === 'number') onArrival(Date.now() - envelope.at)
    deliver(envelope.deliveries)
  })

  // Frames published while the subscriber was away are lost, so every reconnect after the first
  // subscribes again and then, once Redis has confirmed it (from then on nothing is missed), has the
  // gateway catch its sockets up from the update log. Reading the log before the confirmation
  // could miss a frame committed in between.
  let connections = 0
  subscriber.on('ready', () => {
    if (++connections === 1 || closed) return
    subscriber.subscribe(channel).then(
      () => {
        log.warn({ channel }, 'fan-out resubscribed after a reconnect; sockets catch up from the update log')
        resync()
      },
      // the connection dropped again: the next 'ready' tries again
      (err) => log.warn({ err, channel }, 'fan-out could not resubscribe'),
    )
  })
  // A publish that failed left the other instances behind: the publisher tells them to catch up,
  // at once if it is connected (Redis refused the command), else once it is back.
  /** failed publishes that no resync request has covered yet */
  let lost = 0
  let asking = false
  const askResync = () => {
    if (asking || lost === 0 || closed) return
    asking = true
    const covered = lost
    const envelope: Envelope = { origin, resync: true }
    publisher
      .publish(channel, JSON.stringify(envelope))
      .then(
        () => (lost -= covered),
        (err) => log.warn({ err, channel }, 'fan-out could not ask the other instances to catch up'),
      )
      .finally(() => {
        asking = false
        if (lost > 0 && publisher.status === 'ready') setTimeout(askResync, RESYNC_RETRY_MS).unref()
      })
  }
  publisher.on('ready', askResync)
  const ready = subscriber.subscribe(channel).then(() => undefined)
  // Whoever awaits `ready` sees a failure; a process that never does (the CLI) must not crash on it.
  ready.catch((err) => log.warn({ err, channel }, 'fan-out could not subscribe'))

  return {
    publish(deliveries) {
      if (closed || deliveries.length === 0) return
      deliver(deliveries)
      const envelope: Envelope = { origin, deliveries, at: Date.now() }
      publisher.publish(channel, JSON.stringify(envelope)).catch((err) => {
        // connected (Redis refused the command): ask at once; otherwise once the publisher is back
        lost++
        if (publisher.status === 'ready') setImmediate(askResync)
        log.warn(
          { err, count: deliveries.length },
          'fan-out publish failed; the other instances catch up from the update log once Redis is back',
        )
      })
    },
    subscribe(handler) {
      handlers.push(handler)
    },
    publishControl(messages) {
      if (closed || messages.length === 0) return
      control(messages)
      const envelope: Envelope = { origin, controls: messages }
      // a lost control message is covered by its receiver (a long poll re-reads every second, due
      // work is looked for again at the latest a minute later, a closed session fails its next use)
      publisher
        .publish(channel, JSON.stringify(envelope))
        .catch((err) => log.warn({ err, count: messages.length }, 'fan-out control publish failed'))
    },
    subscribeControl(handler) {
      controlHandlers.push(handler)
    },
    ready,
    onResync(handler) {
      resyncHandlers.push(handler)
    },
    async close() {
      closed = true
      handlers.length = 0
      controlHandlers.length = 0
      await Promise.all([publisher, subscriber].map((redis) => redis.quit().catch(() => redis.disconnect())))
    },
  }
}
