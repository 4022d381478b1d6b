/**
 * Limits on writes: every request that may change something (any method but GET, HEAD and
 * OPTIONS) counts against its client IP (WRITE_RATE_LIMIT_IP, checked as it arrives) and, once
 * signed in, against its user (WRITE_RATE_LIMIT_USER, checked by requireUser). Over the limit:
 * 429 `rate_limited` with Retry-After, before the handler runs.
 *
 * Windows are fixed (`floor(now / window)`), so every instance agrees on them. A check never waits
 * for Redis: each instance counts in memory and, with REDIS_URL, adds its counts to the shared
 * ones every SYNC_MS (one pipelined INCRBY per key touched) and learns the others' totals from the
 * replies. Across instances a limit can be overrun by what the others counted in the last
 * SYNC_MS; a single instance is exact. The hot path stays one Map lookup.
 */
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { RateLimit } from '../config.js'

const SYNC_MS = 250

interface Window {
  /** which window (floor(now / windowMs)) the counts are for */
  index: number
  /** the cluster's count as Redis last told it (ours included), or ours alone without Redis */
  known: number
  /** counted here since the last sync */
  pending: number
  /** a sync is in flight for this key (its `pending` were taken) */
  syncing: boolean
}

export class WindowCounter {
  private readonly windows = new Map<string, Window>()

  constructor(
    private readonly name: string,
    readonly limit: RateLimit,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request for `key`: null when allowed, else the seconds until its window ends. */
  take(key: string): number | null {
    const now = this.now()
    const index = Math.floor(now / this.limit.windowMs)
    let window = this.windows.get(key)
    if (!window || window.index !== index) {
      window = { index, known: 0, pending: 0, syncing: false }
      this.windows.set(key, window)
    }
    if (window.known + window.pending >= this.limit.max) {
      return Math.max(1, Math.ceil(((index + 1) * this.limit.windowMs - now) / 1000))
    }
    window.pending++
    return null
  }

  /**
   * Adds the counts made here since the last sync to Redis and learns the totals. Keys of past
   * windows are forgotten. Without Redis the counts simply stay local.
   */
  async sync(redis: Redis | null, prefix: string): Promise<void> {
    const index = Math.floor(this.now() / this.limit.windowMs)
    const batch: [string, Window, number][] = []
    for (const [key, window] of this.windows) {
      if (window.index < index) {
        this.windows.delete(key)
        continue
      }
      if (!redis) {
        window.known += window.pending
        window.pending = 0
        continue
      }
      if (window.syncing) continue
      // a key with nothing new still asks (INCRBY 0) to hear what the other instances counted
      batch.push([key, window, window.pending])
    }
    if (!redis || batch.length === 0) return
    const pipeline = redis.pipeline()
    for (const [key, window, taken] of batch) {
      window.syncing = true
      window.pending -= taken
      window.known += taken
      const redisKey = `${prefix}wl:${this.name}:${window.index}:${key}`
      pipeline.incrby(redisKey, taken)
      pipeline.pexpire(redisKey, this.limit.windowMs * 2)
    }
    try {
      const replies = (await pipeline.exec()) ?? []
      batch.forEach(([, window], i) => {
        const [error, total] = replies[i * 2] ?? [new Error('no reply'), null]
        if (!error && typeof total === 'number') window.known = Math.max(window.known, total)
      })
    } finally {
      for (const [, window] of batch) window.syncing = false
    }
  }

  get size() {
    return this.windows.size
  }
}

export class WriteLimits {
  readonly perIp: WindowCounter
  readonly perUser: WindowCounter
  private readonly timer: NodeJS.Timeout

  constructor(options: { ip: RateLimit; user: RateLimit; redis: Redis | null; prefix: string; log: Logger; now?: () => number }) {
    this.perIp = new WindowCounter('ip', options.ip, options.now)
    this.perUser = new WindowCounter('user', options.user, options.now)
    let failing = false
    this.timer = setInterval(() => {
      Promise.all([this.perIp.sync(options.redis, options.prefix), this.perUser.sync(options.redis, options.prefix)]).then(
        () => (failing = false),
        (err: unknown) => {
          // counting goes on locally meanwhile; say so once per outage
          if (!failing) options.log.warn({ err }, 'write limits: could not share counts through Redis; counting on this instance alone')
          failing = true
        },
      )
    }, SYNC_MS)
    this.timer.unref()
  }

  close() {
    clearInterval(this.timer)
  }
}
