/** The message fields a send carries, validated once and stored as sent (scheduled ones as JSON). */
import { validationError } from '../../http/errors.js'
import type { SendMessageBody } from './schemas.js'
import type { Attachment } from '../files/service.js'

export interface Draft {
  content: string
  reply_to_id: number | null
  is_encrypted: boolean
  encrypted_content: string | null
  encryption_key_id: string | null
  emoji: string | null
  emoji_file: string | null
  emoji_size: number | null
  emoji_count: number | null
  /** a forum topic of the group */
  topic_id: number | null
  /** an uploaded file (resolved by the send, never taken from the client as is) */
  attachment?: Attachment | null
}

/** 400 when there is nothing to send: no text, attachment, emoji or encrypted payload. */
export function draftFrom(input: SendMessageBody): Draft {
  const content = input.content ?? ''
  if (!content.trim() && !input.file_path && !input.emoji && !input.encrypted_content) {
    throw validationError('content must not be empty')
  }
  return {
    content,
    reply_to_id: input.reply_to_id ?? null,
    is_encrypted: input.is_encrypted ?? false,
    encrypted_content: input.encrypted_content ?? null,
    encryption_key_id: input.encryption_key_id ?? null,
    emoji: input.emoji ?? null,
    emoji_file: input.emoji_file ?? null,
    emoji_size: input.emoji_size ?? null,
    emoji_count: input.emoji_count ?? null,
    topic_id: input.topic_id ?? null,
  }
}
