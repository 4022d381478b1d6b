/** Message rows → the V2 Message shape. Pure. */
import type { MessageRow } from '../../db/tables.js'
import { iso, isoOrNull } from '../../lib/time.js'
import { uploadUrl } from '../users/present.js'
import type { MessageView } from './schemas.js'

export interface Sender {
  username: string
  avatar: string | null
}

export function presentMessage(
  row: MessageRow,
  sender: Sender,
  isRead: boolean,
  reactions: Record<string, number> = {},
): MessageView {
  return {
    message_id: row.id,
    chat_id: row.chat_id,
    sender_id: row.sender_id,
    receiver_id: row.receiver_id,
    sender_username: sender.username,
    sender_avatar_url: uploadUrl(sender.avatar),
    content: row.content,
    reply_to_id: row.reply_to_id,
    forwarded_from: row.forwarded_from,
    file_path: row.file_path,
    file_url: uploadUrl(row.file_path),
    file_type: row.file_type,
    is_read: isRead,
    timestamp: iso(row.created_at),
    edited_at: isoOrNull(row.edited_at),
    is_encrypted: row.is_encrypted === 1,
    encrypted_content: row.encrypted_content,
    encryption_key_id: row.encryption_key_id,
    emoji: row.emoji,
    emoji_file: row.emoji_file,
    emoji_url: uploadUrl(row.emoji_file),
    emoji_size: row.emoji_size,
    emoji_count: row.emoji_count,
    reactions,
    client_message_id: row.client_message_id,
  }
}
