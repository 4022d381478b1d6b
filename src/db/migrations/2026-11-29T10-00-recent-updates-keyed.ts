import { sql, type Kysely } from 'kysely'
import { dialectOf } from './columns.js'

/**
 * SQLite: the recent update log is rebuilt WITHOUT ROWID, keyed by (user_id, seq) like `updates`.
 * It now moves a slice of users at a time (realtime/updates.ts), and a slice's rows were scattered
 * over the rowid table in the order they were written: deleting them cost a seek and a page in
 * the table and another in the (user_id, seq) index per row. Keyed, they are one range of one
 * B-tree, and a new row writes one page instead of two. Rows not yet moved are kept.
 *
 * PostgreSQL: nothing (it has no recent log).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'sqlite') return
  await sql`
    create table recent_updates_next (
      user_id integer not null,
      seq integer not null,
      type text not null,
      data text,
      message_id integer,
      created_at integer not null,
      primary key (user_id, seq)
    ) without rowid`.execute(db)
  await sql`
    insert into recent_updates_next (user_id, seq, type, data, message_id, created_at)
    select user_id, seq, type, data, message_id, created_at from recent_updates`.execute(db)
  await sql`drop table recent_updates`.execute(db)
  await sql`alter table recent_updates_next rename to recent_updates`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'sqlite') return
  // as 2026-11-29T02-00-recent-updates created it, rows not yet moved included
  await sql`
    create table recent_updates_prev (
      id integer primary key,
      user_id integer not null,
      seq integer not null,
      type text not null,
      data text,
      message_id integer,
      created_at integer not null
    )`.execute(db)
  await sql`
    insert into recent_updates_prev (user_id, seq, type, data, message_id, created_at)
    select user_id, seq, type, data, message_id, created_at from recent_updates order by user_id, seq`.execute(db)
  await sql`drop table recent_updates`.execute(db)
  await sql`alter table recent_updates_prev rename to recent_updates`.execute(db)
  await sql`create unique index recent_updates_user_seq on recent_updates (user_id, seq)`.execute(db)
}
