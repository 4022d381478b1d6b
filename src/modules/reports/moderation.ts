/**
 * The admin side of reports: the queue (what was reported, by whom, the message as it is now),
 * closing a report as resolved or dismissed, and acting on it (ban the user, delete the message
 * for everyone, warn the user). Each closes the report once, with its note, and writes its one
 * ModLog row in the same transaction as the change.
 */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import type { ReportStatus, UserRow } from '../../db/tables.js'
import { inTransaction } from '../../events/outbox.js'
import { conflict, notFound, validationError } from '../../http/errors.js'
import { iso, isoOrNull } from '../../lib/time.js'
import { assertPlatformAdmin as assertAdmin } from '../../policies/accounts.js'
import { recordModeration } from '../modlog/index.js'
import { afterSuspension, suspendIn } from '../admin/index.js'
import * as chats from '../chats/index.js'
import { eraseForAll } from '../messages/index.js'
import { moderatedMessage, postFromPlatform, textDraft } from '../messages/index.js'
import { systemAccount } from '../users/index.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'

export type ReportAction = 'ban_user' | 'delete_message' | 'warn_user'

function present(row: repo.ReportWithTargets) {
  return {
    report_id: row.id,
    status: row.status,
    reason: row.reason,
    created_at: iso(row.created_at),
    reporter: { user_id: row.reporter_id, username: row.reporter_username },
    reported_user:
      row.reported_user_id === null
        ? null
        : { user_id: row.reported_user_id, username: row.reported_username ?? '', is_active: row.reported_is_active === 1 },
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

/** A pending report, or 404 (unknown) / 409 (already closed). */
async function pendingReport(ctx: AppContext, id: number) {
  const report = await repo.findWithTargets(ctx.db, id)
  if (!report) throw notFound('Report not found')
  if (report.status !== 'pending') throw conflict(`The report is already ${report.status}`)
  return report
}

/** Closes the report inside the caller's transaction; a report closed meanwhile answers 409. */
async function closeIn(db: Db, admin: UserRow, id: number, status: 'resolved' | 'dismissed', note: string | null, now: number) {
  const closed = await repo.close(db, id, { status, resolved_at: now, resolved_by: admin.id, resolution_note: note })
  if (!closed) throw conflict('The report was closed meanwhile')
}

/** Closes a pending report (resolved or dismissed, with a note); unknown 404, already closed 409. */
export async function close(ctx: AppContext, admin: UserRow, id: number, status: 'resolved' | 'dismissed', note: string | undefined) {
  assertAdmin(admin)
  const report = await pendingReport(ctx, id)
  const trimmed = note?.trim() || null
  await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now()
    await closeIn(trx, admin, id, status, trimmed, now)
    await recordModeration(
      trx,
      admin,
      `report.${status === 'resolved' ? 'resolve' : 'dismiss'}`,
      report.reported_user_id,
      { report_id: id, note: trimmed },
      now,
    )
  })
  return present((await repo.findWithTargets(ctx.db, id))!)
}

/**
 * Acts on a pending report and resolves it: `ban_user` suspends the reported user (their sessions
 * end and their sockets close everywhere), `delete_message` deletes the reported message for
 * everyone (with the usual message.deleted events), `warn_user` sends the reported user a message
 * from the system account and counts the warning. 400 when the report has no such target.
 */
export async function act(ctx: AppContext, admin: UserRow, id: number, action: ReportAction, note: string | undefined) {
  assertAdmin(admin)
  const report = await pendingReport(ctx, id)
  const trimmed = note?.trim() || null
  const details = { report_id: id, note: trimmed }
  const targetUser = report.reported_user_id
  switch (action) {
    case 'ban_user': {
      if (targetUser === null) throw validationError('This report names no user to ban')
      await ctx.db.transaction().execute(async (trx) => {
        const now = ctx.clock.now()
        await suspendIn(trx, admin, targetUser)
        await closeIn(trx, admin, id, 'resolved', trimmed, now)
        await recordModeration(trx, admin, 'report.ban_user', targetUser, details, now)
      })
      afterSuspension(ctx, targetUser)
      break
    }
    case 'delete_message': {
      if (report.reported_message_id === null) throw validationError('This report names no message to delete')
      const found = await moderatedMessage(ctx.db, report.reported_message_id)
      if (!found) throw notFound('The reported message no longer exists')
      if (found.row.deleted_for_all === 1) throw conflict('The reported message is already deleted for everyone')
      await inTransaction(ctx, async (trx, events) => {
        await eraseForAll(events, found.chat, found.row)
        await closeIn(trx, admin, id, 'resolved', trimmed, events.now)
        await recordModeration(
          trx,
          admin,
          'report.delete_message',
          targetUser,
          { ...details, message_id: found.row.id, chat_id: found.chat.id },
          events.now,
        )
      })
      break
    }
    case 'warn_user': {
      if (targetUser === null) throw validationError('This report names no user to warn')
      const target = await users.getUser(ctx, targetUser)
      if (target.is_active !== 1) throw conflict('The reported user is banned')
      const system = await systemAccount(ctx)
      await inTransaction(ctx, async (trx, events) => {
        const chat = await chats.personalIn(trx, system.id, targetUser, events.now)
        await postFromPlatform(events, chat, system, textDraft(warningText(report, trimmed)))
        await users.countWarning(trx, targetUser)
        await closeIn(trx, admin, id, 'resolved', trimmed, events.now)
        await recordModeration(trx, admin, 'report.warn_user', targetUser, details, events.now)
      })
      break
    }
  }
  ctx.log.info({ adminId: admin.id, action: `report.${action}`, reportId: id }, 'moderation action')
  return present((await repo.findWithTargets(ctx.db, id))!)
}

function warningText(report: repo.ReportWithTargets, note: string | null) {
  const what = report.reported_message_id === null ? 'Your account was reported' : 'A message of yours was reported'
  const lines = [`Warning from the Tern moderators. ${what} for: ${report.reason}.`]
  if (note) lines.push(note)
  lines.push('Repeated violations can get the account suspended.')
  return lines.join('\n\n')
}
