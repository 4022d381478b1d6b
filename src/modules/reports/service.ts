/**
 * Reports: a user tells the moderators about a user or a message. A reporter has at most one open
 * report per target (a repeat answers the open one); the admin area reviews them.
 */
import type { AppContext } from '../../context.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { UserRow } from '../../db/tables.js'
import { notFound, validationError } from '../../http/errors.js'
import * as messages from '../messages/index.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'

export interface NewReport {
  reported_user_id?: number
  reported_message_id?: number
  reason: string
}

export async function report(ctx: AppContext, me: UserRow, input: NewReport) {
  const reason = input.reason.trim()
  if (reason === '') throw validationError('reason must not be empty')
  if (input.reported_user_id === undefined && input.reported_message_id === undefined) {
    throw validationError('Name what you report: reported_user_id or reported_message_id')
  }
  let userId = input.reported_user_id ?? null
  let messageId: number | null = null
  if (input.reported_message_id !== undefined) {
    // only a message the reporter can read; it names its sender
    const { row } = await messages.readableMessage(ctx, me, input.reported_message_id)
    if (userId !== null && userId !== row.sender_id) throw validationError('reported_user_id is not the sender of reported_message_id')
    messageId = row.id
    userId = row.sender_id
  } else {
    if (userId === me.id) throw validationError('You cannot report yourself')
    const user = userId === null ? undefined : await users.findById(ctx, userId)
    if (!user || user.deleted_at !== null) throw notFound('User not found')
  }
  const target = messageId !== null ? `message:${messageId}` : `user:${userId}`
  const open = await repo.findOpen(ctx.db, me.id, target)
  if (open) return present(open)
  try {
    return present(
      await repo.insert(ctx.db, {
        reporter_id: me.id,
        reported_user_id: userId,
        reported_message_id: messageId,
        target,
        reason,
        created_at: ctx.clock.now(),
      }),
    )
  } catch (error) {
    // the same report, twice at once: the partial unique index let one in
    if (!isUniqueViolation(error)) throw error
    return present((await repo.findOpen(ctx.db, me.id, target))!)
  }
}

function present(row: { id: number; status: string }) {
  return { report_id: row.id, status: row.status }
}
