/**
 * Fixed-window counters that start at the first counted try: in-process, or in Redis (shared by
 * every instance) when the owner has a Redis connection. One set per owner (a server's context)
 * and namespace, so several servers in one process (tests) and several limits keep theirs apart.
 * Keys come from clients, so the local ones live in a Map, and the map is swept of ended windows
 * before it grows past LOCAL_MAX_KEYS.
 */
import type { Redis } from 'ioredis'
/** a limit: `max` tries per window of `windowMs` (config's RateLimit has this shape) */
export interface RateLimit {
  max: number
  windowMs: number
}

interface Window {
  count: number
  resetAt: number
}

export interface CounterOwner {
  redis: Redis | null
  config: { redisPrefix: string }
}

const LOCAL_MAX_KEYS = 100_000

/** INCR with the window's expiry set by the first try; answers [count, ms left]. */
const REDIS_COUNT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}`

export class WindowCounts {
  private readonly local = new Map<string, Window>()

  constructor(
    private readonly owner: CounterOwner,
    /** the Redis key's middle part: `<REDIS_PREFIX><namespace>:<key>` */
    private readonly namespace: string,
  ) {}

  /** Counts one try under `limit`: null when it is within it, else the milliseconds until its window ends. */
  async take(key: string, limit: RateLimit): Promise<number | null> {
    const { redis } = this.owner
    if (redis) {
      const [count, ttl] = (await redis.eval(REDIS_COUNT, 1, this.redisKey(key), String(limit.windowMs))) as [number, number]
      return count > limit.max ? (ttl > 0 ? ttl : limit.windowMs) : null
    }
    const now = Date.now()
    let window = this.local.get(key)
    if (!window || window.resetAt <= now) {
      if (this.local.size >= LOCAL_MAX_KEYS) for (const [k, w] of this.local) if (w.resetAt <= now) this.local.delete(k)
      window = { count: 0, resetAt: now + limit.windowMs }
      this.local.set(key, window)
    }
    window.count++
    return window.count > limit.max ? window.resetAt - now : null
  }

  /** Gives one counted try back (it was right, or it was refused by another limit). */
  async giveBack(key: string): Promise<void> {
    if (this.owner.redis) {
      await this.owner.redis.decr(this.redisKey(key))
      return
    }
    const window = this.local.get(key)
    if (window && window.count > 0) window.count--
  }

  private redisKey(key: string) {
    return `${this.owner.config.redisPrefix}${this.namespace}:${key}`
  }
}

const byOwner = new WeakMap<CounterOwner, Map<string, WindowCounts>>()

/** The owner's counters of one namespace (made on first use). */
export function windowCounts(owner: CounterOwner, namespace: string): WindowCounts {
  let counters = byOwner.get(owner)
  if (!counters) byOwner.set(owner, (counters = new Map()))
  let found = counters.get(namespace)
  if (!found) counters.set(namespace, (found = new WindowCounts(owner, namespace)))
  return found
}
