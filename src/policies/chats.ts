/**
 * Who may do what in a chat. Pure.
 *
 * Ranks: owner > admin > member (a channel's members are subscribers). An action on another
 * member needs a rank strictly above theirs, so admins never touch the owner or other admins.
 * In a personal chat both members may post; nothing else applies there.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely'
import type { ChatRow, MessageRow } from '../db/tables.js'
import { col, operand, type Operand } from './sql.js'

export type Role = 'owner' | 'admin' | 'member' | 'subscriber'
export type Action =
  /** send a message (group) or publish a post (channel) */
  | 'post'
  /** add a user as a member (groups) */
  | 'add_member'
  /** remove a member (target: their role) */
  | 'remove_member'
  /** make a member an admin / an admin a member again (target: their role) */
  | 'promote'
  | 'demote'
  /** hand the owner role over */
  | 'transfer'
  /** title, avatar, forum mode */
  | 'edit_info'
  /** create and revoke invite links, and see a private chat's link */
  | 'invite_links'
  /** delete someone else's message for everyone (target: the sender's role) */
  | 'delete_others'
  /** create forum topics */
  | 'create_topic'
  /** see the member list of a private chat */
  | 'list_private_members'
  /** bind or unbind a discussion group */
  | 'bind'
  /** close a poll someone else made (target: its author's role) */
  | 'close_others_poll'

const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1, subscriber: 1 }
const rank = (role: string) => (Object.hasOwn(RANK, role) ? RANK[role as Role] : 0)

export function can(chat: Pick<ChatRow, 'chat_type'>, role: string | null | undefined, action: Action, target?: string): boolean {
  if (chat.chat_type === 'personal') return action === 'post'
  const mine = rank(role ?? '')
  if (mine === 0) return false
  const above = (other: string | undefined) => other !== undefined && mine > rank(other)
  switch (action) {
    case 'post':
      return chat.chat_type === 'group' || mine >= RANK.admin
    case 'add_member':
      return chat.chat_type === 'group' && mine >= RANK.admin
    case 'remove_member':
    case 'delete_others':
      return mine >= RANK.admin && above(target)
    case 'promote':
      return role === 'owner' && target !== undefined && rank(target) === RANK.member
    case 'demote':
      return role === 'owner' && target === 'admin'
    case 'transfer':
    case 'bind':
      return role === 'owner'
    case 'edit_info':
    case 'invite_links':
    case 'list_private_members':
    case 'close_others_poll':
      return mine >= RANK.admin
    case 'create_topic':
      return chat.chat_type === 'group' && mine >= RANK.admin
  }
}

/** A member's plain role in a chat of this type. */
export const memberRole = (chat: Pick<ChatRow, 'chat_type'>): Role => (chat.chat_type === 'channel' ? 'subscriber' : 'member')

/** Whether this role may post in the chat: anyone in a personal chat or a group, the owner and admins in a channel. */
export const mayPost = (chat: Pick<ChatRow, 'chat_type'>, role: string | null | undefined): boolean => can(chat, role, 'post')

/** Whether a message can be replied to from this chat: one of its own, not deleted for everyone. */
export const isReplyTarget = (original: Pick<MessageRow, 'chat_id' | 'deleted_for_all'> | undefined, chatId: number): boolean =>
  original !== undefined && original.chat_id === chatId && original.deleted_for_all !== 1

/** `isReplyTarget` for queries: the message `messageId` is a reply target from chat `chatId`. */
export const replyTarget = (messageId: Operand, chatId: Operand): RawBuilder<SqlBool> =>
  sql<SqlBool>`exists (select 1 from messages rt where rt.id = ${operand(messageId)} and rt.chat_id = ${operand(chatId)} and rt.deleted_for_all <> 1)`

/** The other member of a personal chat, for queries (the chat row under `alias`, the member `me`). */
export const otherPeer = (alias: string, me: Operand): RawBuilder<number> =>
  sql<number>`case when ${col(`${alias}.peer1_id`)} = ${operand(me)} then ${col(`${alias}.peer2_id`)} else ${col(`${alias}.peer1_id`)} end`
