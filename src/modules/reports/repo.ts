import type { Insertable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { ReportRow, ReportsTable } from '../../db/tables.js'

export function findOpen(db: Db, reporterId: number, target: string): Promise<ReportRow | undefined> {
  return db.selectFrom('reports').selectAll().where('reporter_id', '=', reporterId).where('target', '=', target).where('status', '=', 'pending').executeTakeFirst()
}

export function insert(db: Db, row: Insertable<ReportsTable>): Promise<ReportRow> {
  return db.insertInto('reports').values(row).returningAll().executeTakeFirstOrThrow()
}
