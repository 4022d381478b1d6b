/**
 * The work queue: one durable queue (the `work_queue` table) for the work that falls due —
 * scheduled messages, push notifications, bot webhook deliveries, admin broadcasts — with one
 * retry policy and one runner (docs/architecture.md).
 *
 * An item is one piece of work of a kind, unique by (kind, key), due at a time. The runner claims
 * due items (queue-repo.ts `claim`: one instance at a time holds an item, until its claim runs out,
 * renewed while it runs; a crashed instance's claims run out and another takes them), runs each
 * with its kind's `run`, and applies the outcome: done (the item goes, unless something was added
 * to it meanwhile), again at a time (a lane or a broadcast with more to do), or failed: retried
 * after `retryDelay(policy, attempts)`, or given up as the kind's policy says.
 *
 * Nothing polls. The runner sleeps until the next item falls due (one timer), or until new work
 * wakes it: `queueWake` publishes `queue.due` on the control channel, which reaches this instance
 * at once and the others over Redis. A look at the table once a minute covers a wake-up lost on
 * the way (and a crashed instance's work when nothing else wakes anyone).
 */
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import type { AppContext } from '../context.js'
import type { Db } from '../db/database.js'
import type { WorkQueueRow } from '../db/tables.js'
import * as repo from './queue-repo.js'
import type { JobRunRecord } from './repo.js'

export type QueueItem = WorkQueueRow

/**
 * How a kind retries: the first retry waits `firstMs`, each next one twice as long up to `maxMs`,
 * ± `jitter` (a share: 0.25 spreads a retry over 75–125 % of its wait). A kind gives up after
 * `maxAttempts` failed attempts, or when the next try would come more than `maxAgeMs` after the
 * item's work began (`since`); null: never on that count.
 */
export interface RetryPolicy {
  firstMs: number
  maxMs: number
  jitter: number
  maxAttempts: number | null
  maxAgeMs: number | null
}

/** The one back-off: the wait after `attempts` failed attempts (1 for the first), firstMs·2^(attempts−1) up to maxMs, ± jitter. */
export function retryDelay(policy: RetryPolicy, attempts: number, random: () => number = Math.random): number {
  const exponential = Math.min(policy.firstMs * 2 ** Math.min(Math.max(attempts, 1) - 1, 40), policy.maxMs)
  return Math.round(exponential * (1 - policy.jitter + random() * 2 * policy.jitter))
}

/** Whether a kind gives an item up after `attempts` failed attempts, its next try being at `retryAt`. */
export function givesUp(policy: RetryPolicy, attempts: number, since: number, retryAt: number): boolean {
  if (policy.maxAttempts !== null && attempts >= policy.maxAttempts) return true
  return policy.maxAgeMs !== null && retryAt - since > policy.maxAgeMs
}

/**
 * What became of a run: done; to run again at `again` (with `fresh`, as new work: attempts from
 * zero, `since` and `ref` anew); or failed (`detail` is handed back to the kind's hooks).
 */
export type Outcome =
  | { done: true }
  | { again: number; fresh?: { since: number; ref?: number | null } }
  | { failed: string; detail?: unknown }

export const DONE: Outcome = { done: true }

export interface FailureInfo {
  attempts: number
  error: string
  detail: unknown
}

export interface QueueKind {
  kind: string
  /** the job its runs are counted under (job_runs, /metrics, `npm run cli -- jobs`) */
  job: string
  /** what it does, in a line */
  summary: string
  policy: RetryPolicy
  /** items of this kind running at once on an instance, at most (slow receivers must not take every slot) */
  maxRunning?: number
  /** `signal` aborts when the runner stops: a long run should check it between steps */
  run(item: QueueItem, signal: AbortSignal): Promise<Outcome>
  /** a failed attempt is tried again at `retryAt` */
  retrying?(item: QueueItem, info: FailureInfo & { retryAt: number }): Promise<void>
  /** the item was given up after a failed attempt; what next (default: done) */
  gaveUp?(item: QueueItem, info: FailureInfo): Promise<Outcome>
}

/** Tells the runner (here at once, and every instance over Redis) that work falls due at `at`. Call it after the write committed. */
export function queueWake(ctx: AppContext, at: number) {
  ctx.control.publish('queue.due', { at })
}

/** Adds work (queue-repo.ts `put`) outside a transaction and wakes the runner for it. */
export async function enqueue(ctx: AppContext, item: repo.NewItem, onExisting: 'keep' | 'replace' = 'keep') {
  await repo.put(ctx.db, item, ctx.clock.now(), onExisting)
  queueWake(ctx, item.dueAt)
}

/** Adds work inside the caller's transaction: wake the runner (queueWake) once it committed. */
export const enqueueIn = (db: Db, item: repo.NewItem, now: number, onExisting: 'keep' | 'replace' = 'keep') =>
  repo.put(db, item, now, onExisting)

export const dequeue = (db: Db, kind: string, key: string) => repo.remove(db, kind, key)

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 500)

/** Runs one claimed item and writes what became of it; answers the error of a failed run, or null. */
async function runOne(ctx: AppContext, kind: QueueKind, item: QueueItem, instance: string, signal: AbortSignal): Promise<string | null> {
  let outcome: Outcome
  try {
    outcome = await kind.run(item, signal)
  } catch (err) {
    ctx.log.warn({ err, kind: item.kind, key: item.item_key }, 'queued work failed')
    outcome = { failed: errorText(err) }
  }
  await settle(ctx, kind, item, instance, outcome)
  return 'failed' in outcome ? outcome.failed : null
}

async function settle(ctx: AppContext, kind: QueueKind, item: QueueItem, instance: string, outcome: Outcome): Promise<void> {
  if ('done' in outcome) return repo.finish(ctx.db, item, instance)
  if ('again' in outcome) {
    const fresh = outcome.fresh
      ? {
          attempts: 0,
          since: outcome.fresh.since,
          last_error: null,
          ...(outcome.fresh.ref === undefined ? {} : { ref: outcome.fresh.ref }),
        }
      : {}
    return repo.letGo(ctx.db, item.id, instance, { due_at: outcome.again, ...fresh })
  }
  const attempts = item.attempts + 1
  const info: FailureInfo = { attempts, error: outcome.failed, detail: outcome.detail }
  const retryAt = ctx.clock.now() + retryDelay(kind.policy, attempts)
  if (givesUp(kind.policy, attempts, Number(item.since), retryAt)) {
    ctx.log.info({ kind: item.kind, key: item.item_key, attempts, error: outcome.failed }, 'queued work given up')
    const next = kind.gaveUp ? await kind.gaveUp(item, info) : DONE
    // a kind that goes on after giving up goes on with new work, never with another failure
    return settle(ctx, kind, item, instance, 'failed' in next ? DONE : next)
  }
  await kind.retrying?.(item, { ...info, retryAt })
  await repo.letGo(ctx.db, item.id, instance, { due_at: retryAt, attempts, last_error: outcome.failed })
}

/**
 * Runs every item of one kind that is due now, here, one after another, and returns when none is
 * left (what a retry puts off waits for its time). For tools and tests that drive a kind by hand.
 */
export async function drain(ctx: AppContext, kind: QueueKind, signal: AbortSignal): Promise<void> {
  const instance = `drain:${randomBytes(4).toString('hex')}`
  const seen = new Set<number>()
  while (!signal.aborted) {
    const now = ctx.clock.now()
    const items = await repo.claim(ctx.db, ctx.dialect, instance, now, now + 60_000, 16, [kind.kind])
    const fresh = items.filter((item) => !seen.has(item.id))
    for (const item of items) if (seen.has(item.id)) await repo.letGo(ctx.db, item.id, instance, {})
    if (fresh.length === 0) return
    for (const item of fresh) {
      seen.add(item.id)
      await runOne(ctx, kind, item, instance, signal)
    }
  }
}

export interface QueueOptions {
  instance?: string
  /** how long a claim lasts (renewed at a third while the item runs); a crashed instance's items wait this long */
  leaseMs?: number
  /** items run at once on this instance */
  concurrency?: number
  /** the longest the runner sleeps without looking at the table */
  lookEveryMs?: number
}

export class WorkQueue {
  readonly instance: string
  private readonly kinds = new Map<string, QueueKind>()
  private readonly running = new Map<number, QueueItem>()
  private readonly runningOf = new Map<string, number>()
  private readonly leaseMs: number
  private readonly concurrency: number
  private readonly lookEveryMs: number
  private readonly abort = new AbortController()
  private timer: NodeJS.Timeout | null = null
  private timerAt = Infinity
  private keeper: NodeJS.Timeout | null = null
  private pumping: Promise<void> | null = null
  private again = false
  private started = false
  private stopping: Promise<void> | null = null
  private readonly tasks = new Set<Promise<void>>()
  /** what the runs of each job did on this instance (job_runs, through the jobs runner's recorder) */
  private readonly records = new Map<string, { record: JobRunRecord; dirty: boolean }>()

  constructor(
    private readonly ctx: AppContext,
    options: QueueOptions = {},
  ) {
    this.instance = options.instance ?? `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`
    this.leaseMs = options.leaseMs ?? 30_000
    this.concurrency = options.concurrency ?? 32
    this.lookEveryMs = options.lookEveryMs ?? 60_000
  }

  define(kind: QueueKind) {
    if (this.kinds.has(kind.kind)) throw new Error(`queue kind ${kind.kind} is defined twice`)
    this.kinds.set(kind.kind, kind)
    if (!this.records.has(kind.job)) {
      const record: JobRunRecord = {
        name: kind.job,
        instance: this.instance,
        scope: 'cluster',
        every_ms: 0,
        runs: 0,
        failures: 0,
        last_started_at: null,
        last_finished_at: null,
        last_duration_ms: null,
        last_error: null,
        last_error_at: null,
      }
      this.records.set(kind.job, { record, dirty: true })
    }
  }

  /** The jobs the kinds are counted under, with what they do. */
  get jobs(): { name: string; summary: string }[] {
    const seen = new Map<string, string>()
    for (const kind of this.kinds.values()) seen.set(kind.job, seen.has(kind.job) ? `${seen.get(kind.job)}; ${kind.summary}` : kind.summary)
    return [...seen].map(([name, summary]) => ({ name, summary }))
  }

  /** runs and failures of each job on this instance (for /metrics) */
  figures(): { name: string; runs: number; failures: number }[] {
    return [...this.records.values()].map(({ record }) => ({ name: record.name, runs: record.runs, failures: record.failures }))
  }

  /** The records changed since the last call (the jobs runner writes them with its own). */
  changedRecords(): JobRunRecord[] {
    const changed = [...this.records.values()].filter((entry) => entry.dirty)
    for (const entry of changed) entry.dirty = false
    return changed.map((entry) => ({ ...entry.record }))
  }

  start() {
    if (this.started) return
    this.started = true
    this.pump()
  }

  /** Work falls due at `at`: the runner looks then, if that is sooner than it meant to. */
  wake(at: number) {
    if (!this.started || this.abort.signal.aborted) return
    if (this.pumping) {
      this.again = true
      return
    }
    if (at <= this.ctx.clock.now()) return this.pump()
    if (at < this.timerAt) this.sleepUntil(at)
  }

  /** Stops claiming, waits for the items running, lets this instance's claims go. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.abort.abort()
      if (this.timer) clearTimeout(this.timer)
      this.timer = null
      await this.pumping
      await Promise.all([...this.tasks])
      if (this.keeper) clearInterval(this.keeper)
      if (this.started)
        await repo.releaseAll(this.ctx.db, this.instance).catch((err) => this.ctx.log.warn({ err }, 'could not let the queue claims go'))
    })()
    return this.stopping
  }

  private sleepUntil(at: number) {
    if (this.timer) clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(
      () => {
        this.timer = null
        this.timerAt = Infinity
        this.pump()
      },
      Math.max(0, Math.min(at - this.ctx.clock.now(), 2 ** 31 - 1)),
    )
    this.timer.unref()
  }

  private pump() {
    if (this.abort.signal.aborted) return
    if (this.pumping) {
      this.again = true
      return
    }
    this.again = false
    this.pumping = this.look().finally(() => {
      this.pumping = null
      if (this.again) this.pump()
    })
  }

  /** Claims what is due (as many as may run) and starts it; then sleeps until the next due time. */
  private async look() {
    const kinds = [...this.kinds.keys()]
    if (kinds.length === 0) return
    // the kinds with room for another item (a full one is looked at again when one of its items ends)
    const openKinds = () => [...this.kinds.values()].filter((kind) => (this.runningOf.get(kind.kind) ?? 0) < (kind.maxRunning ?? Infinity))
    try {
      for (;;) {
        if (this.abort.signal.aborted) return
        // full (in all, or for a kind): an item that ends looks again
        const open = openKinds()
        const free = Math.min(
          this.concurrency - this.running.size,
          ...open.map((kind) => (kind.maxRunning ?? Infinity) - (this.runningOf.get(kind.kind) ?? 0)),
        )
        if (free <= 0 || open.length === 0) return
        const now = this.ctx.clock.now()
        const items = await repo.claim(
          this.ctx.db,
          this.ctx.dialect,
          this.instance,
          now,
          now + this.leaseMs,
          free,
          open.map((kind) => kind.kind),
        )
        for (const item of items) this.launch(item)
        if (items.length < free) break
      }
      const open = openKinds().map((kind) => kind.kind)
      if (open.length === 0) return
      const next = await repo.nextDue(this.ctx.db, this.instance, open)
      if (this.abort.signal.aborted) return
      this.sleepUntil(Math.min(next ?? Infinity, this.ctx.clock.now() + this.lookEveryMs))
    } catch (err) {
      // the database is away: look again in a while
      this.ctx.log.warn({ err }, 'the work queue could not be read')
      if (!this.abort.signal.aborted) this.sleepUntil(this.ctx.clock.now() + 5000)
    }
  }

  private launch(item: QueueItem) {
    const kind = this.kinds.get(item.kind)!
    const entry = this.records.get(kind.job)!
    const { record } = entry
    const started = this.ctx.clock.now()
    record.runs++
    record.last_started_at = started
    entry.dirty = true
    this.running.set(item.id, item)
    this.runningOf.set(item.kind, (this.runningOf.get(item.kind) ?? 0) + 1)
    this.keep()
    const failed = (error: string) => {
      record.failures++
      record.last_error = error
      record.last_error_at = this.ctx.clock.now()
    }
    const task = runOne(this.ctx, kind, item, this.instance, this.abort.signal)
      .then((error) => {
        if (error !== null) failed(error)
      })
      .catch((err) => {
        failed(errorText(err))
        // the outcome could not be written: the claim runs out and the item runs again
        this.ctx.log.warn({ err, kind: item.kind, key: item.item_key }, 'could not record what became of queued work')
      })
      .finally(() => {
        record.last_finished_at = this.ctx.clock.now()
        record.last_duration_ms = record.last_finished_at - started
        entry.dirty = true
        this.running.delete(item.id)
        this.runningOf.set(item.kind, (this.runningOf.get(item.kind) ?? 1) - 1)
        this.tasks.delete(task)
        if (this.running.size === 0 && this.keeper) {
          clearInterval(this.keeper)
          this.keeper = null
        }
        this.pump()
      })
    this.tasks.add(task)
  }

  /** While items run, their claims are renewed every third of a lease. */
  private keep() {
    if (this.keeper) return
    this.keeper = setInterval(() => {
      const until = this.ctx.clock.now() + this.leaseMs
      repo
        .extend(this.ctx.db, this.instance, [...this.running.keys()], until)
        .catch((err) => this.ctx.log.warn({ err }, 'could not renew queue claims'))
    }, this.leaseMs / 3)
    this.keeper.unref()
  }
}
