/** The statistics' reads that no counter answers. */
import type { Db } from '../../db/database.js'

export async function messageIdRange(db: Db): Promise<{ min: number; max: number } | null> {
  const row = await db
    .selectFrom('messages')
    .select((eb) => [eb.fn.min<number>('id').as('min'), eb.fn.max<number>('id').as('max')])
    .executeTakeFirst()
  if (row?.min === null || row?.min === undefined) return null
  return { min: Number(row.min), max: Number(row.max) }
}

export async function firstAtOrAfter(db: Db, id: number) {
  return db.selectFrom('messages').select(['id', 'created_at']).where('id', '>=', id).orderBy('id').limit(1).executeTakeFirst()
}

/** How many reports wait for a moderator. */
export const pendingReports = (db: Db) =>
  db
    .selectFrom('reports')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'pending')
    .executeTakeFirst()

/** How many broadcasts are queued or going out. */
export const unfinishedBroadcasts = (db: Db) =>
  db
    .selectFrom('broadcasts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst()

/** How many messages wait to be sent at their time. */
export const scheduledMessages = (db: Db) =>
  db
    .selectFrom('scheduled_messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst()
