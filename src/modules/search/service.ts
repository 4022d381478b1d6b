/**
 * Global search: people by username or display name (case-insensitive; prefixes rank first),
 * and message search: the text of the messages in my chats, by words (full-text), newest first.
 * Both are served by an index in both dialects (db/dialect.ts). Each search is remembered in the
 * user's recent searches (newest first, one entry per query and kind, the newest HISTORY_KEEP kept).
 */
import type { AppContext } from '../../context.js'
import { messageSearchIds, textQueryWords } from '../../db/dialect.js'
import type { UserRow } from '../../db/tables.js'
import { validationError } from '../../http/errors.js'
import { iso } from '../../lib/time.js'
import * as chats from '../chats/index.js'
import { seer } from '../../policies/sight.js'
import { presentByIds } from '../messages/index.js'
import { presentPeer } from '../users/index.js'
import type { MessageIndex } from './message-index.js'
import * as repo from './repo.js'

export const QUERY_MIN = 2
export const HISTORY_KEEP = 20
/**
 * How long a search waits for SQLite's index to take in the messages sent before it. The job
 * keeps the backlog to a few seconds of messages, indexed in milliseconds; only a whole index
 * being rebuilt (after an upgrade or a restore) takes longer, and meanwhile a search answers from
 * what is indexed so far.
 */
const SEARCH_WAIT_MS = 3000

export async function searchGlobal(ctx: AppContext, me: UserRow, query: string, page: number, perPage: number) {
  // control characters name nobody (and U+0001 joins the names in PostgreSQL's index)
  const q = query
    .replace(/\p{Cc}/gu, '')
    .trim()
    .toLowerCase()
  if ([...q].length < QUERY_MIN) throw validationError(`q must be at least ${QUERY_MIN} characters`)
  const { rows, total } = await repo.searchUsers(ctx.db, ctx.config.dialect, me.id, q, page, perPage)
  await repo.remember(ctx.db, me.id, query.trim(), 'global', ctx.clock.now(), HISTORY_KEEP)
  const now = ctx.clock.now()
  // blocked users are not found at all; the rest as their privacy lets me see them
  const see = await seer(ctx.db, me.id, rows)
  return { items: rows.map((row) => ({ ...presentPeer(row, now, see(row)), bio: row.bio, is_contact: row.contact_id !== null })), total }
}

export interface MessageSearch {
  q: string
  chat_id?: number
  before_id?: number
  limit: number
}

/**
 * Messages of my chats (or of one chat I can read) whose text has a word starting with each word
 * of `q`, newest first; `next_before_id` continues the list (null at its end). Words of one
 * character are left out when there are longer ones (each would match most of the index).
 */
export async function searchMessages(ctx: AppContext, me: UserRow, input: MessageSearch) {
  const all = textQueryWords(input.q)
  const words = all.some((word) => [...word].length >= QUERY_MIN) ? all.filter((word) => [...word].length >= QUERY_MIN) : []
  if (words.length === 0) throw validationError(`q must hold a word of at least ${QUERY_MIN} letters or digits`)
  if (input.chat_id !== undefined) await chats.requireReader(ctx, me.id, input.chat_id)
  // SQLite: what the indexing job has not reached yet, first (a search sees every message)
  if (ctx.messageIndex) await indexNewMessages(ctx, ctx.messageIndex)
  const ids = await messageSearchIds(ctx.db, ctx.config.dialect, {
    words,
    userId: me.id,
    chatId: input.chat_id ?? null,
    beforeId: input.before_id ?? null,
    limit: input.limit,
  })
  await repo.remember(ctx.db, me.id, input.q.trim(), 'messages', ctx.clock.now(), HISTORY_KEEP)
  const views = await presentByIds(ctx.db, ids)
  const items = ids.flatMap((id) => views.get(id) ?? [])
  return { items, next_before_id: ids.length === input.limit ? ids[ids.length - 1] : null }
}

async function indexNewMessages(ctx: AppContext, index: MessageIndex) {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, SEARCH_WAIT_MS, 'late')))
  try {
    const outcome = await Promise.race([index.catchUp(), timeout])
    if (outcome === 'late') ctx.log.info({ waitedMs: SEARCH_WAIT_MS }, 'message search answered before the index caught up')
  } catch (err) {
    // the index as it stands still answers; the job reports the failure
    ctx.log.warn({ err }, 'message search index could not catch up')
  } finally {
    clearTimeout(timer)
  }
}

export async function history(ctx: AppContext, me: UserRow) {
  return (await repo.history(ctx.db, me.id)).map((row) => ({
    search_query: row.search_query,
    search_type: row.search_type,
    created_at: iso(row.created_at),
  }))
}

export async function clearHistory(ctx: AppContext, me: UserRow) {
  await repo.clear(ctx.db, me.id)
  return { cleared: true }
}
