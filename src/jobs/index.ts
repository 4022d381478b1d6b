/**
 * Every periodic job of an instance, in one list (explicit wiring, like the mounts), and every kind
 * of the work queue (work that falls due: createQueue): the module owns what a job or a kind does,
 * this file when and where it runs. buildApp starts both when the server is ready and stops them
 * when it closes.
 */
import type { AppContext } from '../context.js'
import { accountCleanup } from '../modules/auth/account.js'
import { broadcastKind } from '../modules/broadcasts/service.js'
import { endTimedOut, nextTimeoutAt } from '../modules/calls/service.js'
import { endIdleRooms, nextIdleAt } from '../modules/calls/rooms.js'
import { sweepExpiredUploads } from '../modules/files/sweep.js'
import { scheduledKind } from '../modules/messages/scheduled.js'
import { renewDue } from '../modules/premium/service.js'
import { presenceOf } from '../modules/presence/service.js'
import { webhookKinds } from '../modules/bots/webhook-job.js'
import { pushKind } from '../modules/push/delivery.js'
import { cleanupExpiredStories } from '../modules/stories/cleanup.js'
import { WorkQueue, type QueueOptions } from './queue.js'
import { JobRunner, type RunnerOptions } from './runner.js'

/**
 * Jobs that run when their work is due (nextDueAt), woken by `jobs.due` when new work appears
 * (events/reactions.ts), look at the latest this often for work nobody announced.
 */
const DUE_LOOK_MS = 60_000
/** new messages are indexed for message search on SQLite this long after the first of a burst (a search catches up itself) */
export const MESSAGE_INDEX_DELAY_MS = 2000
/** how often deleted accounts' usernames and lapsed unconfirmed email addresses are given back */
const ACCOUNT_CLEANUP_EVERY_MS = 15 * 60_000

export function createJobs(ctx: AppContext, options: RunnerOptions = {}): JobRunner {
  const jobs = new JobRunner(ctx, options)
  jobs.define({
    name: 'story-cleanup',
    summary: 'removes expired stories with their views, likes, reactions and media',
    scope: 'cluster',
    everyMs: ctx.config.storyCleanupIntervalSeconds * 1000,
    // stories that expired while the service was down go at start, not a period later
    runAtStart: true,
    run: (signal) => cleanupExpiredStories(ctx, signal),
  })
  jobs.define({
    name: 'premium-renewal',
    summary: 'renews the premium of subscriptions with auto-renew on before it ends, through the payment provider',
    scope: 'cluster',
    everyMs: ctx.config.premiumRenewalIntervalSeconds * 1000,
    runAtStart: true,
    run: (signal) => renewDue(ctx, ctx.config.premiumRenewBeforeSeconds * 1000, signal),
  })
  jobs.define({
    name: 'call-timeouts',
    summary: 'ends calls nobody answered in time as missed',
    scope: 'cluster',
    // at the next call's time-out; a call that starts ringing wakes it (events/reactions.ts)
    everyMs: DUE_LOOK_MS,
    nextDueAt: () => nextTimeoutAt(ctx),
    run: (signal) => endTimedOut(ctx, signal),
  })
  jobs.define({
    name: 'video-room-idle',
    summary: 'ends video rooms nobody has been connected to for VIDEO_ROOM_IDLE_SECONDS',
    scope: 'cluster',
    // when the longest-empty room turns idle; a room emptied since the last look waits at most DUE_LOOK_MS more
    everyMs: DUE_LOOK_MS,
    nextDueAt: () => nextIdleAt(ctx),
    run: (signal) => endIdleRooms(ctx, signal),
  })
  jobs.define({
    name: 'account-cleanup',
    summary:
      "gives back deleted accounts' usernames after ACCOUNT_USERNAME_GRACE_DAYS and takes lapsed unconfirmed email addresses off their accounts",
    scope: 'cluster',
    everyMs: ACCOUNT_CLEANUP_EVERY_MS,
    runAtStart: true,
    run: (signal) => accountCleanup(ctx, signal),
  })
  jobs.define({
    name: 'upload-sweep',
    summary: "removes expired unfinished uploads (chunked and tus) from this instance's directory",
    // each instance has its own uploads directory
    scope: 'instance',
    everyMs: ctx.config.uploadSweepIntervalSeconds * 1000,
    run: () => sweepExpiredUploads(ctx),
  })
  const messageIndex = ctx.messageIndex
  if (messageIndex) {
    jobs.define({
      name: 'message-search-index',
      summary: "adds new messages, edits and deletes to message search's full-text index, in batches, off the event loop (SQLite)",
      scope: 'instance',
      // woken by new messages, edits and deletes (events/reactions.ts)
      everyMs: DUE_LOOK_MS,
      nextDueAt: async () => null,
      runAtStart: true,
      run: (signal) => messageIndex.catchUp(signal),
    })
  }
  if (ctx.redis) {
    jobs.define({
      name: 'presence-refresh',
      summary: "renews this instance's hold on its users' online state in Redis",
      scope: 'instance',
      everyMs: ctx.config.wsHeartbeatSeconds * 1000,
      run: () => presenceOf(ctx).refresh(),
    })
  }
  return jobs
}

/**
 * The work queue's kinds (jobs/queue.ts): scheduled messages, push notifications, bot webhooks
 * (moving updates into the log, and each chat's deliveries) and broadcasts, in one table with one
 * runner and one retry policy, each kind with its own numbers.
 */
export function createQueue(ctx: AppContext, options: QueueOptions = {}): WorkQueue {
  const queue = new WorkQueue(ctx, options)
  queue.define(scheduledKind(ctx))
  queue.define(pushKind(ctx))
  for (const kind of webhookKinds(ctx)) queue.define(kind)
  queue.define(broadcastKind(ctx))
  return queue
}
