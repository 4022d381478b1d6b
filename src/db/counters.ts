/**
 * The counters the statistics read instead of scanning tables: platform totals (users, channels,
 * stored file bytes) and per-day counts (active users). Each is moved by the write that changes
 * what it counts, in that write's transaction; the admin-area migration seeded them from the data.
 */
import { sql } from 'kysely'
import type { Db } from './database.js'

export type PlatformCounter = 'users' | 'channels' | 'files_bytes'
export type DailyMetric = 'active_users'

const DAY_MS = 86_400_000

/** The UTC day of an instant, YYYY-MM-DD. */
export const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10)
/** Where the UTC day of an instant began. */
export const dayStart = (at: number) => at - (at % DAY_MS)

export async function bump(db: Db, name: PlatformCounter, delta: number) {
  if (delta === 0) return
  await db
    .insertInto('platform_counters')
    .values({ name, value: delta })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: sql`platform_counters.value + ${delta}` }))
    .execute()
}

export async function bumpDaily(db: Db, day: string, metric: DailyMetric, delta = 1) {
  await db
    .insertInto('daily_counters')
    .values({ day, metric, value: delta })
    .onConflict((oc) => oc.columns(['day', 'metric']).doUpdateSet({ value: sql`daily_counters.value + ${delta}` }))
    .execute()
}

export async function platformCounters(db: Db): Promise<Record<PlatformCounter, number>> {
  const rows = await db.selectFrom('platform_counters').select(['name', 'value']).execute()
  const found = new Map(rows.map((r) => [r.name, Number(r.value)]))
  return { users: found.get('users') ?? 0, channels: found.get('channels') ?? 0, files_bytes: found.get('files_bytes') ?? 0 }
}

/** A metric's value per day over [fromDay, toDay] (days without a row are absent). */
export async function dailyValues(db: Db, metric: DailyMetric, fromDay: string, toDay: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('daily_counters')
    .select(['day', 'value'])
    .where('metric', '=', metric)
    .where('day', '>=', fromDay)
    .where('day', '<=', toDay)
    .execute()
  return new Map(rows.map((r) => [r.day, Number(r.value)]))
}
