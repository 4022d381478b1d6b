/** Stored messages → the V2 message shape, reactions fetched once for all the rows (no N+1). */
import type { Db } from '../../db/database.js'
import type { Audience, MessageRow } from '../../db/tables.js'
import { isRead, presentMessage } from './present.js'
import * as repo from './repo.js'
import type { MessageView } from './schemas.js'

export type RowWithSender = MessageRow & { sender_username: string; sender_avatar: string | null; sender_privacy_avatar: Audience }

/** Rows that carry their sender's name and avatar, with reactions (one query for all). */
export async function presentRows(db: Db, rows: RowWithSender[]): Promise<MessageView[]> {
  const reactions = await repo.reactionsOf(
    db,
    rows.map((r) => r.id),
  )
  return rows.map((row) =>
    presentMessage(
      row,
      { username: row.sender_username, avatar: row.sender_avatar, privacy_avatar: row.sender_privacy_avatar },
      isRead(row),
      reactions.get(row.id),
    ),
  )
}

/** Messages as they are now, by id (an id whose message no longer exists is absent). */
export async function presentByIds(db: Db, ids: number[]): Promise<Map<number, MessageView>> {
  if (ids.length === 0) return new Map()
  const rows = await repo.findWithSenders(db, [...new Set(ids)])
  const views = await presentRows(db, rows)
  return new Map(rows.map((row, i) => [row.id, views[i]]))
}
