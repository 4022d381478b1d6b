import { sql, type Kysely } from 'kysely'
import { dialectOf } from './columns.js'

/**
 * Full-text search over message text. Indexed: what a reader can see as text, so neither messages
 * deleted for everyone (their content is emptied) nor encrypted ones (the server cannot read them).
 *
 * SQLite: an FTS5 table (`messages_search`: unicode61 words, diacritics folded; contentless, so
 * the text is stored once, with each message's chat as a token). A send does not touch it: indexing one row per commit would cost a
 * send about half again its CPU. Messages are indexed in batches, in id order, up to the mark in
 * `message_search_state` (one writer at a time, so ids are committed in order and nothing is
 * skipped): by a job, and by each search first (so a search always sees every message). Triggers
 * keep what is already indexed in step: a change of content (edit, delete for everyone) or a
 * delete of a message at or below the mark updates the index.
 *
 * PostgreSQL: a GIN index on the tsvector of the content in `tern_words`, the 'simple'
 * configuration (words lower-cased, no stemming: right for any language) with accents folded by
 * `unaccent`, as SQLite's tokenizer does; partial on the same condition.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) === 'sqlite') {
    // contentless (the text stays in `messages` alone), deletable by rowid; `chat` holds one token,
    // c<chat_id>, so a search in one chat is an intersection inside the index
    await sql`create virtual table messages_search using fts5(content, chat, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')`.execute(db)
    await sql`create table message_search_state (id integer primary key check (id = 1), indexed_up_to integer not null)`.execute(db)
    await sql`insert into message_search_state (id, indexed_up_to) values (1, 0)`.execute(db)
    await sql`create trigger messages_search_delete after delete on messages
      when old.id <= (select indexed_up_to from message_search_state) begin
      delete from messages_search where rowid = old.id;
    end`.execute(db)
    await sql`create trigger messages_search_update after update of content on messages
      when old.id <= (select indexed_up_to from message_search_state) begin
      delete from messages_search where rowid = old.id;
      insert into messages_search(rowid, content, chat) select new.id, new.content, 'c' || new.chat_id where new.content <> '' and new.is_encrypted = 0;
    end`.execute(db)
  } else {
    await sql`create extension if not exists unaccent`.execute(db)
    await sql`create text search configuration tern_words (copy = simple)`.execute(db)
    await sql`alter text search configuration tern_words alter mapping for hword, hword_part, word with unaccent, simple`.execute(db)
    await sql`create index messages_search on messages using gin (to_tsvector('tern_words', content)) where deleted_for_all = 0 and is_encrypted = 0`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) === 'sqlite') {
    for (const trigger of ['messages_search_delete', 'messages_search_update']) await sql`drop trigger ${sql.raw(trigger)}`.execute(db)
    await sql`drop table message_search_state`.execute(db)
    await sql`drop table messages_search`.execute(db)
  } else {
    await sql`drop index messages_search`.execute(db)
    await sql`drop text search configuration tern_words`.execute(db)
  }
}
