/**
 * Scheduled messages wait in their own table and become real messages when the scheduler delivers
 * them. Delivery deletes the pending row and writes the message in one transaction, and only the
 * transaction whose DELETE removed the row goes on: however many instances tick at once, each
 * pending message is delivered exactly once. The table is durable, so a restart loses nothing.
 */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import { fromJson } from '../../db/json.js'
import type { ChatRow, ScheduledMessageRow, UserRow } from '../../db/tables.js'
import { notFound, validationError } from '../../http/errors.js'
import { logUsers } from '../../realtime/events.js'
import type { Delivery } from '../../realtime/fanout.js'
import * as blocks from '../blocks/service.js'
import * as chats from '../chats/service.js'
import * as users from '../users/service.js'
import type { Draft } from './draft.js'
import { presentPending } from './present.js'
import type { MessageView, ScheduleBody } from './schemas.js'
import * as repo from './repo.js'
import { assertMaySend, writeMessage } from './service.js'
import { can } from '../chats/permissions.js'

/** How often each instance looks for due messages: delivery lands within this of its time. */
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
  const row = await ctx.db
    .insertInto('scheduled_messages')
    .values({ chat_id: chat.id, sender_id: me.id, payload: JSON.stringify(draft), client_message_id: clientId, scheduled_at: at, created_at: now })
    .returningAll()
    .executeTakeFirstOrThrow()
  return presentPending(row, draft, me, chats.otherMember(chat, me.id))
}

/** My pending message with this client id (a retried send is answered with it). */
export function findPendingByClientId(ctx: AppContext, me: UserRow, clientId: string): Promise<ScheduledMessageRow | undefined> {
  return ctx.db
    .selectFrom('scheduled_messages')
    .selectAll()
    .where('sender_id', '=', me.id)
    .where('client_message_id', '=', clientId)
    .executeTakeFirst()
}

/** One of my pending messages, in the shape the send that scheduled it returned. */
export async function presentRow(ctx: AppContext, me: UserRow, row: ScheduledMessageRow): Promise<MessageView> {
  const chat = await chats.requireMember(ctx, me.id, row.chat_id)
  return presentPending(row, draftOf(row), me, chats.otherMember(chat, me.id))
}

/** My pending messages in a chat, soonest first. */
export async function listPending(ctx: AppContext, me: UserRow, chatId: number): Promise<MessageView[]> {
  const chat = await chats.requireMember(ctx, me.id, chatId)
  const rows = await ctx.db
    .selectFrom('scheduled_messages')
    .selectAll()
    .where('sender_id', '=', me.id)
    .where('chat_id', '=', chat.id)
    .orderBy('scheduled_at')
    .orderBy('id')
    .execute()
  return rows.map((row) => presentPending(row, draftOf(row), me, chats.otherMember(chat, me.id)))
}

/** Reschedule (`scheduled_at`), send now (`scheduled_at: null`) or cancel (`cancel: true`) my pending message. */
export async function update(ctx: AppContext, me: UserRow, pendingId: number, body: ScheduleBody) {
  const row = await ctx.db
    .selectFrom('scheduled_messages')
    .selectAll()
    .where('id', '=', pendingId)
    .where('sender_id', '=', me.id)
    .executeTakeFirst()
  if (!row) throw notFound('Scheduled message not found')

  if (body.cancel) {
    await ctx.db.deleteFrom('scheduled_messages').where('id', '=', row.id).execute()
    return { scheduled_id: row.id, cancelled: true as const }
  }
  if (body.scheduled_at === undefined) throw validationError('scheduled_at (or cancel) is required')
  const now = ctx.clock.now()
  if (body.scheduled_at !== null && Date.parse(body.scheduled_at) > now) {
    const at = Date.parse(body.scheduled_at)
    assertWithinRange(at, now)
    const moved = await ctx.db
      .updateTable('scheduled_messages')
      .set({ scheduled_at: at })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirst()
    if (!moved) throw notFound('Scheduled message not found')
    const chat = await chats.requireMember(ctx, me.id, row.chat_id)
    return presentPending(moved, draftOf(moved), me, chats.otherMember(chat, me.id))
  }
  // Now (or a time already past): refused as a send would be (the message stays pending), else
  // delivered here, the same way the scheduler would.
  await assertMaySend(ctx, await chats.requireMember(ctx, me.id, row.chat_id), me.id)
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
export async function deliver(ctx: AppContext, pendingId: number, now: number): Promise<MessageView | null> {
  const result = await ctx.db.transaction().execute(async (trx) => {
    const row = await trx.deleteFrom('scheduled_messages').where('id', '=', pendingId).returningAll().executeTakeFirst()
    if (!row) return null
    return writePending(ctx, trx, row, now)
  })
  if (!result) return null
  ctx.fanout.publish(result.deliveries)
  return result.message ?? null
}

/** The delivered message and its frames; only frames (for the sender) when dropped; null when neither. */
type Written = { message?: MessageView; deliveries: Delivery[] } | null

async function writePending(ctx: AppContext, trx: Db, row: ScheduledMessageRow, now: number): Promise<Written> {
  const sender = await users.findByIdIn(trx, row.sender_id)
  // a banned or deleted sender has no device to tell
  if (!sender || sender.is_active !== 1) return null
  const dropped = async (reason: DropReason): Promise<Written> => {
    ctx.log.info({ scheduled_message_id: row.id, chat_id: row.chat_id, sender_id: sender.id, reason }, 'scheduled message dropped')
    const event = { chat_id: row.chat_id, scheduled_id: row.id, reason }
    return { deliveries: await logUsers(ctx, trx, [sender.id], 'scheduled.dropped', event, now) }
  }
  const chat = await chats.requireMember(ctx, row.sender_id, row.chat_id, trx).catch(() => null)
  if (!chat) return dropped('not_member')
  if (chat.chat_type !== 'personal' && !can(chat, chat.role, 'post')) return dropped('not_allowed')
  const other = chats.otherMember(chat, sender.id)
  if (other !== null && other !== sender.id && (await blocks.hasBlocked(trx, other, sender.id))) return dropped('blocked')
  // its client id already names a message (sent at once by a retry): that one stands
  if (row.client_message_id !== null && (await repo.findByClientId(trx, sender.id, row.client_message_id))) return null
  const draft = draftOf(row)
  if (draft.reply_to_id !== null) {
    const original = await trx.selectFrom('messages').select(['chat_id', 'deleted_for_all']).where('id', '=', draft.reply_to_id).executeTakeFirst()
    if (!original || original.deleted_for_all === 1) draft.reply_to_id = null
  }
  return writeMessage(ctx, trx, chat, sender, draft, row.client_message_id, null, now)
}

/**
 * Every instance runs one: it delivers what is due each tick, oldest first. A message whose
 * delivery fails is retried later (after 1 s, doubling up to a minute) while the others go on:
 * one bad row must not hold back everyone's messages.
 */
export function startScheduler(ctx: AppContext) {
  let running: Promise<void> | null = null
  let stopped = false
  /** pending ids whose delivery failed: when to try again, and the wait after the next failure */
  const failing = new Map<number, { retryAt: number; backoffMs: number }>()
  const tick = async () => {
    const now = ctx.clock.now()
    const due = await ctx.db
      .selectFrom('scheduled_messages')
      .select('id')
      .where('scheduled_at', '<=', now)
      .orderBy('scheduled_at')
      .orderBy('id')
      .limit(BATCH + Math.min(failing.size, MAX_FAILING_SKIPPED))
      .execute()
    const dueIds = new Set(due.map((row) => row.id))
    // cancelled, rescheduled or delivered elsewhere meanwhile
    for (const id of failing.keys()) if (!dueIds.has(id)) failing.delete(id)
    for (const { id } of due) {
      if (stopped) return
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
  const timer = setInterval(() => {
    if (running) return
    running = tick()
      .catch((err) => ctx.log.warn({ err }, 'scheduled delivery failed; retrying next tick'))
      .finally(() => (running = null))
  }, TICK_MS)
  timer.unref()
  return {
    async stop() {
      stopped = true
      clearInterval(timer)
      await running
    },
  }
}
