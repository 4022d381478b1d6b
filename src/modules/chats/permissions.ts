/**
 * Who may do what in a group or channel: the permission table of the README, in code. Pure.
 *
 * Ranks: owner > admin > member (a channel's members are subscribers). An action on another
 * member needs a rank strictly above theirs, so admins never touch the owner or other admins.
 */
import type { ChatRow } from '../../db/tables.js'

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
  /** create and revoke invite links */
  | 'invite_links'
  /** delete someone else's message for everyone (target: the sender's role) */
  | 'delete_others'
  /** create forum topics */
  | 'create_topic'
  /** see the member list of a private chat */
  | 'list_private_members'
  /** bind or unbind a discussion group */
  | 'bind'

const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1, subscriber: 1 }
const rank = (role: string) => (Object.hasOwn(RANK, role) ? RANK[role as Role] : 0)

export function can(chat: Pick<ChatRow, 'chat_type'>, role: string, action: Action, target?: string): boolean {
  const mine = rank(role)
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
      return mine >= RANK.admin
    case 'create_topic':
      return chat.chat_type === 'group' && mine >= RANK.admin
  }
}

/** A member's plain role in a chat of this type. */
export const memberRole = (chat: Pick<ChatRow, 'chat_type'>): Role => (chat.chat_type === 'channel' ? 'subscriber' : 'member')
