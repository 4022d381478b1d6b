/** Message rows → the API's message shapes (V2 and the richer helper variant). Pure. */
import type { Audience, MessageRow, ScheduledMessageRow } from '../../db/tables.js'
import { iso, isoOrNull } from '../../lib/time.js'
import { emojiUrl } from '../stickers/index.js'
import { avatarUrl } from '../users/index.js'
import { uploadUrl } from '../users/index.js'
import type { Draft } from './draft.js'
import { shapeJson } from '../../lib/shared-json.js'
import { MessageView, type RichMessageView } from './schemas.js'

/** Who sent a message; a user row is one. */
export interface Sender {
  username: string
  avatar: string | null
  privacy_avatar: Audience
}

/**
 * A message goes out once to every member, so it carries the sender's avatar only when the
 * sender shows it to everyone (the Peer shapes show it to the contacts their privacy allows).
 */
const senderAvatarUrl = (sender: Sender) => (sender.privacy_avatar === 'everyone' ? avatarUrl(sender.avatar) : null)

/**
 * Read by another member: read_at is stamped on the newly read range whenever a read position
 * moves, so it answers without looking at members. In Saved Messages everything is read.
 */
export function isRead(row: MessageRow): boolean {
  return row.read_at !== null || row.receiver_id === row.sender_id
}

export function presentMessage(row: MessageRow, sender: Sender, isRead: boolean, reactions: Record<string, number> = {}): MessageView {
  return {
    message_id: row.id,
    chat_id: row.chat_id,
    sender_id: row.sender_id,
    receiver_id: row.receiver_id,
    sender_username: sender.username,
    sender_avatar_url: senderAvatarUrl(sender),
    content: row.content,
    reply_to_id: row.reply_to_id,
    forwarded_from: row.forwarded_from,
    file_path: row.file_path,
    file_url: uploadUrl(row.file_path),
    file_type: row.file_type,
    is_read: isRead,
    read_at: isoOrNull(row.read_at),
    delivered_at: isoOrNull(row.delivered_at),
    timestamp: iso(row.created_at),
    edited_at: isoOrNull(row.edited_at),
    is_encrypted: row.is_encrypted === 1,
    encrypted_content: row.encrypted_content,
    encryption_key_id: row.encryption_key_id,
    emoji: row.emoji,
    emoji_file: row.emoji_file,
    emoji_url: emojiUrl(row.emoji_file),
    emoji_size: row.emoji_size,
    emoji_count: row.emoji_count,
    reactions,
    client_message_id: row.client_message_id,
    topic_id: row.topic_id,
    poll_id: row.poll_id,
    is_from_external: row.is_from_external === 1,
    external_message_id: row.external_message_id,
  }
}

/**
 * A message view's JSON text, as JSON.stringify writes it, made faster (lib/shared-json.ts
 * shapeJson): the fields presentMessage sets, in its order, the schema's required ones.
 */
export const messageJson = shapeJson<MessageView>(MessageView.required as (keyof MessageView & string)[])

/** What the replied-to message looks like in the richer shape. */
export interface ReplyPreview {
  content: string
  sender_name: string
}

/** how much of the replied-to message the richer shape quotes */
const REPLY_PREVIEW_CHARS = 50
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

/** The first `n` characters as a reader counts them: an emoji or flag is never cut in half. */
export function firstCharacters(text: string, n: number): string {
  if (text.length <= n) return text
  let end = 0
  let count = 0
  for (const { segment } of graphemes.segment(text)) {
    if (count++ === n) break
    end += segment.length
  }
  return text.slice(0, end)
}

/**
 * The richer helper variant: `id` instead of `message_id`, plus HH:MM (UTC), whether it is mine,
 * a preview of the replied-to message and, for attachments, size fields.
 */
export function presentRich(message: MessageView, row: MessageRow, meId: number, reply: ReplyPreview | null): RichMessageView {
  const { message_id: _pendingOnlyNull, ...rest } = message
  return {
    id: row.id,
    ...rest,
    timestamp_formatted: message.timestamp.slice(11, 16),
    is_own: row.sender_id === meId,
    reply_to_content: reply ? firstCharacters(reply.content, REPLY_PREVIEW_CHARS) : null,
    reply_to_sender: reply?.sender_name ?? null,
    has_attachment: row.file_path !== null,
    ...(row.file_path !== null
      ? {
          file_name: row.file_name,
          file_size: row.file_size,
          formatted_size: row.file_size === null ? null : formatSize(row.file_size),
          thumbnail_path: row.thumbnail_path,
          preview_size: row.preview_size ?? 'none',
        }
      : {}),
  }
}

/** 1536 → "1.5 KB". */
export function formatSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  const text = unit === 0 ? String(value) : value.toFixed(value < 10 ? 1 : 0).replace(/\.0$/, '')
  return `${text} ${units[unit]}`
}

/**
 * A scheduled (pending) message: the V2 shape with no message id yet (it gets one when sent, so a
 * pending id can never be taken for a delivered message's), its `scheduled_id` and `scheduled_at`.
 */
export function presentPending(row: ScheduledMessageRow, draft: Draft, sender: Sender, receiverId: number | null): MessageView {
  return {
    message_id: null,
    scheduled_id: row.id,
    chat_id: row.chat_id,
    sender_id: row.sender_id,
    receiver_id: receiverId,
    sender_username: sender.username,
    sender_avatar_url: senderAvatarUrl(sender),
    content: draft.content,
    reply_to_id: draft.reply_to_id,
    forwarded_from: null,
    file_path: draft.attachment?.file_path ?? null,
    file_url: uploadUrl(draft.attachment?.file_path ?? null),
    file_type: draft.attachment?.file_type ?? null,
    is_read: false,
    read_at: null,
    delivered_at: null,
    timestamp: iso(row.created_at),
    edited_at: null,
    is_encrypted: draft.is_encrypted,
    encrypted_content: draft.encrypted_content,
    encryption_key_id: draft.encryption_key_id,
    emoji: draft.emoji,
    emoji_file: draft.emoji_file,
    emoji_url: emojiUrl(draft.emoji_file),
    emoji_size: draft.emoji_size,
    emoji_count: draft.emoji_count,
    reactions: {},
    client_message_id: row.client_message_id,
    topic_id: draft.topic_id ?? null,
    poll_id: null,
    is_from_external: false,
    external_message_id: null,
    scheduled_at: iso(row.scheduled_at),
    is_scheduled: true,
  }
}
