/**
 * Users this instance knows to have no push subscription, so that a message to them (the common
 * case: most receivers never registered a device) costs push no query (reactions.ts).
 *
 * Only what was read from the table is known, and only "none": a user who registers a
 * subscription is forgotten (`subscribed`, called once register committed); removing one, or a
 * session ending, can only make "none" truer. A read that was under way while someone registered
 * teaches nothing (the epoch moved), so a stale "none" is never learnt. Subscriptions are
 * registered only through this instance's register (service.ts) when it runs alone; with several
 * instances (REDIS_URL) another one's registration would go unseen, so there is no cache there and
 * every message is looked up as before.
 */
import type { AppContext } from '../../context.js'

/** past this many users the set starts over (a bound on memory, not a policy) */
const MAX_KNOWN = 200_000

export class Unsubscribed {
  private readonly none = new Set<number>()
  /** moves on every registration: a read begun before it may be stale */
  private epoch = 0

  /** whether `userId` is known to have no subscription */
  has(userId: number): boolean {
    return this.none.has(userId)
  }

  /** Reads the users of `userIds` who have a subscription with `read`, and learns that the others have none. */
  async learn(userIds: number[], read: (userIds: number[]) => Promise<Set<number>>): Promise<void> {
    const epoch = this.epoch
    const subscribed = await read(userIds)
    // someone registered while the read ran: it may not have seen that
    if (epoch !== this.epoch) return
    if (this.none.size + userIds.length > MAX_KNOWN) this.none.clear()
    for (const id of userIds) if (!subscribed.has(id)) this.none.add(id)
  }

  /** `userId` registered a subscription (committed): forget that they had none. */
  subscribed(userId: number) {
    this.epoch++
    this.none.delete(userId)
  }
}

const caches = new WeakMap<AppContext, Unsubscribed>()

/** This instance's cache, or null when it may not keep one (several instances share the database). */
export function unsubscribed(ctx: AppContext): Unsubscribed | null {
  if (ctx.config.redisUrl !== null) return null
  let cache = caches.get(ctx)
  if (!cache) caches.set(ctx, (cache = new Unsubscribed()))
  return cache
}
