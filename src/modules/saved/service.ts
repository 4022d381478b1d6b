/** Saved messages: a personal bookmark list of messages the user can see. */
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { iso } from '../../lib/time.js'
import * as messages from '../messages/index.js'
import { presentRows } from '../messages/index.js'
import * as repo from './repo.js'

export async function add(ctx: AppContext, me: UserRow, messageId: number) {
  const { row } = await messages.visibleMessage(ctx, me, messageId)
  const saved = await repo.save(ctx.db, me.id, row.id, ctx.clock.now())
  return { message_id: row.id, saved_at: iso(saved.saved_at) }
}

export async function remove(ctx: AppContext, me: UserRow, messageId: number) {
  return { message_id: messageId, removed: await repo.unsave(ctx.db, me.id, messageId) }
}

/** Newest saved first; messages since deleted (for everyone, or by me for me) drop out. */
export async function list(ctx: AppContext, me: UserRow, page: number, perPage: number) {
  const { rows, total } = await repo.list(ctx.db, me.id, page, perPage)
  const items = await presentRows(ctx.db, rows)
  return { items: items.map((message, i) => ({ ...message, saved_at: iso(rows[i].saved_at) })), total }
}
