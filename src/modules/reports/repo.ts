import type { Insertable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { ReportRow, ReportsTable } from '../../db/tables.js'
import { paged } from '../../db/page.js'

export function findOpen(db: Db, reporterId: number, target: string): Promise<ReportRow | undefined> {
  return db
    .selectFrom('reports')
    .selectAll()
    .where('reporter_id', '=', reporterId)
    .where('target', '=', target)
    .where('status', '=', 'pending')
    .executeTakeFirst()
}

export function insert(db: Db, row: Insertable<ReportsTable>): Promise<ReportRow> {
  return db.insertInto('reports').values(row).returningAll().executeTakeFirstOrThrow()
}

/** Reports with their reporter, the reported user and the reported message (as it is now). */
function withTargets(db: Db) {
  return db
    .selectFrom('reports as r')
    .innerJoin('users as reporter', 'reporter.id', 'r.reporter_id')
    .leftJoin('users as reported', 'reported.id', 'r.reported_user_id')
    .leftJoin('messages as m', 'm.id', 'r.reported_message_id')
    .selectAll('r')
    .select([
      'reporter.username as reporter_username',
      'reported.username as reported_username',
      'reported.is_active as reported_is_active',
      'm.chat_id as message_chat_id',
      'm.content as message_content',
      'm.deleted_for_all as message_deleted_for_all',
      'm.created_at as message_created_at',
    ])
}
export type ReportWithTargets = NonNullable<Awaited<ReturnType<typeof findWithTargets>>>

export function findWithTargets(db: Db, id: number) {
  return withTargets(db).where('r.id', '=', id).executeTakeFirst()
}

/** A page of reports, newest first, optionally of one status (reports_status_id). */
export async function listWithTargets(db: Db, status: ReportRow['status'] | undefined, page: number, perPage: number) {
  // biome-ignore lint/suspicious/noExplicitAny: one filter for the page's and the count's builders, whose where() types differ
  const filtered = <Q extends { where: (...args: any[]) => Q }>(query: Q) => (status ? query.where('r.status', '=', status) : query)
  const [rows, count] = await Promise.all([
    filtered(withTargets(db)).orderBy('r.id', 'desc').$call(paged(page, perPage)).execute(),
    filtered(db.selectFrom('reports as r'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

/** Closes a pending report; undefined when it was not pending (closed once only). */
export function close(
  db: Db,
  id: number,
  changes: { status: 'resolved' | 'dismissed'; resolved_at: number; resolved_by: number; resolution_note: string | null },
) {
  return db.updateTable('reports').set(changes).where('id', '=', id).where('status', '=', 'pending').returning('id').executeTakeFirst()
}
