import type { Kysely } from 'kysely'
import { timestamp } from './columns.js'

/**
 * The jobs runner (src/jobs/): per cluster-wide job, who holds it and when it last ran, so one
 * instance runs it once per period; and what each job did on each instance (`npm run cli -- jobs`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('job_leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text')
    .addColumn('expires_at', timestamp, (c) => c.notNull())
    .addColumn('last_run_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema
    .createTable('job_runs')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('instance', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('every_ms', 'bigint', (c) => c.notNull())
    .addColumn('runs', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'bigint', (c) => c.notNull())
    .addColumn('last_started_at', timestamp)
    .addColumn('last_finished_at', timestamp)
    .addColumn('last_duration_ms', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', timestamp)
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('job_runs_pk', ['name', 'instance'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('job_runs').execute()
  await db.schema.dropTable('job_leases').execute()
}
