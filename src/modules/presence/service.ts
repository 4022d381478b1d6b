/**
 * Presence from live connections. A user is online while any of their sockets is open on any
 * instance. Each instance counts its own sockets per user; with Redis, a sorted set per user holds
 * the instances that have one (scored by an expiry the heartbeat refreshes, so a crashed instance
 * stops counting after PRESENCE_TTL_HEARTBEATS missed heartbeats). Only the first socket anywhere
 * (online) and the last one (offline, last_seen) change the user row and send `presence` frames
 * to their personal-chat peers, except where either side blocked the other or the user's privacy
 * (last seen: everyone | contacts | nobody) leaves the peer out. Frames are ephemeral
 * (no seq): when pub/sub may have lost some, the gateway sends each socket its peers' presence as
 * it stands (peersOf). The gateway calls these through its hooks (modules/updates/gateway.ts).
 * A transition that fails (Redis or the database away) is retried until it goes through.
 */
import { randomBytes } from 'node:crypto'
import type { AppContext } from '../../context.js'
import { iso } from '../../lib/time.js'
import type { Frame } from '../../realtime/fanout.js'
import * as blocks from '../../policies/blocks.js'
import { allows, ownersKeeping } from '../../policies/sight.js'
import * as chats from '../chats/index.js'
import * as contacts from '../contacts/index.js'
import * as users from '../users/index.js'

/** an instance's hold on a user lapses after this many missed heartbeats (a crashed instance) */
const PRESENCE_TTL_HEARTBEATS = 3
/** first retry of a failed presence transition; the delay doubles up to RETRY_MAX_MS */
const RETRY_MIN_MS = 1000
const RETRY_MAX_MS = 30_000

const instances = new WeakMap<AppContext, Presence>()

/** The instance's presence: one per context, shared by the gateway and the presence-refresh job. */
export function presenceOf(ctx: AppContext): Presence {
  let presence = instances.get(ctx)
  if (!presence) instances.set(ctx, (presence = new Presence(ctx)))
  return presence
}

export class Presence {
  private counts = new Map<number, number>()
  /** per-user chain, so one user's transitions are handled in order */
  private chains = new Map<number, Promise<void>>()
  private readonly instance = randomBytes(8).toString('hex')
  /** users whose last transition failed, waiting for the retry timer */
  private failed = new Set<number>()
  private retryTimer: NodeJS.Timeout | null = null
  private retryDelay = RETRY_MIN_MS
  private closed = false
  private readonly ttlMs: number

  constructor(private ctx: AppContext) {
    this.ttlMs = PRESENCE_TTL_HEARTBEATS * ctx.config.wsHeartbeatSeconds * 1000
  }

  /** Before the first socket: one instance alone, nobody can be online from before this start (a crash leaves stale flags). */
  async start() {
    if (!this.ctx.redis) await users.clearOnlineFlags(this.ctx.db)
  }

  /** A socket of `userId` opened here; resolves once the user row says online. */
  connected(userId: number): Promise<void> {
    const count = (this.counts.get(userId) ?? 0) + 1
    this.counts.set(userId, count)
    if (count > 1) return this.chains.get(userId) ?? Promise.resolve()
    return this.serialize(userId, async () => {
      if (await this.join(userId)) await this.announce(userId, true)
    })
  }

  /** A socket of `userId` closed here. */
  disconnected(userId: number): Promise<void> {
    const count = (this.counts.get(userId) ?? 1) - 1
    if (count > 0) {
      this.counts.set(userId, count)
      return Promise.resolve()
    }
    this.counts.delete(userId)
    return this.serialize(userId, async () => {
      // a socket that opened again meanwhile keeps the user online
      if (this.counts.has(userId)) return
      if (await this.leave(userId)) await this.announce(userId, false)
    })
  }

  /** The presence-refresh job (src/jobs/): tell Redis this instance still holds its users. */
  async refresh() {
    const redis = this.ctx.redis
    if (!redis || this.counts.size === 0) return
    const expiry = Date.now() + this.ttlMs
    const pipeline = redis.pipeline()
    for (const userId of this.counts.keys()) {
      // the key's own expiry too: it would otherwise lapse with every instance still in it
      pipeline.zadd(this.key(userId), expiry, this.instance).pexpire(this.key(userId), this.ttlMs)
    }
    await pipeline.exec()
  }

  /**
   * Which of these users hold a live socket on any instance right now: this instance's own count
   * without Redis (one instance), the unexpired holds in Redis with it (every instance's).
   */
  async onlineAmong(userIds: readonly number[]): Promise<Set<number>> {
    const redis = this.ctx.redis
    if (!redis) return new Set(userIds.filter((id) => this.counts.has(id)))
    if (userIds.length === 0) return new Set()
    const now = Date.now()
    const pipeline = redis.pipeline()
    for (const id of userIds) pipeline.zcount(this.key(id), now, '+inf')
    const results = (await pipeline.exec()) ?? []
    return new Set(userIds.filter((id, i) => this.counts.has(id) || Number(results[i]?.[1]) > 0))
  }

  /** Stops retrying failed transitions (the server is closing). */
  close() {
    this.closed = true
    if (this.retryTimer) clearTimeout(this.retryTimer)
    this.retryTimer = null
  }

  private serialize(userId: number, step: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(userId) ?? Promise.resolve()).then(step).then(
      () => {
        this.retryDelay = RETRY_MIN_MS
      },
      (err) => {
        this.ctx.log.warn({ err, userId }, 'presence update failed; retrying')
        this.retryLater(userId)
      },
    )
    this.chains.set(userId, next)
    void next.then(() => {
      if (this.chains.get(userId) === next) this.chains.delete(userId)
    })
    return next
  }

  private key(userId: number) {
    return `${this.ctx.config.redisPrefix}presence:${userId}`
  }

  /**
   * A transition that failed (Redis or the database was away) is tried again, with a delay that
   * doubles while failures go on: otherwise the user row and the peers would keep the old state
   * until the user's next connect or disconnect. The retry looks at where the user stands here
   * now, whatever the failed step was; it may repeat an announcement, never lose one.
   */
  private retryLater(userId: number) {
    this.failed.add(userId)
    if (this.retryTimer || this.closed) return
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null
      this.retryDelay = Math.min(this.retryDelay * 2, RETRY_MAX_MS)
      const users = [...this.failed]
      this.failed.clear()
      for (const id of users) {
        void this.serialize(id, async () => {
          const here = this.counts.has(id)
          if (here ? await this.join(id) : await this.leave(id)) await this.announce(id, here)
        })
      }
    }, this.retryDelay)
    this.retryTimer.unref()
  }

  /** Whether this instance is the first to hold the user (every instance, with Redis). */
  private async join(userId: number): Promise<boolean> {
    const redis = this.ctx.redis
    if (!redis) return true
    const now = Date.now()
    const key = this.key(userId)
    const result = await redis
      .multi()
      .zadd(key, now + this.ttlMs, this.instance)
      .zremrangebyscore(key, '-inf', now)
      .zcard(key)
      .pexpire(key, this.ttlMs)
      .exec()
    return Number(result?.[2]?.[1]) === 1
  }

  /** Whether no instance holds the user any more. */
  private async leave(userId: number): Promise<boolean> {
    const redis = this.ctx.redis
    if (!redis) return true
    const key = this.key(userId)
    const result = await redis.multi().zrem(key, this.instance).zremrangebyscore(key, '-inf', Date.now()).zcard(key).exec()
    return Number(result?.[2]?.[1]) === 0
  }

  private async announce(userId: number, isOnline: boolean) {
    const now = this.ctx.clock.now()
    const user = await users.updateUser(this.ctx.db, userId, isOnline ? { is_online: 1 } : { is_online: 0, last_seen: now })
    if (user.privacy_last_seen === 'nobody') return
    const frame = presenceFrame(userId, isOnline, user.last_seen)
    const peers = await this.visiblePeers(userId)
    const kept = user.privacy_last_seen === 'contacts' ? new Set(await contacts.contactIds(this.ctx.db, userId)) : EMPTY
    const seeing = peers.filter((peer) => allows(user.privacy_last_seen, kept.has(peer)))
    this.ctx.fanout.publish(seeing.map((peer) => ({ userId: peer, frame })))
  }

  /**
   * After the user changed who sees their last seen, or whom they keep as contacts: each
   * personal-chat peer (of `viewers`, when given) gets the user's presence as they may now see
   * it, the hidden form (offline, never seen) where they may not.
   */
  async reannounce(userId: number, viewers?: readonly number[]) {
    const user = await users.findById(this.ctx, userId)
    if (!user) return
    // a contact coming or going changes what anyone sees only under "contacts"
    if (viewers && user.privacy_last_seen !== 'contacts') return
    const [blocked, peers] = await Promise.all([blocks.blockedAround(this.ctx.db, userId), chats.personalPeers(this.ctx.db, userId)])
    const only = viewers ? new Set(viewers) : null
    const targets = peers.filter((id) => !blocked.has(id) && (only === null || only.has(id)))
    if (targets.length === 0) return
    const kept = user.privacy_last_seen === 'contacts' ? new Set(await contacts.contactIds(this.ctx.db, userId)) : EMPTY
    const shown = presenceFrame(userId, user.is_online === 1, user.last_seen)
    const hidden = presenceFrame(userId, false, null)
    this.ctx.fanout.publish(
      targets.map((viewer) => ({ userId: viewer, frame: allows(user.privacy_last_seen, kept.has(viewer)) ? shown : hidden })),
    )
  }

  /**
   * Where each of the user's personal-chat peers stands now, as `presence` frames: for a socket
   * that may have missed some (pub/sub was cut). The user rows are written before a change is
   * published, so these frames plus whatever arrives after the read began are the current state.
   * A peer whose privacy hides their last seen from this user is sent in the hidden form.
   */
  async peersOf(userId: number): Promise<Frame[]> {
    const peers = await this.visiblePeers(userId)
    const frames: Frame[] = []
    for (let i = 0; i < peers.length; i += PEER_CHUNK) {
      const rows = await users.presenceOf(this.ctx.db, peers.slice(i, i + PEER_CHUNK))
      const asking = rows.filter((row) => row.privacy_last_seen === 'contacts').map((row) => row.id)
      const keepMe = asking.length ? await ownersKeeping(this.ctx.db, asking, userId) : EMPTY
      for (const row of rows) {
        const sees = allows(row.privacy_last_seen, keepMe.has(row.id))
        frames.push(sees ? presenceFrame(row.id, row.is_online === 1, row.last_seen) : presenceFrame(row.id, false, null))
      }
    }
    return frames
  }

  /** The user's personal-chat peers, but those on either side of a block. */
  private async visiblePeers(userId: number): Promise<number[]> {
    const [peers, hidden] = await Promise.all([chats.personalPeers(this.ctx.db, userId), blocks.blockedAround(this.ctx.db, userId)])
    return peers.filter((id) => !hidden.has(id))
  }
}

const EMPTY: ReadonlySet<number> = new Set()

/** user ids per query when reading peers' presence (well under either dialect's bound-parameter limit) */
const PEER_CHUNK = 500

function presenceFrame(userId: number, isOnline: boolean, lastSeen: number | null): Frame {
  return { type: 'presence', data: { user_id: userId, is_online: isOnline, last_seen: lastSeen === null ? null : iso(lastSeen) } }
}
