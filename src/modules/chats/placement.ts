/**
 * Where a user keeps their chats: pinned at the top of the chat list (at most PIN_LIMIT, as
 * Telegram's five), or archived into a list of their own. Per user; only chats they are in.
 */
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { inTransaction } from '../../events/outbox.js'
import { validationError } from '../../http/errors.js'
import { iso } from '../../lib/time.js'
import * as repo from './repo.js'
import { requireMember } from './service.js'

export const PIN_LIMIT = 5

export type ChatType = 'personal' | 'group' | 'channel'

/** The chat, if I am in it and it is of the type named (a mismatch is a 400: the client is confused). */
async function myChat(ctx: AppContext, me: UserRow, chatType: ChatType, chatId: number) {
  const chat = await requireMember(ctx, me.id, chatId)
  if (chat.chat_type !== chatType) throw validationError(`chat_type: chat ${chatId} is a ${chat.chat_type} chat, not ${chatType}`)
  return chat
}

export async function pin(ctx: AppContext, me: UserRow, chatType: ChatType, chatId: number) {
  await myChat(ctx, me, chatType, chatId)
  await inTransaction(ctx, async (trx, events) => {
    await repo.lockUser(trx, me.id)
    const pins = await repo.listPinned(trx, me.id)
    if (pins.some((p) => p.chat_id === chatId)) return
    if (pins.length >= PIN_LIMIT) throw validationError(`You can pin at most ${PIN_LIMIT} chats: unpin one first`)
    // a pinned chat belongs to the main list
    await repo.unarchive(trx, me.id, chatId)
    await repo.pin(trx, me.id, chatId, events.now)
  })
  return pins(ctx, me)
}

export async function unpin(ctx: AppContext, me: UserRow, chatType: ChatType, chatId: number) {
  await myChat(ctx, me, chatType, chatId)
  await repo.unpin(ctx.db, me.id, chatId)
  return pins(ctx, me)
}

export async function pins(ctx: AppContext, me: UserRow) {
  return (await repo.listPinned(ctx.db, me.id)).map((p) => ({ chat_type: p.chat_type, chat_id: p.chat_id, pinned_at: iso(p.pinned_at) }))
}

export async function archive(ctx: AppContext, me: UserRow, chatType: ChatType, chatId: number) {
  await myChat(ctx, me, chatType, chatId)
  await inTransaction(ctx, async (trx, events) => {
    // an archived chat leaves the main list, pins included
    await repo.unpin(trx, me.id, chatId)
    await repo.archive(trx, me.id, chatId, events.now)
  })
  return { chat_type: chatType, chat_id: chatId, is_archived: true }
}

export async function unarchive(ctx: AppContext, me: UserRow, chatType: ChatType, chatId: number) {
  await myChat(ctx, me, chatType, chatId)
  await repo.unarchive(ctx.db, me.id, chatId)
  return { chat_type: chatType, chat_id: chatId, is_archived: false }
}
