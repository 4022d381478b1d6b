import type { Db } from '../../db/database.js'
import { fromJson } from '../../db/json.js'

export async function read(db: Db, userId: number): Promise<Record<string, unknown>> {
  const row = await db.selectFrom('user_settings').select('settings').where('user_id', '=', userId).executeTakeFirst()
  return fromJson<Record<string, unknown>>(row?.settings) ?? {}
}

/**
 * Reads the user's stored settings for a change: makes sure the row exists and, in PostgreSQL,
 * holds its lock (the no-op upsert) so two changes at once apply one after the other.
 */
export async function readForUpdate(db: Db, userId: number, now: number): Promise<Record<string, unknown>> {
  await db
    .insertInto('user_settings')
    .values({ user_id: userId, settings: '{}', updated_at: now })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ updated_at: now }))
    .execute()
  return read(db, userId)
}

export async function write(db: Db, userId: number, settings: Record<string, unknown>, now: number) {
  await db
    .updateTable('user_settings')
    .set({ settings: JSON.stringify(settings), updated_at: now })
    .where('user_id', '=', userId)
    .execute()
}
