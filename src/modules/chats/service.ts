/** Chats and their members: personal chats (this module), groups and channels (#4). */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { ChatRow, UserRow } from '../../db/tables.js'
import { notFound } from '../../http/errors.js'
import * as users from '../users/service.js'
import { presentChatListItem, type ChatListItem } from './present.js'
import * as repo from './repo.js'

export type MemberChat = ChatRow & { role: string; read_seq: number; read_at: number | null }

/** The personal chat of two users, if it exists (either order). */
export function findPersonal(db: Db, a: number, b: number) {
  return a < b ? repo.findPersonal(db, a, b) : repo.findPersonal(db, b, a)
}

/** The other member of a personal chat (`me` for Saved Messages); null for groups and channels. */
export function otherMember(chat: ChatRow, me: number): number | null {
  if (chat.chat_type !== 'personal') return null
  return chat.peer1_id === me ? chat.peer2_id : chat.peer1_id
}

/** Who gets a chat's events: a personal chat names its two members on the row itself. */
export async function audience(db: Db, chat: ChatRow): Promise<number[]> {
  if (chat.chat_type === 'personal') return [...new Set([chat.peer1_id!, chat.peer2_id!])]
  return (await repo.memberIds(db, chat.id)).map((m) => m.user_id)
}

/** The personal chat of two users (Saved Messages when they are the same), created on first use. */
export async function getOrCreatePersonal(ctx: AppContext, me: UserRow, otherId: number): Promise<ChatRow> {
  if (otherId !== me.id) {
    const other = await users.findById(ctx, otherId)
    if (!other || other.is_active !== 1 || other.deleted_at !== null) throw notFound('User not found')
  }
  const [peer1, peer2] = me.id < otherId ? [me.id, otherId] : [otherId, me.id]
  const existing = await repo.findPersonal(ctx.db, peer1, peer2)
  if (existing) return existing
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const chat = await repo.insertPersonal(trx, peer1, peer2, ctx.clock.now())
      await repo.insertMembers(trx, chat.id, peer1 === peer2 ? [peer1] : [peer1, peer2], chat.created_at)
      return chat
    })
  } catch (error) {
    // Both users opened the chat at the same moment: the unique pair index picked one.
    if (!isUniqueViolation(error)) throw error
    const chat = await repo.findPersonal(ctx.db, peer1, peer2)
    if (!chat) throw error
    return chat
  }
}

/** The chat if the user is a member; 404 otherwise (outsiders cannot tell it exists). */
export async function requireMember(ctx: AppContext, userId: number, chatId: number, db: Db = ctx.db): Promise<MemberChat> {
  const chat = await repo.findForMember(db, chatId, userId)
  if (!chat) throw notFound('Chat not found')
  return chat
}

/** A member's unread count in a chat (deleted-for-all messages excluded). */
export const unreadCount = repo.unreadCount

/** Everyone the user has a personal chat with: who hears about their presence. */
export const personalPeers = repo.personalPeers

/** Moves a member's read position forward (never back); whether it moved. */
export const advanceRead = repo.advanceRead

/** After a delete for everyone: the chat's last message becomes its newest visible one. */
export const refreshLastMessage = repo.refreshLastMessage

/** Inside a send's transaction: the chat's next message seq, and the chat's new last activity. */
export const nextMessageSeq = repo.nextMessageSeq

/** Inside a send's transaction: records the new last message, lifts the chat in every member's list; the sender has read up to it. */
export async function afterMessage(db: Db, chatId: number, messageId: number, senderId: number, seq: number, now: number) {
  await repo.setLastMessage(db, chatId, messageId)
  await repo.touchMembers(db, chatId, senderId, seq, now)
}

export async function createPersonal(ctx: AppContext, me: UserRow, otherId: number): Promise<ChatListItem> {
  const chat = await getOrCreatePersonal(ctx, me, otherId)
  const item = await repo.findPersonalItem(ctx.db, me.id, chat.id)
  if (!item) throw notFound('Chat not found')
  return presentChatListItem(item, me.id, ctx.clock.now())
}

/** The user's chat list, most recent activity first; Saved Messages is always there. */
export async function list(ctx: AppContext, me: UserRow, page: number, perPage: number) {
  await getOrCreatePersonal(ctx, me, me.id)
  const { rows, total } = await repo.listPersonal(ctx.db, me.id, page, perPage)
  const now = ctx.clock.now()
  return { items: rows.map((row) => presentChatListItem(row, me.id, now)), total }
}
