/**
 * Who a token belongs to, kept in memory on SQLite: every authenticated request asks, and two
 * indexed reads cost more than a small request's own work once commits keep resetting the reading
 * connection's page cache.
 *
 * An entry never outlives a change to its session or its user:
 * - Writes through this process's connection are seen by TEMP triggers on `users` and
 *   `user_sessions` (they exist on that connection only, not in the schema), which drop the
 *   user's entries at once, inside the writing statement.
 * - An entry is filled only while that connection has no open transaction, so a fill cannot read
 *   the old row between a write's trigger and its commit.
 * - Writes by another process (the CLI, an operator's sqlite3 shell) change the connection's
 *   `PRAGMA data_version`, checked at most every EXTERNAL_CHECK_MS: the whole cache is dropped.
 *
 * Only SQLite has one: on PostgreSQL several instances write, and every request reads.
 */
import type SQLite from 'better-sqlite3'
import { findByTokenHashHot, type SessionWithUser } from './repo.js'

const MAX_ENTRIES = 20_000
const EXTERNAL_CHECK_MS = 100

const CHANGED = 'tern_auth_changed'
const TRIGGERS = [
  `create temp trigger if not exists tern_auth_user_update after update on main.users begin select ${CHANGED}(old.id); end`,
  `create temp trigger if not exists tern_auth_user_delete after delete on main.users begin select ${CHANGED}(old.id); end`,
  `create temp trigger if not exists tern_auth_session_update after update on main.user_sessions begin select ${CHANGED}(old.user_id); end`,
  `create temp trigger if not exists tern_auth_session_delete after delete on main.user_sessions begin select ${CHANGED}(old.user_id); end`,
]

export class AuthCache {
  /** token hash → session and user; the user row is frozen, shared by concurrent requests */
  private readonly entries = new Map<string, SessionWithUser>()
  /** user id → the token hashes cached for that user */
  private readonly byUser = new Map<number, Set<string>>()
  private state: 'detached' | 'attached' | 'unavailable' = 'detached'
  private dataVersion = -1
  private checkedAt = 0

  constructor(
    /** the connection every write of this process goes through */
    private readonly sqlite: SQLite.Database,
    /** the query-only connection misses are read from */
    private readonly reader: SQLite.Database,
    private readonly maxEntries = MAX_ENTRIES,
  ) {}

  /** The session of a token hash with its user, or undefined when the token is unknown. */
  find(tokenHash: string): SessionWithUser | undefined {
    const fillable = !this.sqlite.inTransaction && this.ready()
    const hit = this.entries.get(tokenHash)
    if (hit) return hit
    const found = findByTokenHashHot(this.reader, tokenHash)
    if (found && fillable) this.store(tokenHash, found)
    return found
  }

  get size() {
    return this.entries.size
  }

  /** Drops every entry of a user (their row or one of their sessions changed). */
  forgetUser(userId: number) {
    const hashes = this.byUser.get(userId)
    if (!hashes) return
    for (const hash of hashes) this.entries.delete(hash)
    this.byUser.delete(userId)
  }

  clear() {
    this.entries.clear()
    this.byUser.clear()
  }

  /**
   * Whether entries may be filled now: the triggers exist (created on first use, once the schema
   * does), and no other process has written since the last look (else everything is dropped).
   * Runs only while the main connection has no open transaction.
   */
  private ready(): boolean {
    if (this.state === 'detached') this.attach()
    if (this.state !== 'attached') return false
    const now = performance.now()
    if (now - this.checkedAt >= EXTERNAL_CHECK_MS) {
      this.checkedAt = now
      const version = this.sqlite.pragma('data_version', { simple: true }) as number
      if (version !== this.dataVersion) {
        this.dataVersion = version
        this.clear()
      }
    }
    return true
  }

  private attach() {
    const exists = this.sqlite
      .prepare("select count(*) as n from sqlite_master where type = 'table' and name in ('users', 'user_sessions')")
      .get() as { n: number }
    // before migrations: no schema to watch yet, try again on the next request
    if (exists.n !== 2) return
    try {
      this.sqlite.function(CHANGED, { deterministic: false }, (userId: unknown) => {
        if (typeof userId === 'number') this.forgetUser(userId)
        else if (typeof userId === 'bigint') this.forgetUser(Number(userId))
        else this.clear()
        return null
      })
      for (const sql of TRIGGERS) this.sqlite.exec(sql)
      this.dataVersion = this.sqlite.pragma('data_version', { simple: true }) as number
      this.checkedAt = performance.now()
      this.state = 'attached'
    } catch {
      // a connection that cannot take temp triggers simply is not cached
      this.state = 'unavailable'
    }
  }

  private store(tokenHash: string, found: SessionWithUser) {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value!
      const entry = this.entries.get(oldest)!
      this.entries.delete(oldest)
      const hashes = this.byUser.get(entry.user.id)!
      hashes.delete(oldest)
      if (hashes.size === 0) this.byUser.delete(entry.user.id)
    }
    Object.freeze(found.user)
    Object.freeze(found)
    this.entries.set(tokenHash, found)
    let hashes = this.byUser.get(found.user.id)
    if (!hashes) this.byUser.set(found.user.id, (hashes = new Set()))
    hashes.add(tokenHash)
  }
}
