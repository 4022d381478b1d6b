import { sql, type Kysely } from 'kysely'
import { dialectOf } from './columns.js'

/**
 * The update log may hold a run of `message.new` entries in one row (realtime/updates.ts): the
 * messages a user received in one group commit, `message_ids` a JSON array of their ids, one per
 * seq, the row keyed by the run's last seq. Only SQLite's send fast path writes runs; PostgreSQL
 * gets the column so that both dialects read one shape.
 *
 * Down: every run becomes one row per entry again (nothing logged is lost), then the column goes.
 */
const TABLES = ['updates', 'recent_updates'] as const

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = dialectOf(db) === 'sqlite'
  for (const table of TABLES) {
    if (table === 'recent_updates' && !sqlite) continue
    await sql`alter table ${sql.table(table)} add column message_ids text`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const sqlite = dialectOf(db) === 'sqlite'
  for (const table of TABLES) {
    if (table === 'recent_updates' && !sqlite) continue
    const t = sql.table(table)
    // PostgreSQL never writes runs; on SQLite each entry k (0-based) of a run of n has seq - (n - 1 - k)
    if (sqlite) {
      await sql`create temp table update_run_entries as
        select r.user_id, r.seq - (json_array_length(r.message_ids) - 1 - e.key) as seq, r.type, e.value as message_id, r.created_at
        from ${t} r, json_each(r.message_ids) e where r.message_ids is not null`.execute(db)
      await sql`delete from ${t} where message_ids is not null`.execute(db)
      await sql`insert into ${t} (user_id, seq, type, data, message_id, created_at)
        select user_id, seq, type, null, message_id, created_at from update_run_entries order by user_id, seq`.execute(db)
      await sql`drop table update_run_entries`.execute(db)
    }
    await sql`alter table ${t} drop column message_ids`.execute(db)
  }
}
