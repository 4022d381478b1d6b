/** The SQL of the jobs runner: leases of cluster-wide jobs, and what each job did on each instance. */
import type { Db } from '../db/database.js'
import type { JobRunRow } from '../db/tables.js'

/** The lease row of a job, so that taking it is a plain conditional UPDATE. */
export async function ensureLease(db: Db, name: string) {
  await db
    .insertInto('job_leases')
    .values({ name, holder: null, expires_at: 0, last_run_at: 0 })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
}

/**
 * Claims this period's run for `holder`: only if nobody ran the job since `notSince` and the lease
 * is free (expired, released, or already this holder's); the lease then runs until `until`. One
 * UPDATE, so of several instances asking at once exactly one gets it.
 */
export async function claimRun(db: Db, name: string, holder: string, now: number, notSince: number, until: number): Promise<boolean> {
  const result = await db
    .updateTable('job_leases')
    .set({ holder, expires_at: until, last_run_at: now })
    .where('name', '=', name)
    .where('last_run_at', '<=', notSince)
    .where((eb) => eb.or([eb('holder', '=', holder), eb('holder', 'is', null), eb('expires_at', '<=', now)]))
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Keeps the lease while a long run goes on; false if it is no longer this holder's. */
export async function extendLease(db: Db, name: string, holder: string, until: number): Promise<boolean> {
  const result = await db
    .updateTable('job_leases')
    .set({ expires_at: until })
    .where('name', '=', name)
    .where('holder', '=', holder)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Gives the lease up (a clean stop): another instance may take it at once. */
export async function releaseLease(db: Db, name: string, holder: string) {
  await db.updateTable('job_leases').set({ holder: null, expires_at: 0 }).where('name', '=', name).where('holder', '=', holder).execute()
}

export type JobRunRecord = Omit<JobRunRow, 'updated_at'>

/** Writes a job's record on this instance (one row per job and instance). */
export async function saveRun(db: Db, record: JobRunRecord, now: number) {
  const { name, instance, ...rest } = record
  await db
    .insertInto('job_runs')
    .values({ ...record, updated_at: now })
    .onConflict((oc) => oc.columns(['name', 'instance']).doUpdateSet({ ...rest, updated_at: now }))
    .execute()
}

/** Records of instances silent since `before` (stopped or gone) go. */
export async function forgetSilent(db: Db, before: number) {
  await db.deleteFrom('job_runs').where('updated_at', '<', before).execute()
}

/** Every job's record on every instance, by job, most recent first. */
export function listRuns(db: Db) {
  return db.selectFrom('job_runs').selectAll().orderBy('name').orderBy('last_started_at', 'desc').execute()
}

/** Who holds each lease now. */
export function listLeases(db: Db) {
  return db.selectFrom('job_leases').selectAll().orderBy('name').execute()
}
