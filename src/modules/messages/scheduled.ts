/**
 * Scheduled messages wait in their own table and become real messages when the scheduler delivers
 * them. Delivery deletes the pending row and writes the message in one transaction, and only the
 * transaction whose DELETE removed the row goes on: however many instances tick at once, each
 * pending message is delivered exactly once. The table is durable, so a restart loses nothing.
 */
import type { AppContext } from '../../context.js'
import { fromJson } from '../../db/json.js'
import type { ChatRow, ScheduledMessageRow, UserRow } from '../../db/tables.js'
import { notFound, validationError } from '../../http/errors.js'
import { inTransaction, type Outbox } from '../../events/outbox.js'
import { parseInstant } from '../../lib/time.js'
import * as chats from '../chats/index.js'
import * as users from '../users/index.js'
import type { Draft } from './draft.js'
import { isReplyTarget, mayPost } from '../../policies/chats.js'
import { assertMaySend, blockedByPeer, writeMessage } from './posting.js'
import { presentPending } from './present.js'
import * as repo from './repo.js'
import * as scheduledRepo from './scheduled-repo.js'
import type { MessageView, ScheduleBody } from './schemas.js'

/** How often the job looks for due messages: delivery lands within this of its time. */
export const TICK_MS = 250
const BATCH = 100
const RETRY_FIRST_MS = 1000
const RETRY_MAX_MS = 60_000
/** failing rows the due query reads past, so that they cannot crowd out the rest */
const MAX_FAILING_SKIPPED = 1000
const MAX_AHEAD_MS = 366 * 24 * 3600 * 1000

export const draftOf = (row: ScheduledMessageRow) => fromJson<Draft>(row.payload)!

function assertWithinRange(at: number, now: number) {
  if (at - now > MAX_AHEAD_MS) throw validationError('scheduled_at must be within 366 days')
}

export async function schedule(
  ctx: AppContext,
  me: UserRow,
  chat: ChatRow,
  draft: Draft,
  at: number,
  clientId: string | null,
): Promise<MessageView> {
  const now = ctx.clock.now()
  assertWithinRange(at, now)
  // a client id that raced in twice fails the unique index here: the send answers it as a retry
  const row = await scheduledRepo.insert(ctx.db, {
    chat_id: chat.id,
    sender_id: me.id,
    payload: JSON.stringify(draft),
    client_message_id: clientId,
    // a column of its own, so the file collector sees the upload is still wanted
    file_path: draft.attachment?.file_path ?? null,
    scheduled_at: at,
    created_at: now,
  })
  return presentPending(row, draft, me, chats.otherMember(chat, me.id))
}

/** One of my pending messages, in the shape the send that scheduled it returned. */
export async function presentRow(ctx: AppContext, me: UserRow, row: ScheduledMessageRow): Promise<MessageView> {
  const chat = await chats.requireMember(ctx, me.id, row.chat_id)
  return presentPending(row, draftOf(row), me, chats.otherMember(chat, me.id))
}

/** My pending messages in a chat, soonest first. */
export async function listPending(ctx: AppContext, me: UserRow, chatId: number): Promise<MessageView[]> {
  const chat = await chats.requireMember(ctx, me.id, chatId)
  const rows = await scheduledRepo.listOwn(ctx.db, me.id, chat.id)
  return rows.map((row) => presentPending(row, draftOf(row), me, chats.otherMember(chat, me.id)))
}

/** Reschedule (`scheduled_at`), send now (`scheduled_at: null`) or cancel (`cancel: true`) my pending message. */
export async function update(ctx: AppContext, me: UserRow, pendingId: number, body: ScheduleBody) {
  const row = await scheduledRepo.findOwn(ctx.db, me.id, pendingId)
  if (!row) throw notFound('Scheduled message not found')

  if (body.cancel) {
    await scheduledRepo.remove(ctx.db, row.id)
    return { scheduled_id: row.id, cancelled: true as const }
  }
  if (body.scheduled_at === undefined) throw validationError('scheduled_at (or cancel) is required')
  const now = ctx.clock.now()
  const at = body.scheduled_at === null ? null : parseInstant(body.scheduled_at)
  if (at !== null && at > now) {
    assertWithinRange(at, now)
    const moved = await scheduledRepo.reschedule(ctx.db, row.id, at)
    if (!moved) throw notFound('Scheduled message not found')
    const chat = await chats.requireMember(ctx, me.id, row.chat_id)
    return presentPending(moved, draftOf(moved), me, chats.otherMember(chat, me.id))
  }
  // Now (or a time already past): refused as a send would be (the message stays pending), else
  // delivered here, the same way the scheduler would.
  await assertMaySend(ctx.db, await chats.requireMember(ctx, me.id, row.chat_id), me.id)
  const message = await deliver(ctx, row.id, now)
  if (!message) throw notFound('Scheduled message not found')
  return message
}

/** Why a pending message could not become a message: the `reason` of `scheduled.dropped`. */
export type DropReason = 'blocked' | 'not_member' | 'not_allowed'

/**
 * Delivers one pending message if it is still pending: the DELETE decides who delivers it.
 * A sender who left the chat, lost the right to post or was blocked meanwhile has it dropped, and
 * their devices get `scheduled.dropped {chat_id, scheduled_id, reason}` (logged, so a device that
 * was offline learns it too). Null if it was no longer pending, or dropped.
 */
export function deliver(ctx: AppContext, pendingId: number, now: number): Promise<MessageView | null> {
  return inTransaction(ctx, async (trx, events) => {
    const row = await scheduledRepo.take(trx, pendingId)
    return row ? writePending(ctx, events, row) : null
  }, now)
}

async function writePending(ctx: AppContext, events: Outbox, row: ScheduledMessageRow): Promise<MessageView | null> {
  const trx = events.db
  const sender = await users.findByIdIn(trx, row.sender_id)
  // a banned or deleted sender has no device to tell
  if (sender?.is_active !== 1) return null
  const dropped = async (reason: DropReason) => {
    ctx.log.info({ scheduled_message_id: row.id, chat_id: row.chat_id, sender_id: sender.id, reason }, 'scheduled message dropped')
    await events.toUsers([sender.id], 'scheduled.dropped', { chat_id: row.chat_id, scheduled_id: row.id, reason })
    return null
  }
  const chat = await chats.requireMember(ctx, row.sender_id, row.chat_id, trx).catch(() => null)
  if (!chat) return dropped('not_member')
  if (!mayPost(chat, chat.role)) return dropped('not_allowed')
  if (await blockedByPeer(trx, chat, sender.id)) return dropped('blocked')
  // its client id already names a message (sent at once by a retry): that one stands
  if (row.client_message_id !== null && (await repo.findByClientId(trx, sender.id, row.client_message_id))) return null
  const draft = draftOf(row)
  // the message it answers was deleted for everyone meanwhile: it goes out as a plain message
  if (draft.reply_to_id !== null && !isReplyTarget(await repo.findById(trx, draft.reply_to_id), row.chat_id)) draft.reply_to_id = null
  return writeMessage(events, chat, sender, draft, row.client_message_id, null)
}

/**
 * The scheduled-messages job (src/jobs/): each run delivers what is due, oldest first. A message
 * whose delivery fails is retried later (after 1 s, doubling up to a minute) while the others go
 * on: one bad row must not hold back everyone's messages. The jobs runner runs it on one instance
 * at a time every TICK_MS; delivery itself stays exactly-once (`deliver`) whatever runs it.
 */
export function scheduledDelivery(ctx: AppContext) {
  /** pending ids whose delivery failed: when to try again, and the wait after the next failure */
  const failing = new Map<number, { retryAt: number; backoffMs: number }>()
  return async function deliverDue(signal: AbortSignal) {
    const now = ctx.clock.now()
    const due = await scheduledRepo.dueIds(ctx.db, now, BATCH + Math.min(failing.size, MAX_FAILING_SKIPPED))
    const dueIds = new Set(due.map((row) => row.id))
    // cancelled, rescheduled or delivered elsewhere meanwhile
    for (const id of failing.keys()) if (!dueIds.has(id)) failing.delete(id)
    for (const { id } of due) {
      if (signal.aborted) return
      const failed = failing.get(id)
      if (failed && failed.retryAt > ctx.clock.now()) continue
      try {
        await deliver(ctx, id, now)
        failing.delete(id)
      } catch (err) {
        const backoffMs = failed ? Math.min(failed.backoffMs * 2, RETRY_MAX_MS) : RETRY_FIRST_MS
        failing.set(id, { retryAt: ctx.clock.now() + backoffMs, backoffMs })
        ctx.log.warn({ err, scheduled_message_id: id, retry_in_ms: backoffMs }, 'scheduled delivery failed')
      }
    }
  }
}
