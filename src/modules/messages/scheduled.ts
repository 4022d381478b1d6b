/**
 * Scheduled messages wait in their own table (where their senders list, edit and cancel them) and
 * become real messages when they fall due: each has an item in the work queue (jobs/queue.ts,
 * kind `scheduled`) due at its time, written with it. Delivery deletes the pending row and writes
 * the message in one transaction, and only the transaction whose DELETE removed the row goes on:
 * whatever runs it, each pending message is delivered exactly once. Both tables are durable, so a
 * restart loses nothing.
 */
import type { AppContext } from '../../context.js'
import { fromJson } from '../../db/json.js'
import type { ChatRow, ScheduledMessageRow, UserRow } from '../../db/tables.js'
import { notFound, validationError } from '../../http/errors.js'
import { inTransaction, type Outbox } from '../../events/outbox.js'
import { parseInstant } from '../../lib/time.js'
import { DONE, dequeue, enqueueIn, queueWake, type QueueKind } from '../../jobs/queue.js'
import * as chats from '../chats/index.js'
import * as users from '../users/index.js'
import type { Draft } from './draft.js'
import { isReplyTarget, mayPost } from '../../policies/chats.js'
import { assertMaySend, blockedByPeer, writeMessage } from './posting.js'
import { presentPending } from './present.js'
import * as repo from './repo.js'
import * as scheduledRepo from './scheduled-repo.js'
import type { MessageView, ScheduleBody } from './schemas.js'
import { isUsable } from '../../policies/accounts.js'

/** the queue's kind for scheduled messages; an item's key is the pending message's id */
const KIND = 'scheduled'
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
  const row = await ctx.db.transaction().execute(async (trx) => {
    const inserted = await scheduledRepo.insert(trx, {
      chat_id: chat.id,
      sender_id: me.id,
      payload: JSON.stringify(draft),
      client_message_id: clientId,
      // a column of its own, so the file collector sees the upload is still wanted
      file_path: draft.attachment?.file_path ?? null,
      scheduled_at: at,
      created_at: now,
    })
    await enqueueIn(trx, { kind: KIND, key: String(inserted.id), dueAt: at, ref: inserted.id }, now, 'replace')
    return inserted
  })
  queueWake(ctx, at)
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
    await ctx.db.transaction().execute(async (trx) => {
      await scheduledRepo.remove(trx, row.id)
      await dequeue(trx, KIND, String(row.id))
    })
    return { scheduled_id: row.id, cancelled: true as const }
  }
  if (body.scheduled_at === undefined) throw validationError('scheduled_at (or cancel) is required')
  const now = ctx.clock.now()
  const at = body.scheduled_at === null ? null : parseInstant(body.scheduled_at)
  if (at !== null && at > now) {
    assertWithinRange(at, now)
    const moved = await ctx.db.transaction().execute(async (trx) => {
      const changed = await scheduledRepo.reschedule(trx, row.id, at)
      if (changed) await enqueueIn(trx, { kind: KIND, key: String(row.id), dueAt: at, ref: row.id }, now, 'replace')
      return changed
    })
    if (!moved) throw notFound('Scheduled message not found')
    queueWake(ctx, at)
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
  return inTransaction(
    ctx,
    async (trx, events) => {
      const row = await scheduledRepo.take(trx, pendingId)
      if (!row) return null
      await dequeue(trx, KIND, String(pendingId))
      return writePending(ctx, events, row)
    },
    now,
  )
}

async function writePending(ctx: AppContext, events: Outbox, row: ScheduledMessageRow): Promise<MessageView | null> {
  const trx = events.db
  const sender = await users.findByIdIn(trx, row.sender_id)
  // a banned or deleted sender has no device to tell
  if (!sender || !isUsable(sender)) return null
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
 * The queue's kind for scheduled messages (jobs/index.ts): an item falls due at its message's time
 * and delivers it (`deliver`, exactly once whatever runs it). A delivery that fails is retried
 * after 1 s, doubling up to a minute, never given up, while everything due after it goes on: one
 * bad row must not hold back everyone's messages.
 */
export function scheduledKind(ctx: AppContext): QueueKind {
  return {
    kind: KIND,
    job: 'scheduled-messages',
    summary: 'sends a scheduled message when it is due',
    policy: { firstMs: 1000, maxMs: 60_000, jitter: 0, maxAttempts: null, maxAgeMs: null },
    // one at a time, oldest first: messages due at the same moment arrive in the order they were scheduled
    maxRunning: 1,
    async run(item) {
      await deliver(ctx, Number(item.ref ?? item.item_key), ctx.clock.now())
      return DONE
    },
  }
}
