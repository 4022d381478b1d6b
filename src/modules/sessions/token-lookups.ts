/**
 * Who a token belongs to, on PostgreSQL, read for many requests in one round trip. Every
 * authenticated request (and every socket frame) needs its session and user; one query each cost
 * a round trip per request, and on a loaded server that round trip (its writes to the socket, the
 * backend's wake-up) cost more than the query. A lookup now waits for the end of the event loop's
 * current turn (setImmediate), and the hashes asked for in that turn are read with one query; while
 * two such queries are in flight, for one of them to finish, and what was asked for meanwhile goes
 * in the next query together.
 *
 * Nothing is cached: each lookup's query starts after the lookup was asked for, so it sees every
 * write committed before then (a logout or a ban answered before the request arrived included),
 * exactly as a query of its own would. Only the wait for the turn's end is added.
 */
import type { Db } from '../../db/database.js'
import { findByTokenHashes, type SessionWithUser } from './repo.js'

/** hashes read by one query at most (the rest go in the next) */
const MAX_PER_QUERY = 500
/**
 * queries in flight at most. The lookups asked for meanwhile wait and go together in the next one,
 * so under a backlog each query serves more requests instead of more queries queueing for the
 * pool's connections (which the send batches need too).
 */
const MAX_IN_FLIGHT = 2

interface Waiting {
  resolve(found: SessionWithUser | undefined): void
  reject(error: unknown): void
}

export class TokenLookups {
  /** hash → the lookups waiting for it, not yet in a query */
  private waiting = new Map<string, Waiting[]>()
  /** queries running now */
  private inFlight = 0
  /** whether a run is due at the end of this turn */
  private scheduled = false

  constructor(private readonly db: Db) {}

  find(tokenHash: string): Promise<SessionWithUser | undefined> {
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(tokenHash)
      if (list) list.push({ resolve, reject })
      else this.waiting.set(tokenHash, [{ resolve, reject }])
      if (!this.scheduled && this.inFlight < MAX_IN_FLIGHT) {
        this.scheduled = true
        setImmediate(() => this.run())
      }
    })
  }

  /** Starts one query with what is waiting (at most MAX_PER_QUERY hashes), if a slot is free. */
  private run() {
    this.scheduled = false
    if (this.waiting.size === 0 || this.inFlight >= MAX_IN_FLIGHT) return
    const part = new Map<string, Waiting[]>()
    for (const [hash, list] of this.waiting) {
      if (part.size === MAX_PER_QUERY) break
      part.set(hash, list)
      this.waiting.delete(hash)
    }
    this.inFlight++
    findByTokenHashes(this.db, [...part.keys()])
      .then(
        (found) => {
          for (const [hash, list] of part) for (const lookup of list) lookup.resolve(found.get(hash))
        },
        (error: unknown) => {
          for (const list of part.values()) for (const lookup of list) lookup.reject(error)
        },
      )
      .finally(() => {
        this.inFlight--
        this.run()
      })
    // more than one query's worth waiting: the next starts at once if a slot is free
    if (this.waiting.size > 0) this.run()
  }
}
