/** What the operator's endpoints read of the database (http/observability.ts). */
import { sql } from 'kysely'
import type { Dialect } from '../config.js'
import type { Db } from './database.js'

/** Rows in the update log: counted on SQLite, the planner's estimate on PostgreSQL (a count would scan it). */
export async function updateLogRows(db: Db, dialect: Dialect): Promise<number> {
  if (dialect === 'postgres') {
    const { rows } = await sql<{
      n: number
    }>`select reltuples::bigint as n from pg_class where relname = 'updates' and relkind = 'r'`.execute(db)
    const estimate = Number(rows[0]?.n ?? -1)
    if (estimate >= 0) return estimate
  }
  // on SQLite the newest rows are in the recent log until they move (realtime/updates.ts): both
  // tables in one statement, so that a move between two counts cannot count its rows twice or not at all
  const { rows } =
    dialect === 'sqlite'
      ? await sql<{ n: number }>`select (select count(*) from updates) + (select count(*) from recent_updates) as n`.execute(db)
      : await sql<{ n: number }>`select count(*) as n from updates`.execute(db)
  return Number(rows[0]?.n ?? 0)
}

/** The names of the migrations the database has applied. */
export async function appliedMigrations(db: Db): Promise<Set<string>> {
  const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(db)
  return new Set(rows.rows.map((row) => row.name))
}
