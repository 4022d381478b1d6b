/**
 * The admin side of reports: the queue (what was reported, by whom, the message as it is now) and
 * closing a report as resolved or dismissed, with a note, once, its ModLog row in the same
 * transaction.
 */
import type { AppContext } from '../../context.js'
import type { ReportStatus, UserRow } from '../../db/tables.js'
import { conflict, notFound } from '../../http/errors.js'
import { iso, isoOrNull } from '../../lib/time.js'
import { assertAdmin, recordModeration } from '../admin/service.js'
import * as repo from './repo.js'

function present(row: repo.ReportWithTargets) {
  return {
    report_id: row.id,
    status: row.status,
    reason: row.reason,
    created_at: iso(row.created_at),
    reporter: { user_id: row.reporter_id, username: row.reporter_username },
    reported_user: row.reported_user_id === null ? null : { user_id: row.reported_user_id, username: row.reported_username ?? '', is_active: row.reported_is_active === 1 },
    message:
      row.reported_message_id === null
        ? null
        : {
            message_id: row.reported_message_id,
            chat_id: row.message_chat_id,
            // what the reader saw is gone once it was deleted for everyone
            content: row.message_deleted_for_all === 1 ? null : row.message_content,
            deleted_for_all: row.message_deleted_for_all === 1,
            created_at: isoOrNull(row.message_created_at),
          },
    resolved_at: isoOrNull(row.resolved_at),
    resolved_by: row.resolved_by,
    note: row.resolution_note,
  }
}

export async function queue(ctx: AppContext, admin: UserRow, status: ReportStatus | undefined, page: number, perPage: number) {
  assertAdmin(admin)
  const { rows, total } = await repo.listWithTargets(ctx.db, status, page, perPage)
  return { items: rows.map(present), total }
}

/** Closes a pending report (resolved or dismissed, with a note); unknown 404, already closed 409. */
export async function close(ctx: AppContext, admin: UserRow, id: number, status: 'resolved' | 'dismissed', note: string | undefined) {
  assertAdmin(admin)
  const report = await repo.findWithTargets(ctx.db, id)
  if (!report) throw notFound('Report not found')
  if (report.status !== 'pending') throw conflict(`The report is already ${report.status}`)
  await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now()
    const closed = await repo.close(trx, id, { status, resolved_at: now, resolved_by: admin.id, resolution_note: note?.trim() || null })
    if (!closed) throw conflict('The report was closed meanwhile')
    await recordModeration(trx, admin, `report.${status === 'resolved' ? 'resolve' : 'dismiss'}`, report.reported_user_id, { report_id: id, note: note?.trim() || null }, now)
  })
  return present((await repo.findWithTargets(ctx.db, id))!)
}
