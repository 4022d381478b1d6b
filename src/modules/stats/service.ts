/**
 * Statistics and the server's status. Everything here is read from counters or indexes, never by
 * scanning a table: users, channels and stored bytes are platform counters; active users per day
 * are counted by the first touch of each day; messages per day are told apart by the first message
 * id of each day (ids grow with time), found by a binary search on the primary key; premium users
 * are a range on users_premium_expires.
 */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import { ping } from '../../db/dialect.js'
import type { UserRow } from '../../db/tables.js'
import * as jobs from '../../jobs/repo.js'
import { iso, isoOrNull } from '../../lib/time.js'
import { VERSION } from '../../version.js'
import { assertPlatformAdmin as assertAdmin } from '../../policies/accounts.js'
import * as users from '../users/index.js'
import { dailyValues, dayOf, dayStart, platformCounters } from '../../db/counters.js'
import * as repo from './repo.js'

const DAY_MS = 86_400_000
/** the admin stats' window */
export const STATS_DAYS = 30

/** boundaries of days already over do not move: kept per database */
const boundaryCache = new WeakMap<Db, Map<number, number>>()

/**
 * The id of the first message created at or after `at` (max id + 1 when there is none): a binary
 * search over the id space, each step one primary-key probe.
 */
async function firstIdSince(db: Db, range: { min: number; max: number }, at: number): Promise<number> {
  let lo = range.min
  let hi = range.max + 1
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2)
    const row = await repo.firstAtOrAfter(db, mid)
    if (row && Number(row.created_at) >= at) hi = mid
    else lo = mid + 1
  }
  if (lo > range.max) return range.max + 1
  return Number((await repo.firstAtOrAfter(db, lo))?.id ?? range.max + 1)
}

/** Messages sent per UTC day over the last `days` days, oldest first (today counts so far). */
export async function messagesPerDay(db: Db, now: number, days: number): Promise<{ day: string; count: number }[]> {
  const today = dayStart(now)
  const starts = Array.from({ length: days }, (_, i) => today - (days - 1 - i) * DAY_MS)
  const range = await repo.messageIdRange(db)
  if (!range) return starts.map((start) => ({ day: dayOf(start), count: 0 }))
  let cache = boundaryCache.get(db)
  if (!cache) boundaryCache.set(db, (cache = new Map()))
  const boundaries: number[] = []
  for (const start of [...starts, today + DAY_MS]) {
    const cached = start <= today ? cache.get(start) : undefined
    if (cached !== undefined) {
      boundaries.push(cached)
      continue
    }
    const boundary = start > now ? range.max + 1 : await firstIdSince(db, range, start)
    // a day's start is settled once the day before it is over and a later message exists
    if (start <= today && boundary <= range.max) cache.set(start, boundary)
    boundaries.push(boundary)
  }
  return starts.map((start, i) => ({ day: dayOf(start), count: Math.max(0, boundaries[i + 1] - boundaries[i]) }))
}

async function activeUsersPerDay(db: Db, now: number, days: number) {
  const today = dayStart(now)
  const from = dayOf(today - (days - 1) * DAY_MS)
  const values = await dailyValues(db, 'active_users', from, dayOf(today))
  return Array.from({ length: days }, (_, i) => {
    const day = dayOf(today - (days - 1 - i) * DAY_MS)
    return { day, count: values.get(day) ?? 0 }
  })
}

/** The public figures: users, messages and channels. */
export async function publicStats(ctx: AppContext) {
  const [counters, range] = await Promise.all([platformCounters(ctx.db), repo.messageIdRange(ctx.db)])
  return { users: counters.users, messages: range ? range.max : 0, channels: counters.channels }
}

/** The admin area's figures: totals and 30 days of messages and active users. */
export async function adminStats(ctx: AppContext, admin: UserRow) {
  assertAdmin(admin)
  const now = ctx.clock.now()
  const [counters, premium, messages, active, range] = await Promise.all([
    platformCounters(ctx.db),
    users.countPremium(ctx.db, now),
    messagesPerDay(ctx.db, now, STATS_DAYS),
    activeUsersPerDay(ctx.db, now, STATS_DAYS),
    repo.messageIdRange(ctx.db),
  ])
  return {
    users: counters.users,
    premium_users: premium,
    channels: counters.channels,
    messages: range ? range.max : 0,
    files_bytes: counters.files_bytes,
    messages_per_day: messages,
    active_users_per_day: active,
  }
}

const processStartedAt = Date.now() - Math.round(process.uptime() * 1000)

async function timed(check: () => Promise<unknown>): Promise<{ status: 'ok' | 'error'; latency_ms: number | null; error: string | null }> {
  const began = performance.now()
  try {
    await check()
    return { status: 'ok', latency_ms: Math.round((performance.now() - began) * 100) / 100, error: null }
  } catch (err) {
    return { status: 'error', latency_ms: null, error: err instanceof Error ? err.message : String(err) }
  }
}

async function count(query: Promise<{ n: number | string | bigint } | undefined>) {
  return Number((await query)?.n ?? 0)
}

/**
 * The read-only server status (the admin panel's status page): version, uptime, database and Redis
 * health, the job runner's jobs and the queues' lengths. It runs nothing and changes nothing.
 */
export async function serverStatus(ctx: AppContext, admin: UserRow) {
  assertAdmin(admin)
  const db = ctx.db
  const [database, redis, runs, leases, pendingReports, unfinishedBroadcasts, scheduled] = await Promise.all([
    timed(() => ping(db)),
    ctx.redis ? timed(() => ctx.redis!.ping()) : Promise.resolve(null),
    jobs.listRuns(db),
    jobs.listLeases(db),
    count(repo.pendingReports(db)),
    count(repo.unfinishedBroadcasts(db)),
    count(repo.scheduledMessages(db)),
  ])
  const holders = new Map(leases.map((lease) => [lease.name, lease]))
  const now = ctx.clock.now()
  return {
    version: VERSION,
    node: process.version,
    started_at: iso(processStartedAt),
    uptime_seconds: Math.round(process.uptime()),
    dialect: ctx.config.dialect,
    database,
    redis: redis ?? { status: 'off' as const, latency_ms: null, error: null },
    memory_mb: Math.round(process.memoryUsage().rss / 1048576),
    jobs: runs.map((run) => {
      const lease = holders.get(run.name)
      return {
        name: run.name,
        instance: run.instance,
        scope: run.scope,
        every_ms: Number(run.every_ms),
        runs: Number(run.runs),
        failures: Number(run.failures),
        last_started_at: isoOrNull(run.last_started_at === null ? null : Number(run.last_started_at)),
        last_duration_ms: run.last_duration_ms === null ? null : Number(run.last_duration_ms),
        last_error: run.last_error,
        lease_holder: lease && lease.holder !== null && Number(lease.expires_at) > now ? lease.holder : null,
      }
    }),
    queues: { pending_reports: pendingReports, unfinished_broadcasts: unfinishedBroadcasts, scheduled_messages: scheduled },
  }
}
