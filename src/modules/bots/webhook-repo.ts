/** The SQL of bot webhooks: the webhook of a bot, and its delivery log (which is also the queue). */
import type { Insertable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { BotWebhookDeliveriesTable, BotWebhookDeliveryRow, BotWebhooksTable } from '../../db/tables.js'

export function findWebhook(db: Db, botId: number) {
  return db.selectFrom('bot_webhooks').selectAll().where('bot_id', '=', botId).executeTakeFirst()
}

/** Whether the bot has an active webhook (getUpdates answers 409 then). */
export async function hasActiveWebhook(db: Db, botId: number): Promise<boolean> {
  const row = await db.selectFrom('bot_webhooks').select('bot_id').where('bot_id', '=', botId).where('is_active', '=', 1).executeTakeFirst()
  return row !== undefined
}

export function upsertWebhook(db: Db, row: Insertable<BotWebhooksTable>) {
  const { bot_id: _botId, created_at: _createdAt, ...changes } = row
  return db
    .insertInto('bot_webhooks')
    .values(row)
    .onConflict((oc) => oc.column('bot_id').doUpdateSet(changes))
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function deleteWebhook(db: Db, botId: number) {
  await db.deleteFrom('bot_webhooks').where('bot_id', '=', botId).execute()
}

export async function recordWebhookError(db: Db, botId: number, at: number, message: string) {
  await db.updateTable('bot_webhooks').set({ last_error_at: at, last_error_message: message }).where('bot_id', '=', botId).execute()
}

export async function markVerified(db: Db, botId: number, at: number) {
  await db.updateTable('bot_webhooks').set({ verified_at: at }).where('bot_id', '=', botId).where('verified_at', 'is', null).execute()
}

// ---- deliveries

export function insertDelivery(db: Db, row: Insertable<BotWebhookDeliveriesTable>) {
  return db.insertInto('bot_webhook_deliveries').values(row).returning('id').executeTakeFirstOrThrow()
}

/** Update deliveries, once each: an update already moved into the log is skipped. */
export async function insertUpdateDeliveries(db: Db, rows: Insertable<BotWebhookDeliveriesTable>[]) {
  if (rows.length === 0) return
  await db
    .insertInto('bot_webhook_deliveries')
    .values(rows)
    .onConflict((oc) => oc.columns(['bot_id', 'update_id']).doNothing())
    .execute()
}

export function findDelivery(db: Db, botId: number, id: number) {
  return db.selectFrom('bot_webhook_deliveries').selectAll().where('bot_id', '=', botId).where('id', '=', id).executeTakeFirst()
}

/** A page of a bot's deliveries, newest first, with how many there are. */
export async function pageOfDeliveries(db: Db, botId: number, offset: number, limit: number) {
  const [items, total] = await Promise.all([
    db
      .selectFrom('bot_webhook_deliveries')
      .selectAll()
      .where('bot_id', '=', botId)
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute(),
    db
      .selectFrom('bot_webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('bot_id', '=', botId)
      .executeTakeFirstOrThrow(),
  ])
  return { items, total: Number(total.n) }
}

/** The work queue's kinds of webhooks: moving a bot's updates into its log (key: the bot), and a lane's deliveries (key: `bot:chat_key`). */
export const WEBHOOK_UPDATES_KIND = 'webhook-updates'
export const WEBHOOK_LANE_KIND = 'webhook'
export const laneKey = (botId: number, chatKey: string) => `${botId}:${chatKey}`

/** The bot's webhook if it is active, with the bot's allowed_updates (moving its updates into the log). */
export function activeWebhookOf(db: Db, botId: number) {
  return db
    .selectFrom('bot_webhooks as w')
    .innerJoin('bot_apps as b', 'b.bot_id', 'w.bot_id')
    .select(['w.bot_id', 'b.allowed_updates'])
    .where('w.bot_id', '=', botId)
    .where('w.is_active', '=', 1)
    .executeTakeFirst()
}

/** The chats (keys) of a bot with pending deliveries. */
export async function pendingLanes(db: Db, botId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('bot_webhook_deliveries')
    .select('chat_key')
    .distinct()
    .where('bot_id', '=', botId)
    .where('status', '=', 'pending')
    .execute()
  return rows.map((row) => row.chat_key)
}

export type DueDelivery = BotWebhookDeliveryRow & { url: string; secret: string; secret_token: string | null; verified_at: number | null }

/** The first pending delivery of a chat (its lane's head), if the bot's webhook is active. */
export function laneHead(db: Db, botId: number, chatKey: string): Promise<DueDelivery | undefined> {
  return db
    .selectFrom('bot_webhook_deliveries as d')
    .innerJoin('bot_webhooks as w', 'w.bot_id', 'd.bot_id')
    .selectAll('d')
    .select(['w.url', 'w.secret', 'w.secret_token', 'w.verified_at'])
    .where('w.is_active', '=', 1)
    .where('d.bot_id', '=', botId)
    .where('d.chat_key', '=', chatKey)
    .where('d.status', '=', 'pending')
    .orderBy('d.id')
    .limit(1)
    .executeTakeFirst()
}

/** The next pending delivery of a chat after `afterId` (the lane's new head). */
export function nextInLane(db: Db, botId: number, chatKey: string, afterId: number) {
  return db
    .selectFrom('bot_webhook_deliveries')
    .selectAll()
    .where('bot_id', '=', botId)
    .where('chat_key', '=', chatKey)
    .where('status', '=', 'pending')
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst()
}

export async function markDelivered(db: Db, id: number, statusCode: number, at: number) {
  await db
    .updateTable('bot_webhook_deliveries')
    .set((eb) => ({
      status: 'delivered',
      attempts: eb('attempts', '+', 1),
      last_status_code: statusCode,
      last_error: null,
      delivered_at: at,
    }))
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute()
}

/** A failed attempt: tried again at `nextAt`, or given up (`failed`) when nextAt is null. */
export async function markAttemptFailed(db: Db, id: number, statusCode: number | null, error: string, nextAt: number | null) {
  await db
    .updateTable('bot_webhook_deliveries')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      last_status_code: statusCode,
      last_error: error,
      ...(nextAt === null ? { status: 'failed' as const } : { next_attempt_at: nextAt }),
    }))
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute()
}

/** Pending update deliveries of a bot, oldest first (deleteWebhook hands them back to getUpdates). */
export function pendingUpdateDeliveries(db: Db, botId: number) {
  return db
    .selectFrom('bot_webhook_deliveries')
    .select(['id', 'update_id', 'payload', 'created_at'])
    .where('bot_id', '=', botId)
    .where('kind', '=', 'update')
    .where('status', '=', 'pending')
    .orderBy('id')
    .execute()
}

export async function deletePendingUpdateDeliveries(db: Db, botId: number) {
  await db
    .deleteFrom('bot_webhook_deliveries')
    .where('bot_id', '=', botId)
    .where('kind', '=', 'update')
    .where('status', '=', 'pending')
    .execute()
}

export async function countPendingUpdateDeliveries(db: Db, botId: number): Promise<number> {
  const row = await db
    .selectFrom('bot_webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('bot_id', '=', botId)
    .where('kind', '=', 'update')
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
