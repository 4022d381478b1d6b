/**
 * The runtime differences between the dialects outside database setup, in one place, each with
 * why the two differ. (The SQLite send fast path, modules/messages/posting-sqlite.ts, is the other
 * SQLite-only code: it runs on the raw connection and says so in its name.)
 */
import { PostgresAdapter, sql } from 'kysely'
import type { Dialect } from '../config.js'
import type { Db } from './database.js'

/** Whether a database handle (or a transaction of it) is PostgreSQL's, for code that has no AppContext. */
export const isPostgres = (db: Db) => db.getExecutor().adapter instanceof PostgresAdapter

/** Whether the database answers (GET /health). */
export async function ping(db: Db) {
  await sql`select 1`.execute(db)
}

/** How many matches of each kind a search looks at, at most (a broad query costs no more than this). */
export const SEARCH_CANDIDATES = 1000

/**
 * Users `u` whose username or display name starts with `q` (already lower-cased, 2 characters or
 * more) or, from 3 characters, contains it; at most SEARCH_CANDIDATES of each kind, each kind
 * served by an index: prefixes by indexes on lower() (SQLite: in binary order; PostgreSQL:
 * text_pattern_ops), substrings by trigrams (SQLite: the FTS5 table `users_search`; PostgreSQL:
 * a pg_trgm GIN index on both names joined by U+0001). Trigrams need 3 characters, so 2 find
 * prefixes only.
 */
export function userNameMatches(dialect: Dialect, q: string) {
  const limit = SEARCH_CANDIDATES
  if (dialect === 'sqlite') {
    const upper = nextString(q)
    const prefixes = sql`u.id in (select id from users where lower(username) >= ${q} and lower(username) < ${upper} limit ${limit})
      or u.id in (select id from users where lower(display_name) >= ${q} and lower(display_name) < ${upper} limit ${limit})`
    if (q.length < 3) return sql<boolean>`(${prefixes})`
    const phrase = `"${q.replaceAll('"', '""')}"`
    return sql<boolean>`(${prefixes} or u.id in (select rowid from users_search where users_search match ${phrase} limit ${limit}))`
  }
  // One IN over a union of the bounded candidate lists: PostgreSQL joins the few ids to users by
  // key, where `in (…) or in (…)` made it test every row of users against each list (350 ms).
  const escaped = q.replace(/[\\%_]/g, (c) => `\\${c}`)
  const prefix = `${escaped}%`
  const anywhere = `%${escaped}%`
  const substrings =
    q.length < 3
      ? sql``
      : sql`union (select id from users where (lower(username) || chr(1) || lower(display_name)) like ${anywhere} limit ${limit})`
  return sql<boolean>`u.id in (
    (select id from users where lower(username) like ${prefix} limit ${limit})
    union (select id from users where lower(display_name) like ${prefix} limit ${limit})
    ${substrings})`
}

/** The smallest string after every string that starts with `prefix` (in binary order). */
function nextString(prefix: string): string {
  const last = prefix.charCodeAt(prefix.length - 1)
  return last === 0xffff ? `${prefix}\uffff` : prefix.slice(0, -1) + String.fromCharCode(last + 1)
}

/** Words a message search may hold at most (each is one more index lookup). */
export const TEXT_QUERY_WORDS = 8

/**
 * The words of a message search: runs of letters and digits, lower-cased, at most
 * TEXT_QUERY_WORDS; a message matches when it has a word starting with each of them. Pure, and
 * the same for both dialects (so both find the same messages).
 */
export function textQueryWords(q: string): string[] {
  return [...new Set(q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, TEXT_QUERY_WORDS)
}

export interface TextSearch {
  /** from textQueryWords: at least one */
  words: readonly string[]
  userId: number
  /** one chat, or every chat the user is a member of */
  chatId: number | null
  /** keyset: only messages older than this id */
  beforeId: number | null
  limit: number
}

/**
 * The ids of the messages, newest first, whose text has a word starting with each of `words`, in
 * the user's chats (or one chat), that the user can see: not deleted for everyone or for them, not
 * encrypted. Served by each dialect's full-text index (migration 2026-11-25T08-00):
 *
 * SQLite drives the query from the FTS5 table, which yields matches in rowid (= message id) order
 * newest first and takes the keyset bound itself, so a common word stops after `limit` visible
 * matches; a search in one chat matches the chat's token in the index too. PostgreSQL matches
 * the GIN index on to_tsvector('tern_words', content), repeating the index's partial condition so
 * the planner can use it, in the plan the words' frequency calls for (below).
 *
 * The words are letters and digits only (textQueryWords), so neither query language sees an
 * operator or a quote in them.
 */
export async function messageSearchIds(db: Db, dialect: Dialect, search: TextSearch): Promise<number[]> {
  const scope =
    search.chatId === null
      ? sql`m.chat_id in (select chat_id from chat_members where user_id = ${search.userId})`
      : sql`m.chat_id = ${search.chatId}`
  const visible = sql`m.deleted_for_all = 0 and m.is_encrypted = 0 and ${scope}
    and not exists (select 1 from message_hidden h where h.user_id = ${search.userId} and h.message_id = m.id)`
  if (dialect === 'sqlite') {
    // the words in the text; one chat: also its token (an intersection inside the index, where
    // walking every match of a common word to the chat's older messages took 116 ms of 1,000,000)
    const words = `content : (${search.words.map((word) => `"${word}"*`).join(' ')})`
    const match = search.chatId === null ? words : `${words} AND chat : "c${search.chatId}"`
    const before = search.beforeId === null ? sql`` : sql`and f.rowid < ${search.beforeId}`
    const { rows } = await sql<{ id: number }>`select m.id from search.messages_search f join messages m on m.id = f.rowid
      where f.messages_search match ${match} ${before} and ${visible}
      order by f.rowid desc limit ${search.limit}`.execute(db)
    return rows.map((row) => row.id)
  }
  // PostgreSQL estimates any prefix query at the same selectivity, so it walked the newest
  // messages for a rare word too (214 ms over 1,000,000) or gathered every match of a common one.
  // The index's own statistics tell the two apart: a common word walks newest first and stops
  // early; a rare one gathers its few matches from the GIN index and sorts them.
  const query = search.words.map((word) => `${word}:*`).join(' & ')
  const before = search.beforeId === null ? sql`` : sql`and m.id < ${search.beforeId}`
  const matches = sql`to_tsvector('tern_words', m.content) @@ to_tsquery('tern_words', ${query}) ${before} and ${visible}`
  // walking newest first costs about limit / share rows, each matched by computing its tsvector
  const common = search.limit / (await wordShare(db, search.words)) <= WALK_ROWS
  const { rows } = await db.transaction().execute(async (trx) => {
    if (common) {
      await sql`set local enable_bitmapscan = off`.execute(trx)
      // one chat: its (chat_id, seq) index gives its messages newest first
      const order = search.chatId === null ? sql`m.id desc` : sql`m.seq desc`
      return sql<{ id: string | number }>`select m.id from messages m where ${matches} order by ${order} limit ${search.limit}`.execute(trx)
    }
    return sql<{ id: string | number }>`with matched as materialized (select m.id from messages m where ${matches})
      select id from matched order by id desc limit ${search.limit}`.execute(trx)
  })
  return rows.map((row) => Number(row.id))
}

/** a query expected to find its page within this many of the newest messages walks them */
const WALK_ROWS = 500
/** how long the index's word statistics are trusted before they are read again */
const WORD_STATS_MS = 5 * 60_000

interface WordStats {
  at: number
  /** the index's most common words, in order, with the share of messages holding each */
  words: string[]
  shares: number[]
}
const wordStatsOf = new WeakMap<Db, WordStats>()

/**
 * PostgreSQL: the share of messages expected to hold all of `words` (each as a prefix; taken as
 * independent), from the most common elements ANALYZE keeps for the messages_search index; a word
 * not among them is rare (0).
 */
async function wordShare(db: Db, words: readonly string[]): Promise<number> {
  let stats = wordStatsOf.get(db)
  if (!stats || Date.now() - stats.at > WORD_STATS_MS) {
    const { rows } = await sql<{ elems: string[] | null; freqs: number[] | null }>`
      select most_common_elems::text::text[] as elems, most_common_elem_freqs as freqs from pg_stats where schemaname = current_schema() and tablename = 'messages_search'`.execute(
      db,
    )
    const elems = rows[0]?.elems ?? []
    const pairs = elems.map((word, i) => [word, rows[0]?.freqs?.[i] ?? 0] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    stats = { at: Date.now(), words: pairs.map((pair) => pair[0]), shares: pairs.map((pair) => pair[1]) }
    wordStatsOf.set(db, stats)
  }
  const { words: known, shares } = stats
  let all = 1
  for (const word of words) {
    // the index folds accents (unaccent); fold them here the same way to find the word
    const folded = word.normalize('NFD').replace(/\p{M}/gu, '')
    let share = 0
    for (let i = lowerBound(known, folded); i < known.length && known[i].startsWith(folded); i++) share += shares[i]
    all *= Math.min(1, share)
  }
  return all
}

/** The first index of a sorted array whose element is not below `value`. */
function lowerBound(sorted: readonly string[], value: string): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (sorted[mid] < value) lo = mid + 1
    else hi = mid
  }
  return lo
}
