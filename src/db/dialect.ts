/**
 * The runtime differences between the dialects outside database setup, in one place, each with
 * why the two differ. (The SQLite send fast path, modules/messages/posting-sqlite.ts, is the other
 * SQLite-only code: it runs on the raw connection and says so in its name.)
 */
import { sql } from 'kysely'
import type { Dialect } from '../config.js'
import type { Db } from './database.js'

export interface UserSeq {
  userId: number
  seq: number
}

/**
 * Each recipient's next seq, serialized per user in both dialects.
 *
 * PostgreSQL: an upsert on `update_seqs`, whose row lock makes concurrent transactions for one
 * user take turns. SQLite has one writer at a time (a transaction that read a stale snapshot
 * cannot commit), so there the log is its own counter: a user's seq is the newest row of their
 * log, which retention never deletes (`prunes` keeps the newest `keep`). Reading one index entry
 * costs a fraction of the upsert, and a send no longer dirties a counter page besides the log's.
 * (The SQLite send fast path, messages/posting-sqlite.ts, reads it the same way.)
 */
export async function nextUpdateSeqs(db: Db, dialect: Dialect, recipients: number[]): Promise<UserSeq[]> {
  if (dialect === 'sqlite') {
    // One read per recipient (a chat's event has one or two): each seeks one index entry, where a
    // grouped max over several users would read every kept update of each.
    const next: UserSeq[] = []
    for (const userId of recipients) next.push({ userId, seq: (await latestSeqSqlite(db, userId)) + 1 })
    return next
  }
  const rows = await db
    .insertInto('update_seqs')
    .values(recipients.map((userId) => ({ user_id: userId, seq: 1 })))
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ seq: sql`update_seqs.seq + 1` }))
    .returning(['user_id', 'seq'])
    .execute()
  return rows.map((r) => ({ userId: r.user_id, seq: r.seq }))
}

/** A user's latest seq on SQLite: the newest entry of their log (0 before any update). */
async function latestSeqSqlite(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('updates')
    .select(sql<number>`coalesce(max(seq), 0)`.as('seq'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow()
  return row.seq
}

/** A user's latest update seq (0 before any update). */
export async function latestUpdateSeq(db: Db, dialect: Dialect, userId: number): Promise<number> {
  if (dialect === 'sqlite') return latestSeqSqlite(db, userId)
  const row = await db.selectFrom('update_seqs').select('seq').where('user_id', '=', userId).executeTakeFirst()
  return row?.seq ?? 0
}

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
 * matches; a search in one chat matches the chat's token in the index too. PostgreSQL matches the GIN index on to_tsvector('tern_words', content); the query repeats
 * the index's partial condition so the planner can use it.
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
    const { rows } = await sql<{ id: number }>`select m.id from messages_search f join messages m on m.id = f.rowid
      where f.messages_search match ${match} ${before} and ${visible}
      order by f.rowid desc limit ${search.limit}`.execute(db)
    return rows.map((row) => row.id)
  }
  const query = search.words.map((word) => `${word}:*`).join(' & ')
  const before = search.beforeId === null ? sql`` : sql`and m.id < ${search.beforeId}`
  const { rows } = await sql<{ id: string | number }>`select m.id from messages m
    where to_tsvector('tern_words', m.content) @@ to_tsquery('tern_words', ${query}) ${before} and ${visible}
    order by m.id desc limit ${search.limit}`.execute(db)
  return rows.map((row) => Number(row.id))
}
