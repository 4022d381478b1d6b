/**
 * The jobs runner: one scheduler for the periodic work of an instance (docs/architecture.md).
 *
 * A job runs every `everyMs`, never overlapping itself; a throw is logged and counted, and the job
 * runs again at its next time. A `cluster` job runs once per period across all instances, never
 * on two at a time: each run is claimed with one conditional UPDATE of the job's row in
 * `job_leases` (so this works on SQLite and PostgreSQL alike) that succeeds only if nobody ran it
 * this period and nobody else holds its lease; the holder then runs it without asking again while
 * more than half its lease is left, and the lease is kept while a run lasts. An instance
 * that stops gives its leases up; one that crashes loses them when they expire (`leaseMs`). An
 * `instance` job runs on every instance, for what each holds itself (its upload directory, its
 * sockets' presence).
 * What each job did is written to `job_runs` every few seconds (`npm run cli -- jobs`).
 */
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import type { AppContext } from '../context.js'
import * as repo from './repo.js'

export type JobScope = 'cluster' | 'instance'

export interface Job {
  name: string
  /** what it does, in a line (the CLI's listing) */
  summary: string
  scope: JobScope
  everyMs: number
  /**
   * also run as soon as the runner starts (a cluster job: unless another instance holds it), so
   * what fell due while the service was down is done at once rather than a period later
   */
  runAtStart?: boolean
  /** `signal` aborts when the runner stops: a long job should check it between steps */
  run(signal: AbortSignal): Promise<unknown>
  /**
   * A job that runs when its work falls due rather than every period: after each run it says when
   * it is next due (null: nothing known), and runs then, or `everyMs` later at the latest (a look
   * for what nobody announced). `wake(name, at)` brings it forward for work that appears meanwhile.
   */
  nextDueAt?(now: number): Promise<number | null>
}

export interface RunnerOptions {
  /** how long a cluster lease lasts (renewed at half); a crashed holder's jobs wait this long */
  leaseMs?: number
  /** how often records are written to job_runs */
  recordEveryMs?: number
  /** this instance's name in leases and records */
  instance?: string
}

/** a period counts as done a little early: a timer that fires a hair before its time still runs */
const PERIOD_TOLERANCE = 0.9
/** records of instances silent this long are forgotten */
const FORGET_AFTER_MS = 7 * 24 * 3600_000

interface State {
  job: Job
  timer: NodeJS.Timeout | null
  /** when the timer fires (clock time) */
  timerAt?: number
  /** a wake that came while the job ran: it runs again by then */
  wokenAt?: number
  running: Promise<void> | null
  /** until when this instance holds the job's lease, as far as it knows (0: it does not) */
  leaseUntil: number
  record: repo.JobRunRecord
  dirty: boolean
}

export class JobRunner {
  readonly instance: string
  private readonly states = new Map<string, State>()
  private readonly leaseMs: number
  private readonly recordEveryMs: number
  private readonly abort = new AbortController()
  private recorder: NodeJS.Timeout | null = null
  private started = false
  private stopping: Promise<void> | null = null
  /** more records written with this runner's own (the work queue's jobs) */
  private readonly moreRecords: (() => repo.JobRunRecord[])[] = []

  constructor(
    private readonly ctx: AppContext,
    options: RunnerOptions = {},
  ) {
    this.instance = options.instance ?? `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`
    this.leaseMs = options.leaseMs ?? 15_000
    this.recordEveryMs = options.recordEveryMs ?? 5000
  }

  define(job: Job) {
    if (this.states.has(job.name)) throw new Error(`job ${job.name} is defined twice`)
    if (this.started) throw new Error(`job ${job.name} defined after the runner started`)
    const record: repo.JobRunRecord = {
      name: job.name,
      instance: this.instance,
      scope: job.scope,
      every_ms: job.everyMs,
      runs: 0,
      failures: 0,
      last_started_at: null,
      last_finished_at: null,
      last_duration_ms: null,
      last_error: null,
      last_error_at: null,
    }
    this.states.set(job.name, { job, timer: null, running: null, leaseUntil: 0, record, dirty: true })
  }

  /** Writes the records `source` answers (those changed since it was last asked) with the runner's own. */
  recordAlso(source: () => repo.JobRunRecord[]) {
    this.moreRecords.push(source)
  }

  get jobs(): Job[] {
    return [...this.states.values()].map((state) => state.job)
  }

  /** runs and failures of each job on this instance (for /metrics) */
  figures(): { name: string; runs: number; failures: number }[] {
    return [...this.states.values()].map(({ record }) => ({ name: record.name, runs: record.runs, failures: record.failures }))
  }

  async start() {
    if (this.started) return
    this.started = true
    for (const state of this.states.values()) {
      if (state.job.scope === 'cluster') await repo.ensureLease(this.ctx.db, state.job.name)
      this.schedule(state, state.job.runAtStart ? 0 : state.job.everyMs, state.job.runAtStart === true)
    }
    this.recorder = setInterval(() => void this.saveRecords(), this.recordEveryMs)
    this.recorder.unref()
  }

  /** Stops scheduling, waits for running jobs, gives the leases up and writes the records. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.abort.abort()
      if (this.recorder) clearInterval(this.recorder)
      for (const state of this.states.values()) if (state.timer) clearTimeout(state.timer)
      await Promise.all([...this.states.values()].map((state) => state.running))
      if (!this.started) return
      // a release names this instance as the holder: a lease held by another is left alone
      for (const state of this.states.values()) {
        if (state.job.scope === 'cluster') {
          await repo
            .releaseLease(this.ctx.db, state.job.name, this.instance)
            .catch((err) => this.ctx.log.warn({ err, job: state.job.name }, 'could not release a job lease'))
        }
      }
      await this.saveRecords()
    })()
    return this.stopping
  }

  /**
   * A due-driven job (nextDueAt) runs at `at` if that is sooner than it meant to (work appeared:
   * a call started ringing, a message to index). A job running now looks again when it ends.
   */
  wake(name: string, at: number) {
    const state = this.states.get(name)
    if (!state?.job.nextDueAt || !this.started || this.abort.signal.aborted) return
    if (state.running) {
      state.wokenAt = Math.min(state.wokenAt ?? Infinity, at)
      return
    }
    if (state.timerAt !== undefined && state.timerAt <= at) return
    if (state.timer) clearTimeout(state.timer)
    this.schedule(state, Math.max(0, at - this.ctx.clock.now()))
  }

  private schedule(state: State, delayMs: number, atStart = false) {
    if (this.abort.signal.aborted) return
    state.timerAt = this.ctx.clock.now() + delayMs
    state.timer = setTimeout(
      () => {
        state.timer = null
        state.timerAt = undefined
        const startedAt = Date.now()
        state.running = this.tick(state, atStart).finally(async () => {
          const woken = state.wokenAt
          state.wokenAt = undefined
          let delay = Math.max(0, state.job.everyMs - (Date.now() - startedAt))
          if (state.job.nextDueAt) {
            const now = this.ctx.clock.now()
            const next = await state.job.nextDueAt(now).catch((err) => {
              this.ctx.log.warn({ err, job: state.job.name }, 'could not tell when a job is next due')
              return null
            })
            delay = Math.max(0, Math.min(delay, (next ?? Infinity) - now, (woken ?? Infinity) - now))
          }
          state.running = null
          this.schedule(state, delay)
        })
      },
      Math.min(delayMs, 2 ** 31 - 1),
    )
    state.timer.unref()
  }

  private async tick(state: State, atStart: boolean) {
    if (this.abort.signal.aborted) return
    try {
      if (state.job.scope === 'cluster' && !(await this.claim(state, atStart))) return
    } catch (err) {
      // the database is away: no lease, no run; the next tick asks again
      this.ctx.log.warn({ err, job: state.job.name }, 'could not take a job lease')
      return
    }
    if (this.abort.signal.aborted) return
    const { record } = state
    const started = this.ctx.clock.now()
    record.last_started_at = started
    record.runs++
    // a long run keeps its lease, so no other instance starts the next period's meanwhile
    const keeper = state.job.scope === 'cluster' ? setInterval(() => void this.extend(state), this.leaseMs / 3) : null
    try {
      await state.job.run(this.abort.signal)
    } catch (err) {
      record.failures++
      record.last_error = err instanceof Error ? err.message : String(err)
      record.last_error_at = this.ctx.clock.now()
      this.ctx.log.warn({ err, job: state.job.name }, 'job failed; it runs again at its next time')
    } finally {
      if (keeper) clearInterval(keeper)
      record.last_finished_at = this.ctx.clock.now()
      record.last_duration_ms = record.last_finished_at - started
      state.dirty = true
    }
  }

  /**
   * Whether this instance runs this period's run. While it holds the lease with more than half of
   * it left, nobody else can claim the job, so it runs without asking; otherwise it claims the run
   * (see claimRun), which also renews the lease. So a lone instance writes to job_leases once per
   * half lease, not once per run. The run at start claims whenever the lease is free, however
   * recently the job ran.
   */
  private async claim(state: State, atStart: boolean): Promise<boolean> {
    const now = this.ctx.clock.now()
    if (state.leaseUntil - now > this.leaseMs / 2) return true
    // a due-driven job runs when due, however recently it ran
    const notSince = atStart || state.job.nextDueAt ? now : now - Math.floor(state.job.everyMs * PERIOD_TOLERANCE)
    const until = now + this.leaseMs
    const claimed = await repo.claimRun(this.ctx.db, state.job.name, this.instance, now, notSince, until)
    state.leaseUntil = claimed ? until : 0
    return claimed
  }

  private async extend(state: State) {
    const until = this.ctx.clock.now() + this.leaseMs
    await repo
      .extendLease(this.ctx.db, state.job.name, this.instance, until)
      .then((held) => (state.leaseUntil = held ? until : 0))
      .catch((err) => this.ctx.log.warn({ err, job: state.job.name }, 'could not extend a job lease'))
  }

  private async saveRecords() {
    const now = this.ctx.clock.now()
    try {
      for (const state of this.states.values()) {
        if (!state.dirty) continue
        state.dirty = false
        await repo.saveRun(this.ctx.db, state.record, now)
      }
      for (const source of this.moreRecords) for (const record of source()) await repo.saveRun(this.ctx.db, record, now)
      await repo.forgetSilent(this.ctx.db, now - FORGET_AFTER_MS)
    } catch (err) {
      this.ctx.log.warn({ err }, 'could not record job runs')
    }
  }
}
