/**
 * Every entry of the per-user update log, wherever it is stored: on SQLite the newest rows are in
 * `recent_updates` until they move into `updates`, and a row may be a run of message.new entries
 * (`message_ids`, one per seq up to the row's seq; realtime/updates.ts). A run is read as its
 * entries, each as a row of its own would be, so that logs written either way compare equal
 * (`runs` counts the rows that were runs). Ordered by user and seq.
 */
import type { Db } from '../../src/db/database.js'
import type { Dialect } from '../../src/config.js'
import { runEntries } from '../../src/realtime/updates.js'

export interface LogEntry {
  user_id: number
  seq: number
  type: string
  data: unknown
  message_id: number | null
  created_at: number
}

export async function updateLog(db: Db, dialect: Dialect): Promise<LogEntry[]> {
  return (await updateLogRows(db, dialect)).entries
}

export async function updateLogRows(db: Db, dialect: Dialect): Promise<{ entries: LogEntry[]; runs: number }> {
  const rows = (table: 'updates' | 'recent_updates') =>
    db.selectFrom(table).select(['user_id', 'seq', 'type', 'data', 'message_id', 'message_ids', 'created_at'])
  const log = dialect === 'sqlite' ? rows('updates').unionAll(rows('recent_updates')) : rows('updates')
  const entries: LogEntry[] = []
  let runs = 0
  for (const { message_ids, ...row } of await log.orderBy('user_id').orderBy('seq').execute()) {
    if (message_ids === null) {
      entries.push(row)
      continue
    }
    runs++
    for (const { seq, messageId } of runEntries({ seq: row.seq, message_ids })) entries.push({ ...row, seq, message_id: messageId })
  }
  return { entries, runs }
}
