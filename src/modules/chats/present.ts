/** Chat rows → the API's chat list item shapes. Pure. */
import type { Static } from 'typebox'
import { iso } from '../../lib/time.js'
import type { Sight } from '../../policies/sight.js'
import { presentPeer, uploadUrl } from '../users/index.js'
import type { GroupItemRow, PersonalItemRow } from './repo.js'
import type { ChatListItem as ChatListItemSchema } from './schemas.js'

export type ChatListItem = Static<typeof ChatListItemSchema>

export const SAVED_MESSAGES = { username: 'saved_messages', display_name: 'Saved Messages' }

/** Messages past my read position, less the deleted-for-all ones among them. */
const unread = (row: { message_seq: number; my_read_seq: number; deleted_unread: unknown }) =>
  Math.max(0, row.message_seq - row.my_read_seq - Number(row.deleted_unread))

/** `sight`: what I may see of the peer (policies/sight.ts: their privacy, blocks either way). */
export function presentChatListItem(row: PersonalItemRow, meId: number, now: number, sight: Sight): ChatListItem {
  const isSaved = row.id === meId
  const peer = presentPeer(row, now, sight)
  const lastMessage =
    row.lm_id !== null && row.lm_deleted_for_all === 0
      ? {
          message_id: row.lm_id,
          content: row.lm_content ?? '',
          sender_id: row.lm_sender_id!,
          timestamp: iso(row.lm_created_at!),
          // read by the receiver: the peer for my messages, me for theirs
          is_read: isSaved || row.lm_seq! <= ((row.lm_sender_id === meId ? row.peer_read_seq : row.my_read_seq) ?? 0),
        }
      : null
  return {
    chat_id: row.chat_id,
    chat_type: 'personal',
    peer: isSaved ? { ...peer, ...SAVED_MESSAGES, is_online: false, last_seen: null } : peer,
    last_message: lastMessage,
    unread_count: isSaved ? 0 : unread(row),
    is_saved: isSaved,
  }
}

/** A group or channel item: its summary under `group` or `channel`, the last message with its sender's username. */
export function presentGroupListItem(row: GroupItemRow, meId: number): ChatListItem {
  const lastMessage =
    row.lm_id !== null && row.lm_deleted_for_all === 0
      ? {
          message_id: row.lm_id,
          content: row.lm_content ?? '',
          sender_id: row.lm_sender_id!,
          sender_username: row.lm_sender_username ?? '',
          timestamp: iso(row.lm_created_at!),
          // mine: read once any other member read it; theirs: read once my position passed it
          is_read: row.lm_sender_id === meId ? row.lm_read_at !== null : row.lm_seq! <= row.my_read_seq,
        }
      : null
  const summary = { name: row.title ?? '', avatar_url: uploadUrl(row.avatar) }
  return {
    chat_id: row.chat_id,
    chat_type: row.chat_type,
    ...(row.chat_type === 'channel'
      ? { channel: { channel_id: row.chat_id, ...summary, is_verified: row.is_verified === 1 } }
      : { group: { group_id: row.chat_id, ...summary } }),
    last_message: lastMessage,
    unread_count: unread(row),
    my_role: row.role,
    chat_seq: row.event_seq,
  }
}
