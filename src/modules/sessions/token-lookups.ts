/**
 * Who a token belongs to, on PostgreSQL, read for many requests in one round trip. Every
 * authenticated request (and every socket frame) needs its session and user; one query each cost
 * a round trip per request, and on a loaded server that round trip (its writes to the socket, the
 * backend's wake-up) cost more than the query. A lookup now waits for the end of the event loop's
 * current turn (setImmediate), and the hashes asked for in that turn are read with one query.
 *
 * Nothing is cached: each lookup's query starts after the lookup was asked for, so it sees every
 * write committed before then (a logout or a ban answered before the request arrived included),
 * exactly as a query of its own would. Only the wait for the turn's end is added.
 */
import type { Db } from '../../db/database.js'
import { findByTokenHashes, type SessionWithUser } from './repo.js'

/** hashes read by one query at most (the rest go in the next) */
const MAX_PER_QUERY = 500

interface Waiting {
  resolve(found: SessionWithUser | undefined): void
  reject(error: unknown): void
}

export class TokenLookups {
  /** hash → the lookups waiting for it, for the turn being collected */
  private waiting = new Map<string, Waiting[]>()

  constructor(private readonly db: Db) {}

  find(tokenHash: string): Promise<SessionWithUser | undefined> {
    return new Promise((resolve, reject) => {
      if (this.waiting.size === 0) setImmediate(() => this.run())
      const list = this.waiting.get(tokenHash)
      if (list) list.push({ resolve, reject })
      else this.waiting.set(tokenHash, [{ resolve, reject }])
    })
  }

  private run() {
    const all = this.waiting
    this.waiting = new Map()
    const hashes = [...all.keys()]
    for (let start = 0; start < hashes.length; start += MAX_PER_QUERY) {
      const part = hashes.slice(start, start + MAX_PER_QUERY)
      findByTokenHashes(this.db, part).then(
        (found) => {
          for (const hash of part) for (const lookup of all.get(hash)!) lookup.resolve(found.get(hash))
        },
        (error: unknown) => {
          for (const hash of part) for (const lookup of all.get(hash)!) lookup.reject(error)
        },
      )
    }
  }
}
