/** `npm run cli -- jobs`: every periodic job, and what it did when on each instance. */
import type { AppContext } from '../context.js'
import { migrateToLatest } from '../db/migrate.js'
import { createJobs, createQueue } from '../jobs/index.js'
import * as repo from '../jobs/repo.js'
import { iso } from '../lib/time.js'
import { printTable } from './table.js'

const every = (ms: number) =>
  ms === 0 ? 'when due' : ms % 60_000 === 0 ? `${ms / 60_000} min` : ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
const at = (ms: number | null) => (ms === null ? '-' : iso(ms))

export async function jobsList(ctx: AppContext): Promise<void> {
  await migrateToLatest(ctx.db)
  const [runs, leases] = await Promise.all([repo.listRuns(ctx.db), repo.listLeases(ctx.db)])
  const now = ctx.clock.now()
  const holder = new Map(leases.filter((l) => l.holder !== null && l.expires_at > now).map((l) => [l.name, l.holder]))
  const table = [['job', 'scope', 'every', 'instance', 'runs', 'failed', 'last started', 'last finished', 'took', 'last error']]
  // the work queue's jobs run when their work falls due, on whichever instance claims it
  const queued = createQueue(ctx).jobs.map((job) => ({ name: job.name, scope: 'cluster', everyMs: 0 }))
  for (const job of [...createJobs(ctx).jobs, ...queued]) {
    const mine = runs.filter((run) => run.name === job.name)
    if (mine.length === 0) table.push([job.name, job.scope, every(job.everyMs), '(never ran)', '0', '0', '-', '-', '-', ''])
    for (const run of mine) {
      const instance = holder.get(job.name) === run.instance ? `${run.instance} (holds the lease)` : run.instance
      const error = run.last_error === null ? '' : `${at(run.last_error_at)} ${run.last_error}`
      const took = run.last_duration_ms === null ? '-' : `${run.last_duration_ms} ms`
      table.push([
        job.name,
        job.scope,
        every(job.everyMs),
        instance,
        String(run.runs),
        String(run.failures),
        at(run.last_started_at),
        at(run.last_finished_at),
        took,
        error,
      ])
    }
  }
  printTable(table)
  process.stdout.write('Records are written every few seconds by each running instance; an instance silent for 7 days is forgotten.\n')
}
