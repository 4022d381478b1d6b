/** Chats and their members: personal chats (this module), groups and channels (modules/groups, modules/channels). */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { ChatRow, UserRow } from '../../db/tables.js'
import { forbidden, notFound, validationError } from '../../http/errors.js'
import * as blocks from '../../policies/blocks.js'
import { seer, type Seer } from '../../policies/sight.js'
import * as users from '../users/index.js'
import { presentChatListItem, presentGroupListItem, type ChatListItem } from './present.js'
import * as repo from './repo.js'
import { isUsable } from '../../policies/accounts.js'

export type MemberChat = ChatRow & { role: string; read_seq: number; read_at: number | null }
/** A chat the user may read: as a member, or (role null) a public group or channel they are not in. */
export type ReaderChat = ChatRow & { role: string | null; read_seq: number | null; read_at: number | null }

/** The personal chat of two users, if it exists (either order). */
export function findPersonal(db: Db, a: number, b: number) {
  return a < b ? repo.findPersonal(db, a, b) : repo.findPersonal(db, b, a)
}

/** Any chat by id, for the platform's own work (moderation): no membership is asked. */
export const findChat = (db: Db, chatId: number) => repo.findById(db, chatId)

/**
 * The personal chat of two different users inside the caller's transaction, created if missing
 * (the platform writing to many users at once: a broadcast). A concurrent creation by the users
 * themselves fails the caller's transaction on the unique pair index; its retry finds the chat.
 */
export async function personalIn(db: Db, a: number, b: number, now: number): Promise<ChatRow> {
  const [peer1, peer2] = a < b ? [a, b] : [b, a]
  const existing = await repo.findPersonal(db, peer1, peer2)
  if (existing) return existing
  const chat = await repo.insertPersonal(db, peer1, peer2, now)
  await repo.insertPersonalMembers(db, chat.id, [peer1, peer2], now)
  return { ...chat, member_count: 2, join_seq: 2 }
}

/** The other member of a personal chat (`me` for Saved Messages); null for groups and channels. */
export function otherMember(chat: ChatRow, me: number): number | null {
  if (chat.chat_type !== 'personal') return null
  return chat.peer1_id === me ? chat.peer2_id : chat.peer1_id
}

/** Whom a personal chat of mine is with (myself for Saved Messages); null for any other chat. */
export async function personalPeer(ctx: AppContext, chatId: number, me: number): Promise<number | null> {
  const chat = await repo.findById(ctx.db, chatId)
  return chat?.chat_type === 'personal' ? (otherMember(chat, me) ?? me) : null
}

/** The personal chat of two users (Saved Messages when they are the same), created on first use. */
export async function getOrCreatePersonal(ctx: AppContext, me: UserRow, otherId: number): Promise<ChatRow> {
  if (otherId !== me.id) {
    const other = await users.findById(ctx, otherId)
    if (!other || !isUsable(other)) throw notFound('User not found')
  }
  const [peer1, peer2] = me.id < otherId ? [me.id, otherId] : [otherId, me.id]
  const existing = await repo.findPersonal(ctx.db, peer1, peer2)
  if (existing) return existing
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const chat = await repo.insertPersonal(trx, peer1, peer2, ctx.clock.now())
      await repo.insertPersonalMembers(trx, chat.id, peer1 === peer2 ? [peer1] : [peer1, peer2], chat.created_at)
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

/**
 * The chat if the user is a member. Otherwise 404 when they cannot see it (a personal chat of
 * others, a private group or channel: outsiders cannot tell it exists), and 403 for a public group
 * or channel, which they can see but must join first.
 */
export async function requireMember(ctx: AppContext, userId: number, chatId: number, db: Db = ctx.db): Promise<MemberChat> {
  const chat = await repo.findForMember(db, chatId, userId)
  if (chat) return chat
  const visible = await repo.findById(db, chatId)
  if (visible && visible.chat_type !== 'personal' && visible.is_public === 1) {
    throw forbidden(`Only members can do this: join the ${visible.chat_type} first`)
  }
  throw notFound('Chat not found')
}

/**
 * The chat if the user may read it: a member, or anyone for a public group or channel (like a
 * public Telegram channel's preview). 404 otherwise.
 */
export async function requireReader(ctx: AppContext, userId: number, chatId: number): Promise<ReaderChat> {
  const member = await repo.findForMember(ctx.db, chatId, userId)
  if (member) return member
  const chat = await repo.findById(ctx.db, chatId)
  if (!chat || chat.chat_type === 'personal' || chat.is_public !== 1) throw notFound('Chat not found')
  return { ...chat, role: null, read_seq: null, read_at: null }
}

/** 400 unless the topic is one of this group's. */
export async function assertTopic(db: Db, chat: ChatRow, topicId: number) {
  if (!(await repo.topicInChat(db, topicId, chat.id))) throw validationError('topic_id must be a topic of this group')
}

/**
 * Inside a send's transaction: records the new last message; the sender has read up to it. A
 * personal chat also moves to the top of both members' lists (their member rows); a group's or
 * channel's place in the list is its own last_message_at, so nothing is written per member.
 */
export async function afterMessage(db: Db, chat: ChatRow, messageId: number, senderId: number, seq: number, now: number) {
  await repo.setLastMessage(db, chat.id, messageId)
  if (chat.chat_type === 'personal') await repo.touchMembers(db, chat.id, senderId, seq, now)
  else await repo.advanceRead(db, chat.id, senderId, seq, now)
}

export async function createPersonal(ctx: AppContext, me: UserRow, otherId: number): Promise<ChatListItem> {
  const chat = await getOrCreatePersonal(ctx, me, otherId)
  const item = await repo.findPersonalItem(ctx.db, me.id, chat.id)
  if (!item) throw notFound('Chat not found')
  const see = await seer(ctx.db, me.id, [item], await blocks.blockedAround(ctx.db, me.id))
  return presentChatListItem(item, me.id, ctx.clock.now(), see(item))
}

/**
 * The user's chat list, most recent activity first; Saved Messages is always there. Personal
 * chats come from the member activity index (O(page)); groups and channels from their own last
 * message time, over the user's group and channel memberships; the two are merged. The main list
 * starts with the pinned chats (most recently pinned first) and leaves out archived ones;
 * `archived` lists only those.
 */
export async function list(ctx: AppContext, me: UserRow, page: number, perPage: number, view: repo.ListView = 'main') {
  await getOrCreatePersonal(ctx, me, me.id)
  const upTo = page * perPage
  const now = ctx.clock.now()
  // what I see of each peer: their privacy settings, and no presence across a block either way
  const blocked = await blocks.blockedAround(ctx.db, me.id)
  const seePeers = (rows: repo.PersonalItemRow[]) => seer(ctx.db, me.id, rows, blocked)
  const pinned = view === 'main' ? await pinnedEntries(ctx, me, seePeers, now) : []
  const rest = Math.max(0, upTo - pinned.length)
  const groups = await repo.listGroups(ctx.db, me.id, rest, view)
  if (groups.total === 0 && pinned.length === 0) {
    const { rows, total } = await repo.listPersonal(ctx.db, me.id, page, perPage, view)
    const see = await seePeers(rows)
    return { items: rows.map((row) => presentChatListItem(row, me.id, now, see(row))), total }
  }
  const personal = await repo.listPersonal(ctx.db, me.id, 1, rest, view)
  const see = await seePeers(personal.rows)
  const personalItem = (row: repo.PersonalItemRow) => presentChatListItem(row, me.id, now, see(row))
  const merged = [
    ...personal.rows.map((row) => ({ at: row.my_activity_at ?? 0, id: row.chat_id, item: () => personalItem(row) })),
    ...groups.rows.map((row) => ({ at: row.activity_at, id: row.chat_id, item: () => presentGroupListItem(row, me.id) })),
  ].sort((a, b) => b.at - a.at || b.id - a.id)
  const items = [...pinned, ...merged].slice(upTo - perPage, upTo).map((entry) => entry.item())
  return { items, total: pinned.length + personal.total + groups.total }
}

/** The pinned chats' list items, in pin order. */
async function pinnedEntries(ctx: AppContext, me: UserRow, seePeers: (rows: repo.PersonalItemRow[]) => Promise<Seer>, now: number) {
  const pins = await repo.listPinned(ctx.db, me.id)
  if (pins.length === 0) return []
  const groupIds = pins.filter((p) => p.chat_type !== 'personal').map((p) => p.chat_id)
  const groupRows = new Map(
    groupIds.length
      ? (await repo.listGroups(ctx.db, me.id, groupIds.length, { chatIds: groupIds })).rows.map((row) => [row.chat_id, row])
      : [],
  )
  const personalRows = new Map<number, repo.PersonalItemRow>()
  for (const pin of pins) {
    if (pin.chat_type !== 'personal') continue
    const row = await repo.findPersonalItem(ctx.db, me.id, pin.chat_id)
    if (row) personalRows.set(pin.chat_id, row)
  }
  const see = await seePeers([...personalRows.values()])
  const entries: { item: () => ChatListItem }[] = []
  for (const pin of pins) {
    if (pin.chat_type === 'personal') {
      const row = personalRows.get(pin.chat_id)
      if (row) entries.push({ item: () => presentChatListItem(row, me.id, now, see(row)) })
    } else {
      const row = groupRows.get(pin.chat_id)
      if (row) entries.push({ item: () => presentGroupListItem(row, me.id) })
    }
  }
  return entries
}
