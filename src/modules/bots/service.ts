/**
 * Bot apps: a bot is a user (is_bot, no password) owned by the user who registered it;
 * its token `<bot_id>:<secret>` is shown once and stored as SHA-256. Commands it answers are
 * defined here (and by the Bot API's setMyCommands).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import { isUniqueViolation } from '../../db/errors.js'
import { fromJson } from '../../db/json.js'
import type { BotAppRow, BotCommandRow, UserRow } from '../../db/tables.js'
import { conflict, forbidden, notFound } from '../../http/errors.js'
import { hashToken } from '../../lib/tokens.js'
import { iso } from '../../lib/time.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'
import type { BotView, CommandBody, CommandView, RegisterBotBody } from './schemas.js'
import { isUsable } from '../../policies/accounts.js'

/** How many bots one user may own. */
export const MAX_BOTS_PER_OWNER = 20

const newBotToken = (botId: number) => `${botId}:${randomBytes(32).toString('base64url')}`

export const allowedCommandsOf = (app: Pick<BotAppRow, 'allowed_commands'>): string[] => {
  const list = fromJson<unknown>(app.allowed_commands)
  return Array.isArray(list) ? list.filter((c): c is string => typeof c === 'string') : []
}

export function presentBot(app: BotAppRow & { username: string }): BotView {
  return {
    bot_id: app.bot_id,
    username: app.username,
    name: app.name,
    description: app.description,
    allowed_commands: allowedCommandsOf(app),
    created_at: iso(app.created_at),
  }
}

export const presentCommand = (row: BotCommandRow): CommandView => ({
  bot_id: row.bot_id,
  command: row.command,
  description: row.description,
  handler: row.handler,
  updated_at: iso(row.updated_at),
})

/** Registers a bot owned by `me`: its account and app in one transaction; the token is in the answer only. */
export async function register(ctx: AppContext, me: UserRow, input: RegisterBotBody) {
  if (me.is_bot === 1) throw forbidden('A bot cannot register bots')
  const now = ctx.clock.now()
  try {
    const { app, user, token } = await ctx.db.transaction().execute(async (trx) => {
      // the owner's registrations take turns, so two at the 20th cannot both pass
      await users.lockUser(trx, me.id)
      if ((await repo.countByOwner(trx, me.id)) >= MAX_BOTS_PER_OWNER) {
        throw conflict(`You already have ${MAX_BOTS_PER_OWNER} bots, the most one account may own: delete one first`)
      }
      const user = await users.insertBotAccount(trx, {
        username: input.username,
        displayName: input.name.trim() || input.username,
        bio: input.description ?? '',
        now,
      })
      const token = newBotToken(user.id)
      const app = await repo.insertApp(trx, {
        bot_id: user.id,
        owner_id: me.id,
        name: input.name,
        description: input.description ?? '',
        allowed_commands: JSON.stringify([...new Set(input.allowed_commands ?? [])]),
        token_hash: hashToken(token),
        created_at: now,
        updated_at: now,
      })
      return { app, user, token }
    })
    return { ...presentBot({ ...app, username: user.username }), token }
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('This username is taken')
    throw error
  }
}

/** A bot of mine; 404 for a bot that is not (or not mine), so others' bot ids cannot be probed. */
export async function ownBot(ctx: AppContext, me: UserRow, botId: number) {
  const app = await repo.findAppWithUser(ctx.db, botId)
  if (!app || app.owner_id !== me.id) throw notFound('Bot not found')
  return app
}

/** A new token for my bot; the old one stops working at once. */
export async function regenerateToken(ctx: AppContext, me: UserRow, botId: number) {
  await ownBot(ctx, me, botId)
  const token = newBotToken(botId)
  await repo.setTokenHash(ctx.db, botId, hashToken(token), ctx.clock.now())
  return { bot_id: botId, token }
}

export async function listMine(ctx: AppContext, me: UserRow): Promise<BotView[]> {
  return (await repo.listByOwner(ctx.db, me.id)).map(presentBot)
}

/** Defines a command of my bot, or updates its description and handler. */
export async function defineCommand(ctx: AppContext, me: UserRow, botId: number, input: CommandBody): Promise<CommandView> {
  await ownBot(ctx, me, botId)
  const position = await repo.nextCommandPosition(ctx.db, botId)
  const row = await repo.upsertCommand(ctx.db, {
    bot_id: botId,
    command: input.command,
    description: input.description,
    handler: input.handler ?? null,
    position,
    now: ctx.clock.now(),
  })
  return presentCommand(row)
}

export type AuthBot = NonNullable<Awaited<ReturnType<typeof repo.findAppWithUser>>>

const TOKEN_SHAPE = /^([1-9][0-9]{0,15}):([A-Za-z0-9_-]{16,128})$/

/** The bot a Bot API token belongs to, or null (malformed, unknown, replaced, or its account gone). */
export async function authenticateToken(ctx: AppContext, token: string): Promise<AuthBot | null> {
  const match = TOKEN_SHAPE.exec(token)
  if (!match) return null
  const botId = Number(match[1])
  if (!Number.isSafeInteger(botId)) return null
  const app = await repo.findAppWithUser(ctx.db, botId)
  if (!app || !isUsable(app)) return null
  const given = Buffer.from(hashToken(token), 'hex')
  const stored = Buffer.from(app.token_hash, 'hex')
  return given.length === stored.length && timingSafeEqual(given, stored) ? app : null
}

/**
 * An owner's account is deleted: their bots stop, inside the caller's transaction. Their tokens
 * no longer authenticate and their webhooks are paused; what they sent stays in its chats.
 */
export const retireBotsOf = (db: Db, ownerId: number) => repo.deactivateAllOfOwner(db, ownerId)

/** setMyCommands: the bot's whole command list replaced. */
export async function replaceCommands(ctx: AppContext, botId: number, commands: { command: string; description: string }[]) {
  const now = ctx.clock.now()
  await ctx.db.transaction().execute(async (trx) => {
    await repo.deleteCommands(trx, botId)
    for (const [position, c] of commands.entries()) {
      await repo.upsertCommand(trx, { bot_id: botId, command: c.command, description: c.description, handler: null, position, now })
    }
  })
}

export const listCommands = (ctx: AppContext, botId: number) => repo.listCommands(ctx.db, botId)
