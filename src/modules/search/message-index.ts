/**
 * Keeping SQLite's message search index current (migration 2026-11-25T08-00): sends do not index
 * their message, so a job indexes new messages in batches, and every search first catches up on
 * what the job has not reached yet. On PostgreSQL the GIN index follows every write by itself and
 * there is nothing to do.
 */
import { setImmediate as yieldToRequests } from 'node:timers/promises'
import type { AppContext } from '../../context.js'
import * as repo from './repo.js'

/** messages per transaction: large enough to amortise FTS5's per-commit work, short enough not to hold the writer long */
export const INDEX_BATCH = 2000

/**
 * Indexes the messages not yet indexed, batch by batch with requests let in between, until the
 * index is current, `maxRows` were indexed, or `signal` aborts. Answers how many were indexed.
 */
export async function catchUpMessageIndex(ctx: AppContext, maxRows = Number.POSITIVE_INFINITY, signal?: AbortSignal): Promise<number> {
  if (ctx.config.dialect !== 'sqlite') return 0
  let indexed = 0
  while (indexed < maxRows && !signal?.aborted) {
    const n = await repo.indexMessagesSqlite(ctx.db, Math.min(INDEX_BATCH, maxRows - indexed))
    indexed += n
    if (n < INDEX_BATCH) break
    await yieldToRequests()
  }
  return indexed
}
