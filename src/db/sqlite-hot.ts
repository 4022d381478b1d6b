/**
 * The SQLite hot path: prepared statements run synchronously on the raw better-sqlite3 handle,
 * for the few requests where Kysely's per-query building and promise hops dominate (send).
 * Kysely and these statements share one connection, so raw work runs only while holding Kysely's
 * connection (`batched`): never inside someone else's open transaction. Reads that need no
 * transaction use the query-only second connection instead (DatabaseHandle.reader, read by the
 * auth cache).
 */
import type SQLite from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database } from './tables.js'

const STATEMENT_CACHE_SIZE = 500
const caches = new WeakMap<SQLite.Database, Map<string, SQLite.Statement>>()

/** A prepared statement, kept by SQL text (the oldest are dropped past STATEMENT_CACHE_SIZE). */
export function statement(sqlite: SQLite.Database, sql: string): SQLite.Statement {
  let cache = caches.get(sqlite)
  if (!cache) caches.set(sqlite, (cache = new Map()))
  let prepared = cache.get(sql)
  if (!prepared) {
    prepared = sqlite.prepare(sql)
    if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!)
    cache.set(sql, prepared)
  }
  return prepared
}

/** Kysely and the raw handle of the same SQLite connection (the AppContext has both). */
export interface HotDatabase {
  db: Kysely<Database>
  sqlite: SQLite.Database | null
}

/**
 * A pass of a batch that runs every job straight through one transaction (see `batched`). A job
 * may leave state there for the later jobs of the pass and put off a write to the pass's end:
 * several sends to one chat then write the chat's row once. A pass that isolates its jobs (each in
 * a savepoint, after a job threw) has none: a job there writes everything at once, since what it
 * left behind would outlive its own rollback.
 */
export interface SharedPass {
  /** state the pass's jobs leave for one another; empty at the start of every pass */
  readonly state: Map<unknown, unknown>
  /** work to run once, after the pass's last job and before its commit */
  atEnd(work: () => void): void
}

interface Job {
  work: (sqlite: SQLite.Database, pass: SharedPass | null) => unknown
  resolve(value: unknown): void
  reject(error: unknown): void
}
const queues = new WeakMap<SQLite.Database, Job[]>()

/**
 * Group commit: writes that arrive in the same event-loop turn run in one transaction. A commit
 * writes every page it dirtied to the WAL, so sharing one between concurrent sends cuts the I/O
 * per message several times over. Every job's promise settles only after the shared commit.
 *
 * A job that throws must not take the others down with it. The batch first runs every job
 * straight through (a savepoint per job costs as much as a small insert); if one throws, the whole
 * transaction rolls back and the batch runs again with each job in its own savepoint, so the
 * failing job is rolled back alone and rejects alone. `work` may therefore run twice: it must act
 * only on the database and the pass it is given, and on nothing else. The first pass is shared
 * (SharedPass); the isolated one gives `null`.
 */
export function batched<T>(ctx: HotDatabase, work: (sqlite: SQLite.Database, pass: SharedPass | null) => T): Promise<T> {
  const sqlite = ctx.sqlite!
  let queue = queues.get(sqlite)
  if (!queue) queues.set(sqlite, (queue = []))
  const promise = new Promise<T>((resolve, reject) => {
    queue.push({ work, resolve: resolve as (value: unknown) => void, reject })
  })
  if (queue.length === 1) setImmediate(() => void runBatch(ctx, sqlite))
  return promise
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

/** Thrown out of the optimistic pass to roll it back when a job failed. */
const JOB_FAILED = Symbol('job failed')

async function runBatch(ctx: HotDatabase, sqlite: SQLite.Database) {
  const queue = queues.get(sqlite)!
  let taken = false
  await ctx.db
    .connection()
    .execute(async () => {
      taken = true
      const jobs = queue.splice(0)
      let outcomes: Outcome[]
      try {
        outcomes = straight(sqlite, jobs) ?? isolated(sqlite, jobs)
      } catch (error) {
        // the commit itself failed: nothing of this batch was written
        for (const job of jobs) job.reject(error)
        return
      }
      jobs.forEach((job, i) => {
        const outcome = outcomes[i]
        if (outcome.ok) job.resolve(outcome.value)
        else job.reject(outcome.error)
      })
    })
    .catch((error: unknown) => {
      // no connection (closed by a shutdown before a timer's write ran): the jobs fail, not the process
      if (!taken) for (const job of queue.splice(0)) job.reject(error)
    })
}

/** Every job in one transaction without savepoints; null (and nothing written) if one threw. */
function straight(sqlite: SQLite.Database, jobs: Job[]): Outcome[] | null {
  const outcomes: Outcome[] = []
  const ends: (() => void)[] = []
  const pass: SharedPass = { state: new Map(), atEnd: (work) => void ends.push(work) }
  try {
    sqlite.transaction(() => {
      for (const job of jobs) {
        try {
          outcomes.push({ ok: true, value: job.work(sqlite, pass) })
        } catch {
          throw JOB_FAILED
        }
      }
      try {
        for (const work of ends) work()
      } catch {
        // as if a job had thrown: the isolated pass writes everything at once, job by job
        throw JOB_FAILED
      }
    })()
  } catch (error) {
    if (error === JOB_FAILED) return null
    throw error
  }
  return outcomes
}

/** Every job in its own savepoint of one transaction: a job that throws is rolled back alone. */
function isolated(sqlite: SQLite.Database, jobs: Job[]): Outcome[] {
  const outcomes: Outcome[] = []
  sqlite.transaction(() => {
    for (const job of jobs) {
      try {
        outcomes.push({ ok: true, value: sqlite.transaction(job.work)(sqlite, null) })
      } catch (error) {
        outcomes.push({ ok: false, error })
      }
    }
  })()
  return outcomes
}
