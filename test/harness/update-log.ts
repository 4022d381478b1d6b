/**
 * Every row of the per-user update log, wherever it is stored: on SQLite the newest rows are in
 * `recent_updates` until they move into `updates` (realtime/updates.ts). Ordered by user and seq.
 */
import type { Db } from '../../src/db/database.js'
import type { Dialect } from '../../src/config.js'

export async function updateLog(db: Db, dialect: Dialect) {
  const rows = (table: 'updates' | 'recent_updates') => db.selectFrom(table).select(['user_id', 'seq', 'type', 'data', 'message_id', 'created_at'])
  const log = dialect === 'sqlite' ? rows('updates').unionAll(rows('recent_updates')) : rows('updates')
  return log.orderBy('user_id').orderBy('seq').execute()
}
