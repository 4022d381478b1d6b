/** The bots module's SQL: bot apps, their commands, their pending updates and the markup of their messages. */
import type { Db } from '../../db/database.js'
import type { BotAppsTable, BotCommandRow } from '../../db/tables.js'
import type { Insertable } from 'kysely'

export function insertApp(db: Db, app: Insertable<BotAppsTable>) {
  return db.insertInto('bot_apps').values(app).returningAll().executeTakeFirstOrThrow()
}

export function findApp(db: Db, botId: number) {
  return db.selectFrom('bot_apps').selectAll().where('bot_id', '=', botId).executeTakeFirst()
}

/** Which of these user ids are bots (have a bot app). */
export async function botIdsAmong(db: Db, userIds: readonly number[]): Promise<Set<number>> {
  if (userIds.length === 0) return new Set()
  const rows = await db.selectFrom('bot_apps').select('bot_id').where('bot_id', 'in', userIds).execute()
  return new Set(rows.map((r) => r.bot_id))
}

/** A bot app with its user's fields (for getMe and authentication). */
export function findAppWithUser(db: Db, botId: number) {
  return db
    .selectFrom('bot_apps as b')
    .innerJoin('users as u', 'u.id', 'b.bot_id')
    .selectAll('b')
    .select(['u.username', 'u.display_name', 'u.is_active', 'u.deleted_at'])
    .where('b.bot_id', '=', botId)
    .executeTakeFirst()
}

export function listByOwner(db: Db, ownerId: number) {
  return db
    .selectFrom('bot_apps as b')
    .innerJoin('users as u', 'u.id', 'b.bot_id')
    .selectAll('b')
    .select(['u.username'])
    .where('b.owner_id', '=', ownerId)
    .orderBy('b.bot_id')
    .execute()
}

/** Deactivates every bot of an owner (their accounts and webhooks); answers how many bots. */
export async function deactivateAllOfOwner(db: Db, ownerId: number): Promise<number> {
  const bots = db.selectFrom('bot_apps').select('bot_id').where('owner_id', '=', ownerId)
  const result = await db.updateTable('users').set({ is_active: 0 }).where('id', 'in', bots).where('is_active', '=', 1).executeTakeFirst()
  await db.updateTable('bot_webhooks').set({ is_active: 0 }).where('bot_id', 'in', bots).execute()
  return Number(result.numUpdatedRows)
}

export async function countByOwner(db: Db, ownerId: number): Promise<number> {
  const row = await db
    .selectFrom('bot_apps')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function setTokenHash(db: Db, botId: number, tokenHash: string, now: number) {
  await db.updateTable('bot_apps').set({ token_hash: tokenHash, updated_at: now }).where('bot_id', '=', botId).execute()
}

export async function setAllowedUpdates(db: Db, botId: number, allowed: string[], now: number) {
  await db
    .updateTable('bot_apps')
    .set({ allowed_updates: JSON.stringify(allowed), updated_at: now })
    .where('bot_id', '=', botId)
    .execute()
}

// ---- commands

export function listCommands(db: Db, botId: number): Promise<BotCommandRow[]> {
  return db.selectFrom('bot_commands').selectAll().where('bot_id', '=', botId).orderBy('position').orderBy('command').execute()
}

export function findCommand(db: Db, botId: number, command: string) {
  return db.selectFrom('bot_commands').select('command').where('bot_id', '=', botId).where('command', '=', command).executeTakeFirst()
}

/** Defines a command (placed at `position`) or updates its description and handler (keeping its place). */
export function upsertCommand(
  db: Db,
  row: { bot_id: number; command: string; description: string; handler: string | null; position: number; now: number },
) {
  return db
    .insertInto('bot_commands')
    .values({
      bot_id: row.bot_id,
      command: row.command,
      description: row.description,
      handler: row.handler,
      position: row.position,
      created_at: row.now,
      updated_at: row.now,
    })
    .onConflict((oc) =>
      oc.columns(['bot_id', 'command']).doUpdateSet({ description: row.description, handler: row.handler, updated_at: row.now }),
    )
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function nextCommandPosition(db: Db, botId: number): Promise<number> {
  const row = await db
    .selectFrom('bot_commands')
    .select((eb) => eb.fn.max('position').as('top'))
    .where('bot_id', '=', botId)
    .executeTakeFirst()
  return row?.top === null || row?.top === undefined ? 0 : Number(row.top) + 1
}

export async function deleteCommands(db: Db, botId: number) {
  await db.deleteFrom('bot_commands').where('bot_id', '=', botId).execute()
}

// ---- updates

/**
 * The bot's next update id (or the last of the next `count`): an atomic increment, which
 * serializes concurrent writers on both dialects.
 */
export async function nextUpdateId(db: Db, botId: number, count = 1): Promise<number> {
  const row = await db
    .updateTable('bot_apps')
    .set((eb) => ({ last_update_id: eb('last_update_id', '+', count) }))
    .where('bot_id', '=', botId)
    .returning('last_update_id')
    .executeTakeFirstOrThrow()
  return Number(row.last_update_id)
}

export async function insertUpdate(
  db: Db,
  row: { bot_id: number; update_id: number; kind: string; message_id: number | null; payload: unknown; now: number },
) {
  await db
    .insertInto('bot_updates')
    .values({
      bot_id: row.bot_id,
      update_id: row.update_id,
      kind: row.kind,
      message_id: row.message_id,
      payload: JSON.stringify(row.payload),
      created_at: row.now,
    })
    .execute()
}

/** Several updates in one statement; one whose message already made an update is skipped. */
export async function insertUpdates(
  db: Db,
  rows: { bot_id: number; update_id: number; kind: string; message_id: number | null; payload: unknown; now: number }[],
) {
  await db
    .insertInto('bot_updates')
    .values(
      rows.map((row) => ({
        bot_id: row.bot_id,
        update_id: row.update_id,
        kind: row.kind,
        message_id: row.message_id,
        payload: JSON.stringify(row.payload),
        created_at: row.now,
      })),
    )
    .onConflict((oc) => oc.columns(['bot_id', 'message_id']).doNothing())
    .execute()
}

export async function hasUpdateFor(db: Db, botId: number, messageId: number): Promise<boolean> {
  const row = await db
    .selectFrom('bot_updates')
    .select('update_id')
    .where('bot_id', '=', botId)
    .where('message_id', '=', messageId)
    .executeTakeFirst()
  return row !== undefined
}

/** Acknowledges every update below `offset` (getUpdates' offset): they are gone. */
export async function deleteUpdatesBefore(db: Db, botId: number, offset: number) {
  await db.deleteFrom('bot_updates').where('bot_id', '=', botId).where('update_id', '<', offset).execute()
}

export async function deleteAllUpdates(db: Db, botId: number) {
  await db.deleteFrom('bot_updates').where('bot_id', '=', botId).execute()
}

/** Pending updates from `fromId` on, oldest first (the primary key's order). */
export function listUpdates(db: Db, botId: number, fromId: number, limit: number, kinds: readonly string[] | null) {
  let query = db.selectFrom('bot_updates').selectAll().where('bot_id', '=', botId).where('update_id', '>=', fromId)
  if (kinds) query = query.where('kind', 'in', kinds)
  return query.orderBy('update_id').limit(limit).execute()
}

/** The newest `count` pending updates (a negative offset), oldest first. */
export async function listLastUpdates(db: Db, botId: number, count: number, kinds: readonly string[] | null) {
  let query = db.selectFrom('bot_updates').selectAll().where('bot_id', '=', botId)
  if (kinds) query = query.where('kind', 'in', kinds)
  const rows = await query.orderBy('update_id', 'desc').limit(count).execute()
  return rows.reverse()
}

export async function countUpdates(db: Db, botId: number): Promise<number> {
  const row = await db
    .selectFrom('bot_updates')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('bot_id', '=', botId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

// ---- markup

export async function insertMarkup(db: Db, messageId: number, botId: number, markup: unknown) {
  await db
    .insertInto('bot_message_markup')
    .values({ message_id: messageId, bot_id: botId, reply_markup: JSON.stringify(markup) })
    .execute()
}

export function findMarkup(db: Db, messageId: number) {
  return db.selectFrom('bot_message_markup').selectAll().where('message_id', '=', messageId).executeTakeFirst()
}

/** editMessageText: the new keyboard, or none (Telegram drops the keyboard an edit does not repeat). */
export async function replaceMarkup(db: Db, messageId: number, botId: number, markup: unknown) {
  await db.deleteFrom('bot_message_markup').where('message_id', '=', messageId).execute()
  if (markup !== undefined) await insertMarkup(db, messageId, botId, markup)
}

// ---- groups

/** The bots among a group's members (a group command goes to them). */
export async function botMembersOf(db: Db, chatId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('chat_members as cm')
    .innerJoin('bot_apps as b', 'b.bot_id', 'cm.user_id')
    .select('b.bot_id')
    .where('cm.chat_id', '=', chatId)
    .execute()
  return rows.map((r) => r.bot_id)
}

export async function isMember(db: Db, chatId: number, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('chat_members')
    .select('user_id')
    .where('chat_id', '=', chatId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return row !== undefined
}

// ---- callback queries

export async function insertCallbackQuery(
  db: Db,
  row: { id: string; bot_id: number; user_id: number; message_id: number; chat_id: number; data: string; created_at: number },
) {
  await db
    .insertInto('bot_callback_queries')
    .values({ ...row, answered_at: null })
    .execute()
}

export function findCallbackQuery(db: Db, botId: number, id: string) {
  return db.selectFrom('bot_callback_queries').selectAll().where('id', '=', id).where('bot_id', '=', botId).executeTakeFirst()
}

/** Marks the query answered; false when it already was (a query is answered once). */
export async function markCallbackAnswered(db: Db, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('bot_callback_queries')
    .set({ answered_at: now })
    .where('id', '=', id)
    .where('answered_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function deleteCallbackQueriesBefore(db: Db, before: number) {
  await db.deleteFrom('bot_callback_queries').where('created_at', '<', before).execute()
}

// ---- bridges

/** A message this bot bridged into this chat under this external id, if any. */
export function findExternal(db: Db, chatId: number, botId: number, externalId: string) {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('chat_id', '=', chatId)
    .where('sender_id', '=', botId)
    .where('external_message_id', '=', externalId)
    .executeTakeFirst()
}
