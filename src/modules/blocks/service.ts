/**
 * Blocking: a blocked user cannot send to, forward to, edit, react in or type into the personal
 * chat with the blocker, and none of their events reach the blocker; presence is hidden both ways.
 */
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { notFound, validationError } from '../../http/errors.js'
import { inTransaction } from '../../events/outbox.js'
import * as chats from '../chats/index.js'
import * as users from '../users/index.js'
import { seer } from '../../policies/sight.js'
import { presentPeer } from '../users/index.js'
import * as repo from './repo.js'

export async function setBlocked(ctx: AppContext, me: UserRow, otherId: number, isBlocked: boolean, reason?: string) {
  if (otherId === me.id) throw validationError('You cannot block yourself')
  const other = await users.findById(ctx, otherId)
  if (!other) throw notFound('User not found')
  const chat = await chats.findPersonal(ctx.db, me.id, otherId)
  await inTransaction(ctx, async (trx, events) => {
    if (isBlocked) await repo.block(trx, me.id, otherId, reason ?? null, events.now)
    else await repo.unblock(trx, me.id, otherId)
    // My other devices update the chat's state; the other user is not told.
    if (chat) await events.toUsers([me.id], 'chat.updated', { chat_id: chat.id, is_blocked: isBlocked })
  })
  return { user_id: otherId, is_blocked: isBlocked }
}

export async function list(ctx: AppContext, me: UserRow, page: number, perPage: number) {
  const { rows, total } = await repo.listBlocked(ctx.db, me.id, page, perPage)
  const now = ctx.clock.now()
  // I blocked each of them: their presence is hidden from me as mine is from them
  const see = await seer(ctx.db, me.id, rows, new Set(rows.map((row) => row.id)))
  return { items: rows.map((row) => presentPeer(row, now, see(row))), total }
}
