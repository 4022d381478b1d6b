import { sql, type Kysely } from 'kysely'
import { dialectOf } from './columns.js'

/**
 * A personal `message.new` is logged as a reference to its message instead of a copy of it: the
 * copy (~700 bytes of JSON per recipient) was most of what a send wrote. `data` becomes nullable
 * and `message_id` names the message; realtime/updates.ts renders such a row when it is read.
 *
 * On SQLite the table is rebuilt WITHOUT ROWID at the same time: its key is (user_id, seq), so a
 * rowid table kept every update twice (the row, and its key in the primary-key index), and each
 * new update dirtied a page of both.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql`alter table updates alter column data drop not null`.execute(db)
    await sql`alter table updates add column message_id bigint`.execute(db)
    return
  }
  await sql`
    create table updates_next (
      user_id integer not null references users (id) on delete cascade,
      seq bigint not null,
      type text not null,
      data text,
      message_id integer,
      created_at bigint not null,
      constraint updates_pk primary key (user_id, seq)
    ) without rowid`.execute(db)
  await sql`
    insert into updates_next (user_id, seq, type, data, created_at)
    select user_id, seq, type, data, created_at from updates`.execute(db)
  await sql`drop table updates`.execute(db)
  await sql`alter table updates_next rename to updates`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  // references cannot be turned back into copies here: such updates are dropped
  await sql`delete from updates where data is null`.execute(db)
  if (dialectOf(db) === 'postgres') {
    await sql`alter table updates drop column message_id`.execute(db)
    await sql`alter table updates alter column data set not null`.execute(db)
    return
  }
  await sql`
    create table updates_next (
      user_id integer not null references users (id) on delete cascade,
      seq bigint not null,
      type text not null,
      data text not null,
      created_at bigint not null,
      constraint updates_pk primary key (user_id, seq)
    )`.execute(db)
  await sql`
    insert into updates_next (user_id, seq, type, data, created_at)
    select user_id, seq, type, data, created_at from updates`.execute(db)
  await sql`drop table updates`.execute(db)
  await sql`alter table updates_next rename to updates`.execute(db)
}
