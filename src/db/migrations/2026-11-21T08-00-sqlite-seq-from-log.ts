import { sql, type Kysely } from 'kysely'
import { dialectOf } from './columns.js'

/**
 * On SQLite a user's seq is now the newest entry of their update log (realtime/updates.ts
 * nextSeqs), so the separate counter goes: it was one more page written by every send. Every seq
 * it handed out was logged in the same transaction, and retention keeps each log's newest entry,
 * so the log already holds every counter's value. PostgreSQL keeps `update_seqs`: its row lock is
 * what serializes concurrent transactions for one user there.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) === 'postgres') return
  await sql`drop table update_seqs`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) === 'postgres') return
  await sql`
    create table update_seqs (
      user_id integer primary key references users (id) on delete cascade,
      seq bigint not null
    )`.execute(db)
  await sql`insert into update_seqs (user_id, seq) select user_id, max(seq) from updates group by user_id`.execute(db)
}
