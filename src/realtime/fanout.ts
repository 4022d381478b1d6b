/**
 * Fan-out: hands frames to whichever instance holds each recipient's sockets. This in-process
 * implementation serves the embedded default (one instance); a Redis one (REDIS_URL) has the same
 * shape. Pub/sub is only a nudge: the update log is the truth, and a gap is repaired by resume.
 */

/** A frame as sent to clients: `seq` is present for logged updates, absent for ephemeral ones. */
export interface Frame {
  type: string
  seq?: number
  data: unknown
}

export interface Delivery {
  userId: number
  frame: Frame
}

export interface Fanout {
  publish(deliveries: Delivery[]): void
  subscribe(handler: (deliveries: Delivery[]) => void): void
  close(): Promise<void>
}

export function createLocalFanout(): Fanout {
  const handlers: ((deliveries: Delivery[]) => void)[] = []
  return {
    publish(deliveries) {
      if (deliveries.length === 0) return
      for (const handler of handlers) handler(deliveries)
    },
    subscribe(handler) {
      handlers.push(handler)
    },
    async close() {
      handlers.length = 0
    },
  }
}
