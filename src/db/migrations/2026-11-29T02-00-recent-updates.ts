import { sql, type Kysely } from 'kysely'
import { dialectOf } from './columns.js'

/**
 * SQLite: the update log's newest rows, in the order they were written (realtime/updates.ts says
 * why). Every update is first written here; about every quarter second the rows move into
 * `updates` (ordered by user and seq) in one statement. The index answers a user's latest seq and
 * the rows a replay reads from here. No foreign key to users: with one, emptying the table after a
 * move would delete row by row instead of dropping its pages. The move leaves out a row whose user
 * is gone instead (its `updates` row would fail that table's key), and the emptying drops it.
 *
 * PostgreSQL: nothing (it logs row changes, not whole pages; `updates` is written directly).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'sqlite') return
  await sql`
    create table recent_updates (
      id integer primary key,
      user_id integer not null,
      seq integer not null,
      type text not null,
      data text,
      message_id integer,
      created_at integer not null
    )`.execute(db)
  await sql`create unique index recent_updates_user_seq on recent_updates (user_id, seq)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'sqlite') return
  // what has not moved yet moves now: nothing logged is lost
  await sql`insert into updates (user_id, seq, type, data, message_id, created_at)
    select user_id, seq, type, data, message_id, created_at from recent_updates r
    where exists (select 1 from users u where u.id = r.user_id) order by user_id, seq`.execute(db)
  await sql`drop table recent_updates`.execute(db)
}
