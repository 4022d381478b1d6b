/**
 * Platform broadcasts: an admin's message from the system account (`tern`) into every active
 * user's personal chat with it. Starting one only records it (with its ModLog row) and answers at
 * once (with its item in the work queue, jobs/queue.ts, kind `broadcasts`); the queue's runner
 * writes the messages in short transactions of a batch each,
 * through the one message write path, so recipients get `message.new` like any message and a
 * million recipients never hold the event loop or one transaction for long. Progress (sent/total)
 * is kept on the broadcast's row.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { AppContext } from '../../context.js'
import type { BroadcastRow, UserRow } from '../../db/tables.js'
import { inTransaction } from '../../events/outbox.js'
import { notFound, validationError } from '../../http/errors.js'
import { iso, isoOrNull } from '../../lib/time.js'
import { DONE, enqueueIn, queueWake, type QueueKind } from '../../jobs/queue.js'
import { assertPlatformAdmin as assertAdmin } from '../../policies/accounts.js'
import { recordModeration } from '../modlog/index.js'
import * as chats from '../chats/index.js'
import { postFromPlatform, textDraft } from '../messages/index.js'
import { systemAccount } from '../users/index.js'
import * as repo from './repo.js'

/** recipients read per batch query */
const BATCH = 200
/** a batch's transaction ends after this long, so the database (and on SQLite the loop) is free again soon */
const BATCH_BUDGET_MS = 5
/** a run hands back after this long; the queue runs it again at once, where it stopped */
const RUN_BUDGET_MS = 10_000

export function present(row: BroadcastRow) {
  return {
    broadcast_id: row.id,
    content: row.content,
    status: row.status,
    sent: row.sent,
    total: row.total,
    created_at: iso(row.created_at),
    started_at: isoOrNull(row.started_at),
    finished_at: isoOrNull(row.finished_at),
  }
}
export type BroadcastView = ReturnType<typeof present>

/** Records a broadcast to every active user (as of now) and answers at once; 400 for empty content. */
export async function start(ctx: AppContext, admin: UserRow, content: string): Promise<{ broadcast_id: number; recipients: number }> {
  assertAdmin(admin)
  if (content.trim() === '') throw validationError('content must not be empty')
  const system = await systemAccount(ctx)
  const row = await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now()
    const lastUserId = await repo.maxUserId(trx)
    const total = await repo.countRecipients(trx, system.id, lastUserId)
    const inserted = await repo.insert(trx, { admin_id: admin.id, content, total, last_user_id: lastUserId, created_at: now })
    await recordModeration(trx, admin, 'broadcast.start', null, { broadcast_id: inserted.id, recipients: total }, now)
    // one item stands for every unfinished broadcast: they go out one after another, oldest first
    await enqueueIn(trx, { kind: KIND, key: 'all', dueAt: now }, now, 'keep')
    return inserted
  })
  queueWake(ctx, ctx.clock.now())
  ctx.log.info({ adminId: admin.id, broadcastId: row.id, recipients: row.total }, 'broadcast queued')
  return { broadcast_id: row.id, recipients: row.total }
}

export async function get(ctx: AppContext, admin: UserRow, id: number): Promise<BroadcastView> {
  assertAdmin(admin)
  const row = await repo.find(ctx.db, id)
  if (!row) throw notFound('Broadcast not found')
  return present(row)
}

export async function list(ctx: AppContext, admin: UserRow, page: number, perPage: number) {
  assertAdmin(admin)
  const { rows, total } = await repo.list(ctx.db, page, perPage)
  return { items: rows.map(present), total }
}

const KIND = 'broadcasts'

/**
 * The queue's kind for broadcasts (jobs/index.ts): its one item runs deliverPending, and again at
 * once while a broadcast is unfinished. A failed run is tried again after 1 s, doubling up to a
 * minute, never given up (the progress is on the broadcast's row, so nothing is sent twice).
 */
export function broadcastKind(ctx: AppContext): QueueKind {
  return {
    kind: KIND,
    job: 'broadcast-delivery',
    summary: "writes admins' broadcasts to every recipient, a short transaction per batch",
    policy: { firstMs: 1000, maxMs: 60_000, jitter: 0, maxAttempts: null, maxAgeMs: null },
    async run(_item, signal) {
      await deliverPending(ctx, signal)
      return (await repo.nextUnfinished(ctx.db)) ? { again: ctx.clock.now() } : DONE
    },
  }
}

/**
 * Delivers unfinished broadcasts, oldest first, batch by batch, until they are done, the run's
 * time is up or the runner stops. A batch is one transaction (messages, events, progress), so a
 * crash loses no progress and sends nothing twice.
 */
export async function deliverPending(ctx: AppContext, signal?: AbortSignal): Promise<{ sent: number }> {
  const startedAt = Date.now()
  let sent = 0
  while (!signal?.aborted && Date.now() - startedAt < RUN_BUDGET_MS) {
    const broadcast = await repo.nextUnfinished(ctx.db)
    if (!broadcast) break
    if (broadcast.status === 'queued') await repo.markRunning(ctx.db, broadcast.id, ctx.clock.now())
    const system = await systemAccount(ctx)
    let cursor = broadcast.cursor_user_id
    for (;;) {
      if (signal?.aborted || Date.now() - startedAt >= RUN_BUDGET_MS) return { sent }
      const batch = await repo.nextRecipients(ctx.db, system.id, broadcast.last_user_id, cursor, BATCH)
      if (batch.length === 0) {
        await repo.finish(ctx.db, broadcast.id, ctx.clock.now())
        ctx.log.info({ broadcastId: broadcast.id }, 'broadcast delivered')
        break
      }
      const batchStarted = Date.now()
      const done = await inTransaction(ctx, async (trx, events) => {
        const began = Date.now()
        let n = 0
        for (const userId of batch) {
          const chat = await chats.personalIn(trx, system.id, userId, events.now)
          await postFromPlatform(events, chat, system, textDraft(broadcast.content))
          n++
          if (Date.now() - began >= BATCH_BUDGET_MS) break
        }
        await repo.advance(trx, broadcast.id, n, batch[n - 1])
        return n
      })
      cursor = batch[done - 1]
      sent += done
      // Requests come first: a send takes the database several times (its write, then the listeners'
      // lookups), and a batch in front of each would add up. The broadcast rests as long as its
      // batch took, so it holds the database at most half the time.
      await sleep(Math.max(1, Date.now() - batchStarted))
    }
  }
  return { sent }
}
