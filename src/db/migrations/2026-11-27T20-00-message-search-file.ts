import { sql, type Kysely } from 'kysely'
import { dialectOf } from './columns.js'
import * as messageSearch from './2026-11-25T08-00-message-search.js'

/**
 * SQLite: message search's FTS5 index moves out of the main database into a file of its own,
 * written by a worker thread (modules/search/message-index.ts says why: its merges held the
 * server's only write connection for up to 1.4 s). The index, its mark and its triggers here go;
 * the new file is built from the messages after start. What the triggers did directly to the
 * index is now recorded in `message_search_changes` (the id of each message whose content changed
 * or that was deleted, every one: the index's mark lives in the other file), which the worker
 * applies and the server then empties. AUTOINCREMENT: a sequence number is never reused once the
 * table was emptied, so "applied up to" stays true.
 *
 * PostgreSQL: nothing (its GIN index follows every write).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'sqlite') return
  for (const trigger of ['messages_search_delete', 'messages_search_update']) await sql`drop trigger if exists ${sql.raw(trigger)}`.execute(db)
  await sql`drop table if exists message_search_state`.execute(db)
  await sql`drop table if exists messages_search`.execute(db)
  await sql`create table message_search_changes (seq integer primary key autoincrement, message_id integer not null)`.execute(db)
  await sql`create trigger message_search_changed after update of content on messages
    when old.content is not new.content begin
    insert into message_search_changes (message_id) values (new.id);
  end`.execute(db)
  await sql`create trigger message_search_deleted after delete on messages begin
    insert into message_search_changes (message_id) values (old.id);
  end`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'sqlite') return
  for (const trigger of ['message_search_changed', 'message_search_deleted']) await sql`drop trigger ${sql.raw(trigger)}`.execute(db)
  await sql`drop table message_search_changes`.execute(db)
  // the index as 2026-11-25T08-00 made it (its SQLite branch), empty: its job fills it again
  await messageSearch.up(db)
}
