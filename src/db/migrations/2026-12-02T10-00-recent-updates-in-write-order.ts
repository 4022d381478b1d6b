import { sql, type Kysely } from 'kysely'
import { dialectOf } from './columns.js'

/**
 * SQLite: the recent update log is kept in the order it is written (a rowid table, no index), and
 * each user's latest seq goes back into a counter, `update_seqs`, as on PostgreSQL.
 *
 * Keyed by (user_id, seq), a quarter second of the recent log at a high send rate spanned about a
 * page per user, so a commit wrote a page to the WAL for every user it logged for (3.2 WAL frames a
 * send against 1.4 without the log; docs/decisions/recent-updates-log.md). In write
 * order a commit's rows share the table's last page. The latest seq can no longer be read off the
 * log's key, hence the counter: one small row per user, a few hundred users to a page.
 *
 * Rows not yet moved are kept, in (user_id, seq) order, so each user's rows stay in seq order.
 * PostgreSQL: nothing (it has no recent log, and has always kept `update_seqs`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'sqlite') return
  await sql`
    create table update_seqs (
      user_id integer primary key references users (id) on delete cascade,
      seq integer not null
    )`.execute(db)
  // every seq handed out was logged, and retention keeps each log's newest entry
  await sql`
    insert into update_seqs (user_id, seq)
    select user_id, max(seq) from (select user_id, seq from updates union all select user_id, seq from recent_updates) l
    where exists (select 1 from users u where u.id = l.user_id)
    group by user_id`.execute(db)
  await sql`
    create table recent_updates_next (
      id integer primary key,
      user_id integer not null,
      seq integer not null,
      type text not null,
      data text,
      message_id integer,
      message_ids text,
      created_at integer not null
    )`.execute(db)
  await sql`
    insert into recent_updates_next (user_id, seq, type, data, message_id, message_ids, created_at)
    select user_id, seq, type, data, message_id, message_ids, created_at from recent_updates order by user_id, seq`.execute(db)
  await sql`drop table recent_updates`.execute(db)
  await sql`alter table recent_updates_next rename to recent_updates`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'sqlite') return
  // keyed again, as 2026-11-29T10-00-recent-updates-keyed and 2026-12-02T00-00-update-runs left it
  await sql`
    create table recent_updates_prev (
      user_id integer not null,
      seq integer not null,
      type text not null,
      data text,
      message_id integer,
      created_at integer not null,
      message_ids text,
      primary key (user_id, seq)
    ) without rowid`.execute(db)
  await sql`
    insert into recent_updates_prev (user_id, seq, type, data, message_id, created_at, message_ids)
    select user_id, seq, type, data, message_id, created_at, message_ids from recent_updates`.execute(db)
  await sql`drop table recent_updates`.execute(db)
  await sql`alter table recent_updates_prev rename to recent_updates`.execute(db)
  // the seq is read off the logs again (2026-11-21T08-00-sqlite-seq-from-log)
  await sql`drop table update_seqs`.execute(db)
}
