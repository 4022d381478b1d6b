/**
 * Global search: people by username or display name (case-insensitive; prefixes rank first),
 * served by an index in both dialects (db/dialect.ts). Each search is remembered in the user's
 * recent searches (newest first, one entry per query, the newest HISTORY_KEEP kept).
 */
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { validationError } from '../../http/errors.js'
import { iso } from '../../lib/time.js'
import { seer } from '../contacts/sight.js'
import { presentPeer } from '../users/present.js'
import * as repo from './repo.js'

export const QUERY_MIN = 2
export const HISTORY_KEEP = 20

export async function searchGlobal(ctx: AppContext, me: UserRow, query: string, page: number, perPage: number) {
  const q = query.trim().toLowerCase()
  if ([...q].length < QUERY_MIN) throw validationError(`q must be at least ${QUERY_MIN} characters`)
  const { rows, total } = await repo.searchUsers(ctx.db, ctx.config.dialect, me.id, q, page, perPage)
  await repo.remember(ctx.db, me.id, query.trim(), 'global', ctx.clock.now(), HISTORY_KEEP)
  const now = ctx.clock.now()
  // blocked users are not found at all; the rest as their privacy lets me see them
  const see = await seer(ctx.db, me.id, rows)
  return { items: rows.map((row) => ({ ...presentPeer(row, now, see(row)), bio: row.bio, is_contact: row.contact_id !== null })), total }
}

export async function history(ctx: AppContext, me: UserRow) {
  return (await repo.history(ctx.db, me.id)).map((row) => ({ search_query: row.search_query, search_type: row.search_type, created_at: iso(row.created_at) }))
}

export async function clearHistory(ctx: AppContext, me: UserRow) {
  await repo.clear(ctx.db, me.id)
  return { cleared: true }
}
