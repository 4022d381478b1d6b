/** Chat rows → the interface's chat list item shapes. Pure. */
import type { Static } from 'typebox'
import { iso } from '../../lib/time.js'
import { presentPeer } from '../users/present.js'
import type { PersonalItemRow } from './repo.js'
import type { ChatListItem as ChatListItemSchema } from './schemas.js'

export type ChatListItem = Static<typeof ChatListItemSchema>

export const SAVED_MESSAGES = { username: 'saved_messages', display_name: 'Saved Messages' }

export function presentChatListItem(row: PersonalItemRow, meId: number, now: number): ChatListItem {
  const isSaved = row.id === meId
  const peer = presentPeer(row, now)
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
    unread_count: isSaved ? 0 : Math.max(0, row.message_seq - row.my_read_seq - Number(row.deleted_unread)),
    is_saved: isSaved,
  }
}
